// SPDX-License-Identifier: GPL-2.0-only
/// Rename function `from` to `to`: its definitions, prototypes and calls.
///
/// "mm/slub: Convert print_page_info() to print_slab_info()" and
/// "mm/slub: Convert setup_page_debug() to setup_slab_debug()": the new
/// name says what the function now takes; the parameter itself is
/// converted by slab_param.cocci in the same entry.
//
// Confidence: High (an identifier rename; give every file that uses it)
// Options: --no-includes -D from=<old name> -D to=<new name>

virtual patch

@def depends on patch@
identifier virtual.from, virtual.to;
type T;
@@
 T
-from
+to
 (...) {...}

@proto depends on patch@
identifier virtual.from, virtual.to;
type T;
@@
 T
-from
+to
 (...);

@call depends on patch@
identifier virtual.from, virtual.to;
@@
-from
+to
 (...)
