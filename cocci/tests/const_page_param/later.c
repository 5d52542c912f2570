/* Not in 5.10: a later definition, __always_inline and with the page
 * parameter named otherwise, and a new caller (left as it is). */
static __always_inline void *index_to_obj(struct kmem_cache *cache,
					  struct page *pg, unsigned int idx)
{
	return pg->s_mem + cache->size * idx;
}

static void *first_obj(struct kmem_cache *cache, struct page *page)
{
	return index_to_obj(cache, page, 0);
}
