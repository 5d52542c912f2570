// SPDX-License-Identifier: GPL-2.0-only
/// Keep a page's own word in page->index, not in the slab-only ->freelist.
///
/// "zsmalloc: Stop using slab fields in struct page" and "bootmem: Use
/// page->index instead of page->freelist": page->freelist belongs to the
/// slab allocators and goes away with them; code that borrowed it for a
/// pointer or a number of its own (zsmalloc's chain of component pages,
/// bootmem's section type) uses page->index, the word at the same offset:
///   P->freelist = NULL              -> P->index = 0
///   P->freelist = (void *)E         -> P->index = E
///   P->freelist = E                 -> P->index = (unsigned long)E
///   (unsigned long)P->freelist      -> P->index
///   return P->freelist;  in a function returning struct page *
///                                   -> return (struct page *)P->index;
/// P is a struct page (a local or parameter declared so); slab code, whose
/// page->freelist uses the series converts to struct slab, has none left.
//
// Confidence: High (the same word; only the type of its readers changes)
// Options: --no-includes

virtual patch

@depends on patch@
struct page *P;
expression E;
@@
(
-P->freelist = NULL
+P->index = 0
|
-P->freelist = (void *)E
+P->index = E
|
-P->freelist = E
+P->index = (unsigned long)E
|
-(unsigned long)P->freelist
+P->index
)

@depends on patch@
struct page *P;
identifier f;
@@
 struct page *f(...)
 {
 <...
 return
-P->freelist
+(struct page *)P->index
 ;
 ...>
 }
