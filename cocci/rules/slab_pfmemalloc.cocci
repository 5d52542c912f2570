// SPDX-License-Identifier: GPL-2.0-only
/// Record pfmemalloc on the slab, not the page, in function `fn`.
///
/// Seed 006 ("mm: Convert slab to use struct slab"): kmem_getpages() still
/// holds the page it got from the page allocator, and marks the new slab
/// pfmemalloc through the page-flag accessors.  Those accessors go away
/// with the slab fields of struct page; the slab's own are used instead:
///   SetPageSlabPfmemalloc(P)    -> slab_set_pfmemalloc(page_slab(P))
///   ClearPageSlabPfmemalloc(P)  -> slab_clear_pfmemalloc(page_slab(P))
///   __ClearPageSlabPfmemalloc(P) -> __slab_clear_pfmemalloc(page_slab(P))
///   PageSlabPfmemalloc(P)       -> slab_test_pfmemalloc(page_slab(P))
/// (a slab_page(X) argument gives page_slab(slab_page(X)), which
/// slab_fold.cocci, run after it in the same entry, turns into X).
//
// Confidence: High (the bit is the same PG_pfmemalloc of the head page)
// Options: --no-includes -D fn=<function>

virtual patch

@depends on patch@
identifier virtual.fn;
type T;
expression P;
@@
 T fn(...)
 {
 <...
(
-SetPageSlabPfmemalloc(P)
+slab_set_pfmemalloc(page_slab(P))
|
-ClearPageSlabPfmemalloc(P)
+slab_clear_pfmemalloc(page_slab(P))
|
-__ClearPageSlabPfmemalloc(P)
+__slab_clear_pfmemalloc(page_slab(P))
|
-PageSlabPfmemalloc(P)
+slab_test_pfmemalloc(page_slab(P))
)
 ...>
 }
