/* A page local under the conditional the body starts with, after a later
 * conversion made a callee take the slab: page_slab(page) is the slab, and
 * a local left without a use goes. */
static void list_objects(struct kmem_cache *s, struct slab *slab, const char *text)
{
#ifdef CONFIG_SLUB_DEBUG
	struct page *page = slab_page(slab);
	void *addr = slab_address(slab);
	unsigned long *map;

	slab_err(s, page_slab(page), text);
	slab_lock(page);
	map = get_map(s, page);
	put_map(map, addr);
#endif
}

static void unlock_all(struct kmem_cache *s, struct slab *slab)
{
#ifdef CONFIG_SLUB_DEBUG
	struct page *page = slab_page(slab);
	unsigned long *map;

	slab_lock(page_slab(page));
	map = get_map(s, page_slab(page));
	slab_unlock(page_slab(page));
#endif
}

/* the slab is assigned: left alone */
static void walks(struct kmem_cache *s, struct slab *slab)
{
#ifdef CONFIG_SLUB_DEBUG
	struct page *page = slab_page(slab);

	slab_lock(page_slab(page));
	slab = slab->next;
	slab_unlock(page_slab(page));
#endif
}
