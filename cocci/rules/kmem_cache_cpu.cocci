// SPDX-License-Identifier: GPL-2.0-only
/// Convert the slab pointers of struct kmem_cache_cpu to struct slab.
///
/// "mm/slub: Convert kmem_cache_cpu to struct slab": the cpu slab
/// (`page` becomes `slab`) and the cpu partial list (`partial` keeps its
/// name) change type together, so that no conversion between page and slab
/// is needed on the fast paths.  Run after the locals that hold them have
/// been converted (slab_var.cocci), which left page_slab()/slab_page()
/// around every read and write of the fields; this rule removes them:
///   struct page *page; struct page *partial;  -> struct slab *slab, *partial
///   C->page = slab_page(X) / NULL / E         -> C->slab = X / NULL / page_slab(E)
///   page_slab(C->page)                        -> C->slab
///   page_slab(C->page = E)                    -> C->slab = page_slab(E)
///   C->page (elsewhere)                       -> slab_page(C->slab)
/// and the partial list, read through slub_percpu_partial(),
/// slub_percpu_partial_read_once(), this_cpu_read(X->cpu_slab->partial):
///   page_slab(K)                              -> K
///   K (where a page is still expected)        -> slab_page(K)
///   slub_set_percpu_partial(C, slab_page(X))  -> slub_set_percpu_partial(C, X)
///   this_cpu_cmpxchg(X->cpu_slab->partial, slab_page(A), slab_page(B))
///                                             -> this_cpu_cmpxchg(..., A, B)
/// C is an expression of type struct kmem_cache_cpu * or X->cpu_slab.
/// Tests of the pointers are narrowed afterwards by slab_fold.cocci.
//
// Confidence: High (the two fields and the accessors of slub_def.h are the
//  only ways SLUB reaches them)
// Options: --no-includes  (files: include/linux/slub_def.h mm/slub.c)

virtual patch

@fields depends on patch@
@@
 struct kmem_cache_cpu {
 ...
-struct page *page;
+struct slab *slab;
 ...
-struct page *partial;
+struct slab *partial;
 ...
 };

@cpuslab depends on patch@
struct kmem_cache_cpu *C;
expression X, E;
@@
(
-C->page = slab_page(E)
+C->slab = E
|
-C->page = NULL
+C->slab = NULL
|
-page_slab(C->page = E)
+C->slab = page_slab(E)
|
-C->page = E
+C->slab = page_slab(E)
|
-page_slab(C->page)
+C->slab
|
-page_slab(READ_ONCE(C->page))
+READ_ONCE(C->slab)
|
-READ_ONCE(C->page)
+slab_page(READ_ONCE(C->slab))
|
-C->page
+slab_page(C->slab)
|
-page_slab(X->cpu_slab->page)
+X->cpu_slab->slab
|
-X->cpu_slab->page
+slab_page(X->cpu_slab->slab)
)

// Reads of the partial list where a page is still expected: wrapped
// before the unwrapping rules below run, which leave these alone.  The
// accessors' own definitions (an lvalue, READ_ONCE()) are left alone.
@partial_page depends on patch@
expression C, X, E;
@@
(
 slub_percpu_partial(C) = E
|
 READ_ONCE(slub_percpu_partial(C))
|
 page_slab(slub_percpu_partial(C))
|
 page_slab(slub_percpu_partial_read_once(C))
|
 page_slab(this_cpu_read(X->cpu_slab->partial))
|
 slub_set_percpu_partial(C, ...)
|
 this_cpu_cmpxchg(X->cpu_slab->partial, ...)
|
 this_cpu_write(X->cpu_slab->partial, ...)
|
-slub_percpu_partial(C)
+slab_page(slub_percpu_partial(C))
|
-slub_percpu_partial_read_once(C)
+slab_page(slub_percpu_partial_read_once(C))
|
-this_cpu_read(X->cpu_slab->partial)
+slab_page(this_cpu_read(X->cpu_slab->partial))
)

@partial depends on patch@
expression C, X, A, B, O;
@@
(
-page_slab(slub_percpu_partial(C))
+slub_percpu_partial(C)
|
-page_slab(slub_percpu_partial_read_once(C))
+slub_percpu_partial_read_once(C)
|
-page_slab(this_cpu_read(X->cpu_slab->partial))
+this_cpu_read(X->cpu_slab->partial)
|
 slub_set_percpu_partial(C,
-slab_page(A)
+A
 )
|
 this_cpu_cmpxchg(X->cpu_slab->partial, A, B) !=
-slab_page(O)
+O
)

@partial_args depends on patch@
expression X, A, B;
@@
 this_cpu_cmpxchg(X->cpu_slab->partial,
(
-slab_page(A)
+A
|
 A
)
 ,
(
-slab_page(B)
+B
|
 B
)
 )
