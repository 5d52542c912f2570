void *index_to_obj(struct kmem_cache *cache, struct page *page, unsigned int idx);
