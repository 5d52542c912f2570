/* What conversions leave behind, folded. */
static void validate_slab(struct kmem_cache *s, struct slab *slab);

static void f(struct kmem_cache *s, struct slab *slab, struct page *page)
{
	void *addr = page_address(slab_page(slab));
	int nid = page_to_nid(slab_page(slab));

	if (slab_page(slab))
		validate_slab(s, slab_page(slab));
	BUG_ON(!slab_page(slab));
	if (PageSlabPfmemalloc(slab_page(slab)))
		__ClearPageSlabPfmemalloc(slab_page(slab));
	x = slab_page(slab)->inuse + slab_page(slab)->pages;
	slab_list_add(page_slab(slab_page(slab)));
	get_page(slab_page(page_slab(page)));
	slab = page_slab(virt_to_head_page(addr));
	slab = page_slab(list_entry(p, struct page, slab_list));
	slab = page_slab(list_first_entry_or_null(&n->slabs_partial, struct page,
						  slab_list));
	slab = page_slab(list_last_entry(&n->slabs_free, struct page, slab_list));
	mod_node_page_state(page_pgdat(slab_page(slab)), 0, 1);
	/* a page that is not a slab's stays a page */
	put_page(page);
	page = list_entry(p, struct page, lru);
	if (page == slab_page(slab))
		return;
}

static void validate_slab(struct kmem_cache *s, struct slab *slab)
{
}
