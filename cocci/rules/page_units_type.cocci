// SPDX-License-Identifier: GPL-2.0-only
/// Keep a number of a page's own in page->page_type, not SLOB's ->units.
///
/// "zsmalloc: Stop using slab fields in struct page": zsmalloc keeps the
/// offset of the first object of a sub-page in page->units, which is
/// SLOB's field and goes away with the slab fields of struct page.
/// page->page_type is the word at the same offset (the _mapcount union):
///   P->units -> P->page_type      (P a struct page)
//
// Confidence: High (the same word, read and written as a number)
// Options: --no-includes

virtual patch

@depends on patch@
struct page *P;
@@
-P->units
+P->page_type
