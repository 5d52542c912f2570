// SPDX-License-Identifier: GPL-2.0-only
/// Declare struct slab where a header names it but does not define it.
///
/// A header whose prototypes now take a struct slab (include/linux/kasan.h
/// after "mm/kasan: Convert to struct slab") gets the forward declaration
/// `struct slab;` next to its `struct page;` one, so that the parameter
/// type means the same struct in every file that includes it.  Nothing is
/// added where struct slab is already declared or where the file has no
/// `struct page;` declaration to stand next to.
//
// Confidence: High
// Options: --no-includes

virtual patch

@present depends on patch@
@@
struct slab;

@depends on patch && !present@
@@
 struct page;
+struct slab;
