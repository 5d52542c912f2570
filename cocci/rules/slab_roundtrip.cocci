// SPDX-License-Identifier: GPL-2.0-only
/// Fold the page/slab round trips that a conversion leaves behind, with
/// nothing but what <linux/page-flags.h> defines (page_slab() and
/// slab_page()).
///
/// The usage pass (regen/usage.py) converts code outside mm/ too, where
/// mm/slab.h's helpers (virt_to_slab(), slab_address(), ...) that
/// slab_fold.cocci writes cannot be called.  There it folds with this rule
/// instead:
///   page_slab(slab_page(X)), slab_page(page_slab(X)) -> X
///   slab_page(X)->F                 -> X->F   (F a field struct slab has)
//
// Confidence: High (each fold is an identity of page_slab()/slab_page())
// Options: --no-includes

virtual patch

@depends on patch disable is_null, isnt_null1, not_ptr1, not_ptr2@
expression X;
identifier F = {flags, slab_list, next, pobjects, rcu_head, slab_cache, freelist,
                s_mem, counters, inuse, objects, frozen, active, units};
@@
(
-page_slab(slab_page(X))
+X
|
-slab_page(page_slab(X))
+X
|
-slab_page(X)->F
+X->F
)
