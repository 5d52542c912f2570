/* only a struct page parameter is made const */
static inline void *index_to_obj(struct kmem_cache *cache, struct foo *foo,
				 unsigned int idx)
{
	return foo->s_mem + cache->size * idx;
}
