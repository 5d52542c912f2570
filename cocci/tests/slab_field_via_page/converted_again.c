/* detached.res: code this rule has converted already, which it must leave alone */
/* 5.10's build_detached_freelist(): the page is freed to the page
 * allocator when it is not a slab, and otherwise gives the cache. */
int build_detached_freelist(struct kmem_cache *s, size_t size,
			    void **p, struct detached_freelist *df)
{
	struct page *page;

	page = virt_to_head_page(object);
	if (!s) {
		if (unlikely(!PageSlab(page))) {
			__free_pages(page, compound_order(page));
			return size;
		}
		df->s = page_slab(page)->slab_cache;
	}
	df->slab = page_slab(page);
	return size;
}

/* Not in 5.10: a new helper reading the object count of a page it was
 * handed; another function is left alone. */
static unsigned int objects_of(struct page *page)
{
	return page->objects;
}
