// SPDX-License-Identifier: GPL-2.0-only
/// Convert a `struct page *` member `fld` of struct `sname` to `struct slab *slab`.
///
/// For a structure that records which slab something belongs to (SLUB's
/// struct detached_freelist): the member becomes `struct slab *slab` and
/// every access through a `struct sname` or `struct sname *` follows:
///   P->fld = NULL, !P->fld, P->fld == NULL  -> the same on P->slab
///   P->fld = E                  -> P->slab = page_slab(E)
///   P->fld == E, P->fld != E    -> P->slab == page_slab(E) (and !=)
///   any other read of P->fld    -> slab_page(P->slab)
/// (likewise S.fld).  Round trips are folded as in slab_callers.cocci, so
/// page_slab(virt_to_head_page(x)) reads virt_to_slab(x) and
/// slab_page(P->slab)->inuse reads P->slab->inuse.
//
// Confidence: High (accesses are found by the structure's type)
// Options: --no-includes -D sname=<struct name> -D fld=<member>

virtual patch

@decl depends on patch@
identifier virtual.sname, virtual.fld;
@@
 struct sname {
 ...
-struct page *fld;
+struct slab *slab;
 ...
 };

@null depends on decl@
identifier virtual.sname, virtual.fld;
struct sname *P;
struct sname S;
@@
(
- P->fld
+ P->slab
  = NULL
|
- S.fld
+ S.slab
  = NULL
|
 !
- P->fld
+ P->slab
|
 !
- S.fld
+ S.slab
|
- P->fld
+ P->slab
  == NULL
|
- S.fld
+ S.slab
  == NULL
)

@set depends on decl@
identifier virtual.sname, virtual.fld;
struct sname *P;
struct sname S;
expression E;
@@
(
- P->fld = E
+ P->slab = page_slab(E)
|
- S.fld = E
+ S.slab = page_slab(E)
|
- P->fld == E
+ P->slab == page_slab(E)
|
- S.fld == E
+ S.slab == page_slab(E)
|
- P->fld != E
+ P->slab != page_slab(E)
|
- S.fld != E
+ S.slab != page_slab(E)
)

@get depends on decl@
identifier virtual.sname, virtual.fld;
struct sname *P;
struct sname S;
@@
(
- P->fld
+ slab_page(P->slab)
|
- S.fld
+ slab_page(S.slab)
)

@fold depends on decl@
expression X;
identifier F = {flags, slab_list, next, pobjects, rcu_head, slab_cache, freelist,
                s_mem, counters, inuse, objects, frozen, active, units};
@@
(
- slab_page(X)->F
+ X->F
|
- page_slab(slab_page(X))
+ X
|
- slab_page(page_slab(X))
+ X
|
- page_slab(virt_to_head_page(X))
+ virt_to_slab(X)
)
