/* Not in 5.10: a new function of a user's branch that hands one slab's page
 * to the page allocator's helpers three times, and a second slab once. */
static void drop_pages(struct kmem_cache *s, struct slab *slab, struct slab *other)
{
	unsigned int order = slab_order(slab);

	mod_lruvec_page_state(slab_page(slab), NR_SLAB_UNRECLAIMABLE_B, -(PAGE_SIZE << order));
	__ClearPageSlab(slab_page(slab));
	__free_pages(slab_page(slab), order);
	put_page(slab_page(other));
}
