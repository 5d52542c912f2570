/* new code, not in 5.10: a debug helper reading slab fields, with a prototype */
static void dump_slab_state(struct kmem_cache *s, struct page *page);

static void dump_slab_state(struct kmem_cache *s, struct page *page)
{
	pr_info("%s: node %d inuse %u/%u frozen %u freelist %px\n", s->name,
		page_to_nid(page), page->inuse, page->objects, page->frozen,
		page->freelist);
	if (PageHead(page))
		pr_info("order %d\n", compound_order(page));
}

/* another function with a struct page parameter is left alone */
static void other(struct page *page)
{
	page->inuse = 0;
}
