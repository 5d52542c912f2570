// SPDX-License-Identifier: GPL-2.0-only
/// Fold the page/slab round trips that a conversion leaves behind.
///
/// Converting a parameter, local or return value wraps the remaining uses
/// in slab_page() (or page_slab()).  Where the wrapped value is handed to
/// something that has a struct slab form, use that form:
///   slab_page(X)->F                 -> X->F   (F a field struct slab has)
///   virt_to_head_page(X)->F         -> virt_to_slab(X)->F
///   page_slab(slab_page(X)), slab_page(page_slab(X)) -> X
///   page_slab(virt_to_head_page(X)) -> virt_to_slab(X)
///   page_slab(virt_to_page(X))      -> virt_to_slab(X)
///   PageSlobFree(slab_page(X)) and its setters -> slab_test_free(X) ...
///   page_slab(container_of(X, struct page, F)) -> container_of(X, struct slab, F)
///   page_slab(list_entry(X, struct page, F)) (and list_first_entry,
///     list_last_entry, list_first_entry_or_null) -> the same on struct slab
///   page_size(slab_page(X))         -> slab_size(X)
///   page_pgdat(slab_page(X))        -> slab_pgdat(X)
///   page_address(slab_page(X))      -> slab_address(X)
///   page_to_nid(slab_page(X))       -> slab_nid(X)
///   compound_order(slab_page(X))    -> slab_order(X)
///   PageSlab(slab_page(X))          -> slab_test_cache(X)
///   PageSlabPfmemalloc(slab_page(X)) and its setters -> slab_*_pfmemalloc(X)
///   slab_page(X) == NULL, !slab_page(X), slab_page(X) == slab_page(Y),
///   if (slab_page(X)), slab_page(X) && E, a while or for loop's condition
///                                             -> the same test on X
///   A->next = slab_page(X)          -> A->next = X  (A declared struct slab *)
///   f(..., slab_page(X), ...)       -> f(..., X, ...) where the definition
///                                      of f in the same file takes a struct
///                                      slab at that position
//
// Confidence: High (each fold is an identity of the page_slab()/slab_page()
//  helpers; page_slab() of a tail page is its head, as compound_head() was)
// Options: --no-includes

virtual patch

@depends on patch disable is_null, isnt_null1, not_ptr1, not_ptr2@
expression X;
identifier F = {flags, slab_list, next, pobjects, rcu_head, slab_cache, freelist,
                s_mem, counters, inuse, objects, frozen, active, units};
@@
(
-slab_page(X)->F
+X->F
|
-virt_to_head_page(X)->F
+virt_to_slab(X)->F
|
-slab_page(X)->pages
+X->slabs
|
-page_slab(slab_page(X))
+X
|
-slab_page(page_slab(X))
+X
|
-page_slab(virt_to_head_page(X))
+virt_to_slab(X)
|
-page_slab(virt_to_page(X))
+virt_to_slab(X)
|
-PageSlobFree(slab_page(X))
+slab_test_free(X)
|
-__SetPageSlobFree(slab_page(X))
+__slab_set_free(X)
|
-__ClearPageSlobFree(slab_page(X))
+__slab_clear_free(X)
|
-page_slab(container_of(X, struct page, F))
+container_of(X, struct slab, F)
|
-page_slab(list_entry(X, struct page, F))
+list_entry(X, struct slab, F)
|
-page_slab(list_first_entry(X, struct page, F))
+list_first_entry(X, struct slab, F)
|
-page_slab(list_last_entry(X, struct page, F))
+list_last_entry(X, struct slab, F)
|
-page_slab(list_first_entry_or_null(X, struct page, F))
+list_first_entry_or_null(X, struct slab, F)
|
-page_size(slab_page(X))
+slab_size(X)
|
-page_pgdat(slab_page(X))
+slab_pgdat(X)
|
-page_address(slab_page(X))
+slab_address(X)
|
-page_to_nid(slab_page(X))
+slab_nid(X)
|
-compound_order(slab_page(X))
+slab_order(X)
|
-PageSlab(slab_page(X))
+slab_test_cache(X)
|
-PageSlabPfmemalloc(slab_page(X))
+slab_test_pfmemalloc(X)
|
-SetPageSlabPfmemalloc(slab_page(X))
+slab_set_pfmemalloc(X)
|
-ClearPageSlabPfmemalloc(slab_page(X))
+slab_clear_pfmemalloc(X)
|
-__ClearPageSlabPfmemalloc(slab_page(X))
+__slab_clear_pfmemalloc(X)
)

// Tests of a slab that the rule above may just have folded inside (as in
// `page && PageSlab(page)`): a rule of their own, so that they see its result.
@depends on patch disable is_null, isnt_null1, not_ptr1, not_ptr2@
expression X, Y;
@@
(
-slab_page(X) == slab_page(Y)
+X == Y
|
-slab_page(X) != slab_page(Y)
+X != Y
|
-slab_page(X) == NULL
+X == NULL
|
-slab_page(X) != NULL
+X != NULL
|
-!slab_page(X)
+!X
|
-slab_page(X) && slab_page(Y)
+X && Y
|
-slab_page(X) || slab_page(Y)
+X || Y
|
-slab_page(X) && Y
+X && Y
|
-slab_page(X) || Y
+X || Y
|
 Y &&
-slab_page(X)
+X
|
 Y ||
-slab_page(X)
+X
)

@depends on patch disable isnt_null1, not_ptr2@
expression X, E1, E3;
statement S1, S2;
@@
(
 if (
-slab_page(X)
+X
 ) S1 else S2
|
 if (
-slab_page(X)
+X
 ) S1
|
 while (
-slab_page(X)
+X
 ) S1
|
 for (E1;
-slab_page(X)
+X
 ; E3) S1
)

// A member of a known slab (a local or parameter declared struct slab *)
// that holds a slab pointer.
@depends on patch@
struct slab *A;
expression X;
@@
 A->next =
-slab_page(X)
+X

// The call-site fold in three rules, so that spatch matches the file once
// per function that is both called with a slab_page() argument and defined
// here to take a slab, not once per slab-taking function (there are dozens
// late in the series, and each binding is a pass over the whole file).
@cand depends on patch@
identifier f;
expression X;
@@
 f(..., slab_page(X), ...)

@takes depends on cand@
identifier cand.f;
parameter list[n] ps;
identifier sl;
type T;
@@
(
 T f(ps, struct slab *sl, ...) {...}
|
 T f(ps, const struct slab *sl, ...) {...}
)

@depends on takes@
identifier cand.f;
expression list[takes.n] es;
expression X;
@@
 f(es,
-slab_page(X)
+X
 ,...)
