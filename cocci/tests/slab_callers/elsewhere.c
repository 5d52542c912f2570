/*
 * account_slab() is defined in mm/slab.h: this file has only callers, so
 * the converted position comes from -D argpos.
 */
static struct page *allocate(struct kmem_cache *s, gfp_t flags, int order)
{
	struct page *page = alloc_pages(flags, order);

	if (page)
		account_slab(page, order, s, flags);
	return page;
}

static void release(struct kmem_cache *s, struct slab *slab, int order)
{
	unaccount_slab(slab_page(slab), order, s);
	account_slab(slab_page(slab), order, s, 0);
	__free_pages(slab_page(slab), order);
}

/* new code, not in 5.10 */
static void recharge(struct kmem_cache *s, struct page *page, int order)
{
	account_slab(virt_to_head_page(page_address(page)), order, s, GFP_KERNEL);
	/* an argument at another position is not wrapped */
	account_other(s, page);
}
