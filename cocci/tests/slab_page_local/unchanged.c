/* slab_page() of the slab only twice: no local.  A slab that is assigned
 * after the declarations, and a function that has a page of its own, are
 * left alone too. */
static void twice(struct kmem_cache *s, struct slab *slab)
{
	__ClearPageSlab(slab_page(slab));
	__free_pages(slab_page(slab), 0);
}

static void reassigned(struct kmem_cache *s, struct slab *slab)
{
	__ClearPageSlab(slab_page(slab));
	slab = next_slab(s);
	__ClearPageSlab(slab_page(slab));
	__free_pages(slab_page(slab), 0);
}

static void has_page(struct kmem_cache *s, struct slab *slab, struct page *page)
{
	__ClearPageSlab(slab_page(slab));
	page_mapcount_reset(slab_page(slab));
	__free_pages(slab_page(slab), 0);
	put_page(page);
}

/* the uses are under a preprocessor conditional: a local would be unused
 * where it leaves them out */
static void conditional(struct kmem_cache *s, struct slab *slab)
{
	int order = 0;

#ifdef CONFIG_SLUB_DEBUG
	__ClearPageSlab(slab_page(slab));
	page_mapcount_reset(slab_page(slab));
	__free_pages(slab_page(slab), order);
#endif
}
