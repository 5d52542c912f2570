// SPDX-License-Identifier: GPL-2.0-only
/// Convert the `struct page *` parameter of function `fn` to a struct slab.
///
/// The generic step of the series: "Convert fn() to take a struct slab".
/// In the definition (and any prototype) of fn, the parameter
/// `struct page *page` becomes `struct slab *slab` (with -D const_slab:
/// `const struct slab *slab`; a `const struct page *` parameter becomes
/// `const struct slab *` either way).  In the body:
///   page->F           -> slab->F      for the fields struct slab carries
///   page_address(page) -> slab_address(slab)
///   page_to_nid(page)  -> slab_nid(slab)
///   list_for_each_entry(page, ...) -> list_for_each_entry(slab, ...)
///                         (the parameter reused as an iterator's cursor)
///   any other use of page -> slab_page(slab)  (talking to the page allocator
///                         or to code not converted yet)
/// Coccinelle updates a prototype in the same file as the definition by
/// itself; the proto rules cover prototypes in other files (headers).
/// Callers are not changed here: a caller is converted with slab_local.cocci
/// or by a later entry.
//
// Confidence: High (the fields are the ones struct slab defines)
// Options: --no-includes -D fn=<function> [-D const_slab]

virtual patch
virtual const_slab

// First the parameter reused as an iterator's cursor: it walks slabs.
@cursor depends on patch@
identifier virtual.fn;
identifier pg;
type TP = {struct page *, const struct page *};
iterator I;
expression list es;
statement S;
@@
 fn(..., TP pg, ...)
 {
 <...
 I(
-pg
+slab
 , es) S
 ...>
 }

@body depends on patch@
identifier virtual.fn;
identifier pg;
type TP = {struct page *, const struct page *};
identifier F = {flags, slab_list, next, pobjects, rcu_head, slab_cache, freelist,
                s_mem, counters, inuse, objects, frozen, active, units};
@@
 fn(..., TP pg, ...)
 {
 <...
(
-pg->F
+slab->F
|
-pg->pages
+slab->slabs
|
-page_address(pg)
+slab_address(slab)
|
-page_to_nid(pg)
+slab_nid(slab)
|
-pg
+slab_page(slab)
)
 ...>
 }

@constparam depends on patch@
identifier virtual.fn;
identifier pg;
@@
 fn(...,
-const struct page *pg
+const struct slab *slab
 ,...) {...}

@param depends on patch && !const_slab && !constparam@
identifier virtual.fn;
identifier pg;
@@
 fn(...,
-struct page *pg
+struct slab *slab
 ,...) {...}

@cparam depends on patch && const_slab && !constparam@
identifier virtual.fn;
identifier pg;
@@
 fn(...,
-struct page *pg
+const struct slab *slab
 ,...) {...}

@constproto depends on patch && !constparam@
identifier virtual.fn;
identifier pg;
type T;
@@
 T fn(...,
-const struct page *pg
+const struct slab *slab
 ,...);

@proto depends on patch && !const_slab && !param && !constproto@
identifier virtual.fn;
identifier pg;
type T;
@@
 T fn(...,
-struct page *pg
+struct slab *slab
 ,...);

@cproto depends on patch && const_slab && !cparam && !constproto@
identifier virtual.fn;
identifier pg;
type T;
@@
 T fn(...,
-struct page *pg
+const struct slab *slab
 ,...);
