// SPDX-License-Identifier: GPL-2.0-only
/// In function `fn`, read and write the slab-only members of a page that
/// is known to be a slab through page_slab().
///
/// For a function that keeps its struct page (it also talks to the page
/// allocator, e.g. build_detached_freelist() freeing a large kmalloc) but
/// uses a slab member once it knows the page is a slab:
///   P->F   ->   page_slab(P)->F      (P a struct page *, F a member of
///                                     struct slab that is not in struct
///                                     page's other unions' use)
/// and the pages counter as slabs.  The residue check then finds no
/// slab-only member of struct page in use.
//
// Confidence: High (the caller has checked PageSlab(); page_slab() is the
//  compound head, which slab members live in)
// Options: --no-includes -D fn=<function>

virtual patch

@depends on patch@
identifier virtual.fn;
struct page *P;
identifier F = {slab_list, slab_cache, freelist, s_mem, counters, inuse, objects,
                frozen, active, units, pobjects};
type T;
@@
 T fn(...)
 {
 <...
(
-P->F
+page_slab(P)->F
|
-P->pages
+page_slab(P)->slabs
)
 ...>
 }
