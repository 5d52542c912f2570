// SPDX-License-Identifier: GPL-2.0-only
/// Use the slab's memcg word for its object cgroups vector.
///
/// Seed 009 ("memcg: Convert object cgroups from struct page to struct
/// slab"): once the memcg helpers take a struct slab, the vector is read
/// and written through slab->memcg_data (an unsigned long, as in the
/// seed) instead of 5.10's page->obj_cgroups (a pointer in the same word:
/// SLAB_MATCH(obj_cgroups, memcg_data) in mm/slab.h pins the layout).
/// The conversion leaves slab_page(X)->obj_cgroups, which becomes:
///   (unsigned long)slab_page(X)->obj_cgroups -> X->memcg_data
///   slab_page(X)->obj_cgroups = NULL          -> X->memcg_data = 0
///   cmpxchg(&slab_page(X)->obj_cgroups, NULL, (struct obj_cgroup **)(V))
///                                            -> cmpxchg(&X->memcg_data, 0, V)
/// The low bit that 5.10 sets to tell a vector from a memcg pointer is
/// kept as it is (it is part of V and of the masks around the reads).
//
// Confidence: High (the same word, read and written with the same bits)
// Options: --no-includes

virtual patch

@depends on patch@
expression X, V;
@@
(
-(unsigned long)slab_page(X)->obj_cgroups
+X->memcg_data
|
-slab_page(X)->obj_cgroups = NULL
+X->memcg_data = 0
|
-cmpxchg(&slab_page(X)->obj_cgroups, NULL, (struct obj_cgroup **)(V))
+cmpxchg(&X->memcg_data, 0, V)
|
-cmpxchg(&slab_page(X)->obj_cgroups, NULL, (struct obj_cgroup **)V)
+cmpxchg(&X->memcg_data, 0, V)
)
