// New code (not in 5.10): a page walked as the cursor of a slab list and
// used as a page as well is mixed with a walk, which the safe form cannot
// convert; a page used as a page and handed to page_slab() only is not
// reported (it reaches no slab member).
#include "slab.h"

static unsigned long slabconv_partial_bytes(struct kmem_cache_node *n)
{
	struct page *page;
	unsigned long bytes = 0;

	list_for_each_entry(page, &n->partial, slab_list)
		bytes += page_size(page) - page->inuse;
	return bytes;
}

static void slabconv_note(struct page *page)
{
	get_page(page);
	slabconv_note_slab(page_slab(page));
}
