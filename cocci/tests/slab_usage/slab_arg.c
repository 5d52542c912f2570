// New code (not in 5.10): a local that only flows into a function that
#include "slab.h"

// takes a struct slab (the call wrapped by slab_callers.cocci), and one
// that is also used as a page.
static void check(struct kmem_cache *s, const void *x)
{
	struct page *page = virt_to_head_page(x);

	validate_slab(s, page_slab(page));
}

static void check_and_free(struct kmem_cache *s, const void *x)
{
	struct page *page = virt_to_head_page(x);

	validate_slab(s, page_slab(page));
	put_page(page);
}
