// SPDX-License-Identifier: GPL-2.0-only
/// Rename SLUB's slab_order(size, min_objects, max_order, fract_leftover)
/// to calc_slab_order().
///
/// mm/slab.h gains slab_order(const struct slab *) in the same patch; the
/// SLUB helper that computes an order for a cache size must make way.  Only
/// the four-argument function and its calls are renamed, so a call to the
/// new one-argument helper is never touched.
//
// Confidence: High
// Options: --no-includes

virtual patch

@def depends on patch@
type T;
identifier a, b, c, d;
type Ta, Tb, Tc, Td;
@@
 T
-slab_order
+calc_slab_order
 (Ta a, Tb b, Tc c, Td d) {...}

@call depends on def@
expression E1, E2, E3, E4;
@@
-slab_order
+calc_slab_order
 (E1, E2, E3, E4)
