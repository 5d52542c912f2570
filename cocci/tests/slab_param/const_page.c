/* A parameter that is already const struct page * stays const. */
static inline void *index_to_obj(struct kmem_cache *cache,
				 const struct page *page, unsigned int idx)
{
	return page->s_mem + cache->size * idx;
}

/* new code, not in 5.10: another reader of a const page */
static unsigned int last_index(struct kmem_cache *cache,
			       const struct page *page)
{
	return obj_to_index(cache, page, index_to_obj(cache, page, page->active));
}
