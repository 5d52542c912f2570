// SPDX-License-Identifier: GPL-2.0-only
/// Report every use of a slab-only member of struct page.
///
/// "mm: Remove slab from struct page" takes these members out; the
/// compiler then rejects any use left, but only in the files a build
/// compiles.  This rule finds the users in any file, so that each can be
/// built under a config that compiles it (slabconv verify), or reported.
/// A use is P->F or P.F where P is an expression of type struct page * (or
/// struct page) as far as spatch can tell, or a call of a function known to
/// return a struct page * (virt_to_head_page(), pfn_to_page(), ...,
/// list_entry(..., struct page, ...)), F one of the slab members.  So is
/// a slab list member named where a struct page is the list's entry type:
/// a walk with a struct page cursor (list_for_each_entry(P, head,
/// slab_list), the _safe and other iterators) and list_entry(ptr, struct
/// page, slab_list) with its list_first_entry()-like relatives, which are
/// container_of() on that member.
/// Types come from the file itself (locals, parameters, casts, functions
/// declared there) and, with --include-headers-for-types -I..., from the
/// headers it includes.
//
// Confidence: High for what is reported; a use through an expression
//  whose type spatch cannot resolve is not reported (run it with the
//  headers for types to narrow that down).
// Options: --no-includes or --include-headers-for-types

virtual report

@r depends on report@
struct page *P;
struct page Q;
identifier F = {slab_list, next, pages, pobjects, slab_cache, freelist, s_mem,
                counters, inuse, objects, frozen, active, units};
position p;
@@
(
 P->F@p
|
 Q.F@p
|
 \(virt_to_page\|virt_to_head_page\|compound_head\|pfn_to_page\|phys_to_page\|
   alloc_page\|alloc_pages\|alloc_pages_node\|vmalloc_to_page\|kmap_to_page\|
   sg_page\)(...)->F@p
|
 \(list_entry\|list_first_entry\|list_last_entry\|list_first_entry_or_null\|
   container_of\)(..., struct page, ...)->F@p
)

@script:python depends on report@
F << r.F;
p << r.p;
@@
print(f"SLAB_FIELD {p[0].file}:{p[0].line}: page->{F} in {p[0].current_element}")

// the member named as the list linkage of a struct page
@w depends on report@
struct page *P;
identifier F = {slab_list};
iterator I;
statement S;
position p;
@@
(
 I(P, ..., F@p) S
|
 \(list_entry\|list_first_entry\|list_last_entry\|list_first_entry_or_null\|
   container_of\|list_next_entry\|list_prev_entry\)(..., struct page, F@p)
)

@script:python depends on report@
F << w.F;
p << w.p;
@@
print(f"SLAB_FIELD {p[0].file}:{p[0].line}: page->{F} in {p[0].current_element}")
