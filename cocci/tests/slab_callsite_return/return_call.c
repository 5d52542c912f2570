/*
 * kasan_addr_to_slab() now returns a struct slab: a user's file that no
 * entry lists gets the page back through slab_page(), a cast (NULL stays
 * NULL).  New code, not in 5.10.
 */
struct page *kasan_addr_to_slab(const void *addr);

static struct kmem_cache *user_cache_of(const void *addr)
{
	struct page *page = kasan_addr_to_slab(addr);

	return page ? page->slab_cache : NULL;
}

static bool user_is_slab(const void *addr)
{
	return kasan_addr_to_slab(addr) != NULL;
}
