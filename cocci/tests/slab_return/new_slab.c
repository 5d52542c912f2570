/* 5.10: new_slab() returns the slab's page; its callers still want one. */
static struct page *new_slab(struct kmem_cache *s, gfp_t flags, int node)
{
	if (unlikely(flags & GFP_SLAB_BUG_MASK))
		flags = kmalloc_fix_flags(flags);
	if (!node_present(node))
		return NULL;

	return allocate_slab(s, flags, node);
}

static void early(int node)
{
	struct page *page;

	page = new_slab(kmem_cache_node, GFP_NOWAIT, node);
	BUG_ON(!page);
}
