// New code (not in 5.10): a parameter used as a slab only, and its caller.
#include "slab.h"

static unsigned int free_objects(struct kmem_cache *s, struct page *page)
{
	if (!page)
		return 0;
	return page->objects - page->inuse;
}

static unsigned int caller(struct kmem_cache *s, struct kmem_cache_node *n)
{
	struct page *page = n->first;

	return free_objects(s, page);
}
