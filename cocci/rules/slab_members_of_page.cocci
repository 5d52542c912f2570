// SPDX-License-Identifier: GPL-2.0-only
/// In function `fn`, reach the slab members of the struct page `var`
/// through page_slab(): the safe form for a parameter or local that is
/// used both as a page and as a slab.
///
/// regen's usage pass (regen/usage.py) finds such a variable with
/// cocci/rules/slab_usage.cocci: a use as a slab (a member only slabs
/// have) next to a use as a page (page_address(), flags, lru linkage, the
/// page allocator).  The variable keeps its type and its uses as a page;
/// each read or write of a member only slabs have becomes one of the
/// struct slab over the same page:
///   var->F       ->  page_slab(var)->F
///   var->pages   ->  page_slab(var)->slabs
/// page_slab() is the compound head seen as a struct slab, the page the
/// slab members live in.  It is applied only where var is dereferenced
/// already, so a NULL var faults where it did and no new NULL test is due.
/// Left alone (the removal check then stops regen with the place): a slab
/// list walked with var as the cursor, and var->next, whose struct slab
/// counterpart chains slabs, not pages.
//
// Confidence: High (struct slab overlays struct page: the members are the
//  same words, which the layout check asserts at every patch)
// Options: --no-includes -D fn=<function> -D var=<name>

virtual patch

@depends on patch@
identifier virtual.fn, virtual.var;
identifier F = {slab_list, pobjects, slab_cache, freelist, s_mem, counters, inuse,
                objects, frozen, active, units};
@@
 fn(...)
 {
 <...
(
-var->F
+page_slab(var)->F
|
-var->pages
+page_slab(var)->slabs
)
 ...>
 }
