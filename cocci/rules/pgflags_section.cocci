// SPDX-License-Identifier: GPL-2.0-only
/// Turn page_to_section(page) into pgflags_section(flags).
///
/// The section number is a function of the page flags word alone.  Taking
/// the flags instead of the page lets code that has only a flags word (a
/// struct slab, later a folio) ask for it.  The definition is rewritten to
/// take `unsigned long pgflags` (every `page->flags` in its body becomes
/// `pgflags`), and every call, including those inside macro bodies such as
/// __page_to_pfn(), passes `E->flags` instead of `E`.
//
// Confidence: High
// Options: --no-includes

virtual patch

@def depends on patch@
identifier pg;
type T;
@@
-T page_to_section(const struct page *pg)
+T pgflags_section(unsigned long pgflags)
 {
 <...
-pg->flags
+pgflags
 ...>
 }

@call depends on patch@
expression E;
@@
-page_to_section(E)
+pgflags_section(E->flags)
