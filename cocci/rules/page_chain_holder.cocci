// SPDX-License-Identifier: GPL-2.0-only
/// Callers that hold a page chain in a local (struct page *X, freed by a
/// chain-freeing function) hold a LIST_HEAD(X) instead.
///
/// "iommu: Use put_pages_list".  A chain-freeing function is a
/// void F(struct page *FL) whose body walks ->freelist (dma_free_pagelist(),
/// AMD's free_page_list()).  In each function that calls F(X) on a local X:
/// the declaration becomes LIST_HEAD(X) (an initializer X = G(...) a call
/// G(..., &X) after it); X = G(..., X), X = G(..., NULL)
/// and X = G(...) become G(..., &X) (the walkers take the list last, see
/// page_chain_walk.cocci); !X and X != NULL become list_empty() tests;
/// F(X) becomes put_pages_list(&X).  Assumes X is assigned only from the
/// walkers.  Run after page_chain_queue.cocci (whose destructor also calls F).
//
// Confidence: Moderate
// Options: --no-includes

virtual patch

@pch_free depends on patch@
identifier F, FL;
expression E;
@@
void F(struct page *FL) { <+... E->freelist ...+> }

@pch_h depends on patch@
identifier pch_free.F, fn, X;
@@
fn(...) { <+... F(X) ...+> }

@depends on patch@
identifier pch_h.fn, pch_h.X;
@@
fn(...) {
<...
(
- struct page *X = NULL;
+ LIST_HEAD(X);
|
- struct page *X;
+ LIST_HEAD(X);
)
...>
}

@depends on patch@
identifier pch_h.fn, pch_h.X, G;
expression list es;
@@
fn(...) {
<...
- struct page *X = G(es);
+ LIST_HEAD(X);
+
+ G(es, &X);
...>
}

@depends on patch@
identifier pch_h.fn, pch_h.X, G;
expression list es;
@@
fn(...) {
<...
(
- X = G(es, X);
+ G(es, &X);
|
- X = G(es, NULL);
+ G(es, &X);
|
- X = G(es);
+ G(es, &X);
)
...>
}

@depends on patch@
identifier pch_h.fn, pch_h.X, pch_free.F;
@@
fn(...) {
<...
(
- !X
+ list_empty(&X)
|
- X != NULL
+ !list_empty(&X)
|
- F(X)
+ put_pages_list(&X)
)
...>
}
