// SPDX-License-Identifier: GPL-2.0-only
/// Make the `struct page *` parameter of function `fn` point to const.
///
/// slab_page() of a const struct slab is a const struct page; a helper that
/// only reads the page (for example SLAB's index_to_obj()) must accept one
/// before a converted caller can pass it.  Definitions and prototypes.
//
// Confidence: High (the compiler rejects the change if fn writes the page)
// Options: --no-includes -D fn=<function>

virtual patch

@def depends on patch@
identifier virtual.fn;
identifier pg;
@@
 fn(...,
-struct page *pg
+const struct page *pg
 ,...) {...}

@proto depends on patch && !def@
identifier virtual.fn;
identifier pg;
type T;
@@
 T fn(...,
-struct page *pg
+const struct page *pg
 ,...);
