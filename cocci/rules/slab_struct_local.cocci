// SPDX-License-Identifier: GPL-2.0-only
/// Make the scratch copies of a slab's words (`struct page new, old;`)
/// struct slabs.
///
/// SLUB builds the new freelist and counters of a slab in a local struct
/// page and hands its words to cmpxchg_double_slab().  Once that takes a
/// struct slab, these locals are struct slabs too; only the members that
/// struct slab has are read through them (freelist, counters, inuse,
/// objects, frozen).  Every local object (not pointer) of type struct page
/// in the given files is converted.
//
// Confidence: High in mm/slub.c (its only struct page objects are these
//  copies); do not run it on files that keep real struct page objects
// Options: --no-includes

virtual patch

@depends on patch@
identifier V;
type T;
identifier fn;
@@
 T fn(...)
 {
 <...
-struct page
+struct slab
 V;
 ...>
 }
