/* The page local is still used as a page after page_slab(page) became the
 * slab again: it stays. */
static int check_slab(struct kmem_cache *s, struct slab *slab)
{
	int maxobj;
	struct page *page = slab_page(slab);

	if (!slab_test_cache(page_slab(page))) {
		slab_err(s, page, "Not a valid slab page");
		return 0;
	}
	maxobj = order_objects(compound_order(page), s->size);
	return maxobj;
}
