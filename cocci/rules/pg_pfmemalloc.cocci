// SPDX-License-Identifier: GPL-2.0-only
/// Name the page flag that marks a slab allocated from pfmemalloc reserves.
///
/// The slab allocators keep that bit in PG_active (PageSlabPfmemalloc()).
/// struct slab helpers test the bit in slab->flags directly, so the bit
/// gets a name of its own, PG_pfmemalloc, aliased like the other
/// owner-specific flags and placed beside SLOB's PG_slob_free.
//
// Confidence: High
// Options: --no-includes

virtual patch

@depends on patch@
@@
 enum pageflags {
 ...,
 PG_slob_free = PG_private,
+
+	/* SLAB / SLUB / SLOB: allocated from pfmemalloc reserves */
+	PG_pfmemalloc = PG_active,
 ...
 };
