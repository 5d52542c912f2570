// SPDX-License-Identifier: GPL-2.0-only
/// Include mm's private slab header in a file that now uses struct slab
/// helpers (page_slab(), slab_test_cache(), __check_heap_object()).
///
/// The include goes after <asm/sections.h>, the include that ends
/// mm/usercopy.c's list (the only file of the series that needs it); a
/// file that already includes "slab.h" is left alone.
//
// Confidence: High
// Options: --no-includes

virtual patch

@present@
@@
#include "slab.h"

@depends on patch && !present@
@@
 #include <asm/sections.h>
+#include "slab.h"
