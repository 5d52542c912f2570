// SPDX-License-Identifier: GPL-2.0-only
/// Make function `fn` return a `struct slab *` instead of a `struct page *`.
///
/// The step "Convert fn() to return a struct slab".  In the definition and
/// its prototypes the return type becomes `struct slab *`; every
/// `return E;` (other than `return NULL;`) becomes `return page_slab(E);`.
/// Every call `fn(args)` becomes `slab_page(fn(args))`, so callers that
/// still hold a page keep compiling; slab_fold.cocci and the conversion of
/// a caller's local (slab_var.cocci) then fold the round trip away.
//
// Confidence: High (only the return type and returned values change)
// Options: --no-includes -D fn=<function>  (give the callers' files too)

virtual patch

@def depends on patch@
identifier virtual.fn;
expression E;
@@
-struct page *
+struct slab *
 fn(...)
 {
 <...
(
 return NULL;
|
-return E;
+return page_slab(E);
)
 ...>
 }

@proto depends on patch@
identifier virtual.fn;
@@
-struct page *
+struct slab *
 fn(...);

@call depends on def@
identifier virtual.fn;
expression list es;
@@
-fn(es)
+slab_page(fn(es))
