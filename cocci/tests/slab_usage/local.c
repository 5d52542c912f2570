// New code (not in 5.10): a local from virt_to_head_page() used as a slab.
#include "slab.h"

static struct kmem_cache *cache_of(const void *x)
{
	struct page *page;

	page = virt_to_head_page(x);
	return page->slab_cache;
}
