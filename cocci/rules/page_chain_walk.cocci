// SPDX-License-Identifier: GPL-2.0-only
/// Page-table walkers that chain freed pages through page->freelist pass
/// a struct list_head of pages instead (linked through page->lru).
///
/// "iommu: Use put_pages_list": page->freelist belongs to slab.  A walker
/// is a function returning struct page * whose last parameter, a struct
/// page *, is the chain so far, and whose body pushes onto it
/// (P->freelist = FL) or hands it on (FL = G(..., FL), return G(..., FL)).
/// It becomes void and takes `struct list_head *list`: a push becomes
/// list_add_tail(&P->lru, list), a hand-on G(..., list), the returns of
/// the chain go.  A root walker (5.10's domain_unmap(): a local chain that
/// starts as NULL in a call to a walker and is returned) gains the list as
/// a new last parameter.  Assumes the chain is only built through ->freelist
/// and those calls in these functions; G is any function called that way
/// (so a new page-table level is converted with its caller), while its
/// definition is converted only if SmPL can see it (not inside a macro
/// whose function name is built with ##).
//
// Confidence: Moderate (structural; review the walkers it finds)
// Options: --no-includes

virtual patch

@pcw_w depends on patch@
identifier F, FL, G;
parameter list ps;
expression E;
expression list es;
@@
struct page *F(ps, struct page *FL) { <+... \( E->freelist = FL \| G(es, FL) \) ...+> }

@pcw_root depends on patch@
identifier pcw_w.F, R, FL;
parameter list ps;
expression list es;
@@
struct page *R(ps) { ... when any
 FL = F(es, NULL);
 ... when any
}

@depends on patch@
identifier pcw_w.F, pcw_w.FL, P, G;
expression list es;
@@
F(...) {
<...
(
- P->freelist = FL;
- FL = P;
+ list_add_tail(&P->lru, list);
|
- P->freelist = FL;
- return P;
+ list_add_tail(&P->lru, list);
|
- FL = G(es, FL);
+ G(es, list);
|
- return G(es, FL);
+ G(es, list);
)
...>
}

@depends on patch@
identifier pcw_root.R, pcw_root.FL, pcw_w.F, P;
expression list es;
@@
R(...) {
<...
(
- struct page *FL;
|
- struct page *FL = NULL;
|
- FL = F(es, NULL);
+ F(es, list);
|
- P->freelist = FL;
- FL = P;
+ list_add_tail(&P->lru, list);
)
...>
}

@depends on patch@
identifier F = {pcw_w.F, pcw_root.R};
identifier FL = {pcw_w.FL, pcw_root.FL};
expression C;
@@
F(...) {
<...
 if (C)
- return FL;
+ return;
...>
}

@depends on patch@
identifier F = {pcw_w.F, pcw_root.R};
identifier FL = {pcw_w.FL, pcw_root.FL};
@@
F(...) {
...
- return FL;
}

@depends on patch@
identifier F = {pcw_w.F, pcw_root.R};
identifier FL = {pcw_w.FL, pcw_root.FL};
@@
F(...) {
<...
- return FL;
+ return;
...>
}

@depends on patch@
identifier pcw_w.F, pcw_w.FL;
parameter list ps;
@@
- struct page *
+ void
  F(ps,
- struct page *FL
+ struct list_head *list
  ) {...}

@depends on patch@
identifier pcw_root.R;
parameter list ps;
@@
- struct page *
+ void
  R(ps
+ , struct list_head *list
  ) {...}
