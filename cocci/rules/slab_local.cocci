// SPDX-License-Identifier: GPL-2.0-only
/// Convert a local `struct page *` in function `fn` to a `struct slab *`.
///
/// For a local that holds the head page of a slab (it is assigned from
/// compound_head(E), i.e. it is the slab's first page):
///   struct page *page;            -> struct slab *slab;
///   page = compound_head(E)       -> slab = page_slab(E)
///   PageSlab(page)                -> slab_test_cache(slab)
///   page->F (struct slab fields)  -> slab->F
///   callee(..., page, ...)        -> callee(..., slab, ...)  (callee already
///                                    takes a struct slab: -D callee=<name>)
///   any other use of page         -> slab_page(slab)
//
// Confidence: High (only a local assigned from compound_head() is converted)
// Options: --no-includes -D fn=<function> -D callee=<converted function>

virtual patch

@head depends on patch@
identifier virtual.fn;
identifier pg;
expression E;
@@
 fn(...)
 {
 ...
 struct page *pg;
 ...
 pg = compound_head(E);
 ...
 }

@depends on head@
identifier virtual.fn, virtual.callee;
identifier head.pg;
expression E;
identifier F = {flags, slab_list, next, pobjects, rcu_head, slab_cache, freelist,
                s_mem, counters, inuse, objects, frozen, active, units};
@@
 fn(...)
 {
 ...
-struct page *pg;
+struct slab *slab;
 <...
(
-pg = compound_head(E)
+slab = page_slab(E)
|
-PageSlab(pg)
+slab_test_cache(slab)
|
 callee(...,
-pg
+slab
 ,...)
|
-pg->F
+slab->F
|
-pg
+slab_page(slab)
)
 ...>
 }
