/* fn still takes a struct page: neither it nor its callers change */
static void process_slab(struct loc_track *t, struct kmem_cache *s,
		struct page *page, enum track_item alloc)
{
	void *addr = page_address(page);
}

static void caller(struct kmem_cache *s, struct page *page)
{
	process_slab(&t, s, page, TRACK_ALLOC);
}
