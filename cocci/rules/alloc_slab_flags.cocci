// SPDX-License-Identifier: GPL-2.0-only
/// Mark the slab as a slab (PG_slab) and record pfmemalloc where it is
/// allocated, in the function `fn` that turns pages into a slab.
///
/// Seed 008 ("mm: Convert slub to use struct slab"): before `fn`
/// (alloc_slab_page()) is converted to return a struct slab, it takes over
/// setting PG_slab and the slab's pfmemalloc bit, so that its caller does
/// not need the page; the NULL test it adds is what lets slab_return.cocci
/// convert the returned page (the page allocator's result, NULL on failure):
///   in fn:      return P;  ->  if (!P) return NULL;
///                             __SetPageSlab(P);
///                             if (page_is_pfmemalloc(P))
///                                     slab_set_pfmemalloc(page_slab(P));
///                             return P;
///   in caller:  __SetPageSlab(E); if (page_is_pfmemalloc(E)) <set it>;
///               (the caller's copy) removed
//
// Confidence: High (only the caller's two statements, in that order, move)
// Options: --no-includes -D fn=<allocating function> -D caller=<its caller>

virtual patch

@callee depends on patch@
identifier virtual.fn;
expression P;
@@
 struct page *fn(...)
 {
 ...
+if (!P)
+	return NULL;
+__SetPageSlab(P);
+if (page_is_pfmemalloc(P))
+	slab_set_pfmemalloc(page_slab(P));
 return P;
 }

@caller depends on callee@
identifier virtual.caller;
expression E, E2;
statement S;
type T;
@@
 T caller(...)
 {
 <...
-__SetPageSlab(E);
-if (page_is_pfmemalloc(E2))
-	S
 ...>
 }
