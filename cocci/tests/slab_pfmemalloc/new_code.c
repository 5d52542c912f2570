/* new code, not in 5.10: a refill path that tests and clears the bit */
static void *refill_reserve(struct kmem_cache *cachep, struct kmem_cache_node *n)
{
	struct page *page = list_first_entry(&n->slabs_free, struct page, slab_list);
	struct slab *slab = page_slab(page);

	if (PageSlabPfmemalloc(page) && !gfp_pfmemalloc_allowed(GFP_KERNEL))
		return NULL;
	__ClearPageSlabPfmemalloc(virt_to_head_page(slab->s_mem));
	/* page_slab(slab_page(slab)) is left for slab_fold.cocci */
	ClearPageSlabPfmemalloc(slab_page(slab));
	return slab->s_mem;
}
