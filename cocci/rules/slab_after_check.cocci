// SPDX-License-Identifier: GPL-2.0-only
/// Use a struct slab in function `fn` once its page is known to be a slab.
///
/// For a local `struct page *page` that fn tests with PageSlab() and leaves
/// on the non-slab branch (kfree(): large kmalloc pages go back to the page
/// allocator first):
///   if (unlikely(!PageSlab(page))) { ... return; }
///   + slab = page_slab(page);
/// and after that test
///   page->F (struct slab fields) -> slab->F
///   page_address(), page_to_nid() -> slab_address(), slab_nid()
///   any other use of page        -> slab_page(slab)
/// The non-slab branch keeps using the page: it is not a slab.
//
// Confidence: High (only code after the PageSlab() test that returns)
// Options: --no-includes -D fn=<function>

virtual patch

@r depends on patch@
identifier virtual.fn;
identifier page;
position p;
@@
 fn(...)
 {
 ...
 struct page *page;
 ...
(
 if@p (unlikely(!PageSlab(page))) { ... return ...; }
|
 if@p (!PageSlab(page)) { ... return ...; }
|
 if@p (unlikely(!PageSlab(page))) return ...;
|
 if@p (!PageSlab(page)) return ...;
)
 ...
 }

@s depends on r@
identifier r.page;
statement S;
position r.p;
identifier F = {flags, slab_list, next, pobjects, rcu_head, slab_cache, freelist,
                s_mem, counters, inuse, objects, frozen, active, units};
@@
 if@p (...) S
+slab = page_slab(page);
 <...
(
-page->F
+slab->F
|
-page_address(page)
+slab_address(slab)
|
-page_to_nid(page)
+slab_nid(slab)
|
-page
+slab_page(slab)
)
 ...>

@d depends on s@
identifier virtual.fn;
identifier r.page;
@@
 fn(...)
 {
 ...
 struct page *page;
+struct slab *slab;
 ...
 }
