/* 5.10's early_kmem_cache_node_alloc(): a local holding the new slab. */
static void early_kmem_cache_node_alloc(int node)
{
	struct page *page;
	struct kmem_cache_node *n;

	page = slab_page(new_slab(kmem_cache_node, GFP_NOWAIT, node));
	BUG_ON(!page);
	if (page_to_nid(page) != node)
		pr_err("SLUB: Unable to allocate memory from node %d\n", node);
	n = page->freelist;
	page->freelist = get_freepointer(kmem_cache_node, n);
	page->inuse = 1;
	__add_partial(n, page, DEACTIVATE_TO_HEAD);
}

/* Same variable name elsewhere: untouched. */
static void other(struct page *page)
{
	page->freelist = NULL;
}
