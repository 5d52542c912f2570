// New code (not in 5.10): slab lists walked with a struct page cursor.
#include "slab.h"

static unsigned long count_free(struct kmem_cache_node *n)
{
	struct page *page;
	unsigned long x = 0;

	list_for_each_entry(page, &n->partial, slab_list)
		x += page->objects - page->inuse;
	return x;
}

static unsigned long count_full(struct kmem_cache_node *n)
{
	struct page *page;
	unsigned long x = 0;

	list_for_each_entry(page, &n->slabs_full, slab_list)
		x++;
	return x;
}
