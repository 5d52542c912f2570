/*
 * user_index_to_obj()'s struct page parameter (position 1) became a const
 * struct page: a call needs nothing (it is matched, and printed, all the
 * same); a prototype of the file's own follows.  New code, not in 5.10.
 */
void *user_index_to_obj(struct kmem_cache *cache, struct page *page,
			unsigned int idx);

static void *user_first_obj(struct kmem_cache *cache, struct page *page)
{
	return user_index_to_obj(cache, page, 0);
}
