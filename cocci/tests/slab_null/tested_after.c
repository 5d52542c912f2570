/* Used, then tested against NULL: the code says it can be NULL. */
static void use_then_test(struct page *page)
{
	struct slab *slab = page_slab(page);

	if (!page)
		return;
	slab->inuse = 0;
}

static int use_then_test_eq(struct kmem_cache *s, struct slab *slab)
{
	int nid = slab_nid(slab);

	if (slab == NULL)
		return -1;
	return nid;
}

static void use_then_test_in_branch(struct kmem_cache *s, struct slab *slab, int x)
{
	if (x) {
		if (slab_test_pfmemalloc(slab))
			x = 2;
	}
	if (unlikely(slab))
		discard_slab(s, slab);
}

static void use_via_slab_page(struct slab *slab)
{
	void *p = slab_page(slab)->freelist;

	WARN_ON(!slab);
	compound_head(slab_page(slab));
}
