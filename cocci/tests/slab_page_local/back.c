/* A later conversion made slab_err() take the slab: page_slab() of the
 * page local is the slab again, and the local goes once it is unused. */
static int check_slab(struct kmem_cache *s, struct slab *slab)
{
	int maxobj;
	struct page *page = slab_page(slab);

	if (!slab_test_cache(slab)) {
		slab_err(s, page_slab(page), "Not a valid slab page");
		return 0;
	}
	return 1;
}

/* the page is still used as a page: the local stays */
static void kmem_freepages(struct kmem_cache *cachep, struct slab *slab)
{
	int order = cachep->gfporder;
	struct page *page = slab_page(slab);

	slab_err(cachep, page_slab(page), "x");
	__free_pages(page, order);
}
