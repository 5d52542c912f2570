/* 5.10: new_slab() returns allocate_slab()'s page, which is NULL when the
 * page allocator fails; its callers still want a page.  allocate_slab()
 * returns the slab too, converted only after its own NULL test. */
static struct page *allocate_slab(struct kmem_cache *s, gfp_t flags, int node)
{
	struct page *page;

	page = alloc_slab_page(s, flags, node, s->oo);
	if (unlikely(!page)) {
		page = alloc_slab_page(s, flags, node, s->min);
		if (unlikely(!page))
			goto out;
	}
	page->objects = 1;
out:
	if (!page)
		return NULL;
	inc_slabs_node(s, page_to_nid(page), page->objects);
	return page;
}

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
