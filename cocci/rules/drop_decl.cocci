// SPDX-License-Identifier: GPL-2.0-only
/// Remove the declarations of function `fn` from a header: its prototype
/// and any static inline stub that stands in for it.
///
/// Used when a declaration moves to a narrower header (for example
/// __check_heap_object() from include/linux/slab.h to mm/slab.h, so that it
/// is no longer available to the wider kernel).  The new declaration is
/// added by a template step of the same entry; the driver removes the
/// #ifdef/#else/#endif that this rule leaves empty.
//
// Confidence: High
// Options: --no-includes -D fn=<function>

virtual patch

@depends on patch@
identifier virtual.fn;
type T;
@@
-T fn(...);

@depends on patch@
identifier virtual.fn;
type T;
@@
-T fn(...) {...}
