// SPDX-License-Identifier: GPL-2.0-only
/// Adapt the callers of function `fn` whose parameter became a struct slab.
///
/// Run after slab_param.cocci (the definition of fn already takes
/// `struct slab *` or `const struct slab *`), in the same spatch run over
/// the definition's file and every caller's file: the position n of the
/// converted parameter is taken from the definition, and in every call
///   fn(a0, ..., a(n-1), E, ...)   -> fn(a0, ..., a(n-1), page_slab(E), ...)
///   fn(..., slab_page(X), ...)    -> fn(..., X, ...)   (already a slab)
/// Then, in the same files, the identities
///   page_slab(slab_page(X))       -> X
///   slab_page(page_slab(X))       -> X
///   page_slab(virt_to_head_page(X)) -> virt_to_slab(X)
///   slab_page(X)->F               -> X->F  (F a field struct slab carries)
/// are folded, so that a conversion never leaves a round trip behind.
//
// Confidence: High (only arguments at the converted position are wrapped;
//  page_slab() is compound_head(), so a tail page is handled as before)
// Options: --no-includes -D fn=<function>  (give the file that defines fn
//  together with the callers' files)

virtual patch

@def depends on patch@
identifier virtual.fn;
parameter list[n] ps;
identifier sl;
type T;
@@
(
 T fn(ps, struct slab *sl, ...) {...}
|
 T fn(ps, const struct slab *sl, ...) {...}
)

@call depends on def@
identifier virtual.fn;
expression list[def.n] es;
expression E;
@@
 fn(es,
(
- slab_page(E)
+ E
|
- E
+ page_slab(E)
)
 ,...)

@fold depends on patch@
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
