// SPDX-License-Identifier: GPL-2.0-only
/// Make the function-pointer parameter `fp` of function `fn` take a
/// `struct slab *` instead of a `struct page *`.
///
/// For count_partial(n, get_count): the callbacks (count_free(),
/// count_inuse(), count_total()) are converted by slab_param.cocci in the
/// same entry, and here
///   T (*fp)(struct page *)   -> T (*fp)(struct slab *)   (definition, prototypes)
///   fp(slab_page(X))         -> fp(X)
///   fp(E)                    -> fp(page_slab(E))
//
// Confidence: High (only calls through fp are changed)
// Options: --no-includes -D fn=<function> -D fp=<parameter>

virtual patch

@def depends on patch@
identifier virtual.fn, virtual.fp;
type T, R;
@@
 R fn(...,
 T (*fp)(
-struct page *
+struct slab *
 ), ...)
 {
 ...
 }

@calls depends on def@
identifier virtual.fn, virtual.fp;
expression X;
type R;
@@
 R fn(...)
 {
 <...
 fp(
(
-slab_page(X)
+X
|
-X
+page_slab(X)
)
 )
 ...>
 }
