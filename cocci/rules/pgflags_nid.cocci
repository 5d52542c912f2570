// SPDX-License-Identifier: GPL-2.0-only
/// Add pgflags_nid(): the node id computed from a page flags word.
///
/// page_to_nid() has two implementations.  Where the node lives in the
/// flags word, the inline one extracts it with a shift and a mask; where it
/// does not (NODE_NOT_IN_PAGE_FLAGS), mm/sparse.c looks the section up in
/// a table.  Both computations depend only on page->flags, so each is moved
/// into a pgflags_nid(unsigned long pgflags) beside it, page_to_nid() calls
/// it, and the declaration gains a twin in the same style (`extern` as
/// 5.10 and 6.1 write it, or without, as 6.12 does).  struct slab (which has a
/// flags word but is not a page) can then find its node.
///
/// Assumes pgflags_section() exists (previous entry of the series).
//
// Confidence: High
// Options: --no-includes

virtual patch

@inline_nid depends on patch@
identifier pg, p;
expression shift, mask;
@@
+static inline int pgflags_nid(unsigned long pgflags)
+{
+	return (pgflags >> shift) & mask;
+}
+
 static inline int page_to_nid(const struct page *pg)
 {
 ...
-return (PF_POISONED_CHECK(p)->flags >> shift) & mask;
+return pgflags_nid(PF_POISONED_CHECK(p)->flags);
 }

@table_nid depends on patch@
identifier pg;
expression table;
@@
+int pgflags_nid(unsigned long pgflags)
+{
+	return table[pgflags_section(pgflags)];
+}
+
 int page_to_nid(const struct page *pg)
 {
-return table[pgflags_section(pg->flags)];
+return pgflags_nid(pg->flags);
 }

@extern_nid depends on patch@
identifier pg;
@@
+extern int pgflags_nid(unsigned long pgflags);
 extern int page_to_nid(const struct page *pg);

@plain_nid depends on patch && !extern_nid@
identifier pg;
@@
+int pgflags_nid(unsigned long pgflags);
 int page_to_nid(const struct page *pg);
