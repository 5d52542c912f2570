/* slab_page() of the same slab more than twice: a local holds it. */
static void kmem_freepages(struct kmem_cache *cachep, struct slab *slab)
{
	int order = cachep->gfporder;

	BUG_ON(!slab_test_cache(slab));
	__ClearPageSlab(slab_page(slab));
	page_mapcount_reset(slab_page(slab));
	slab_page(slab)->mapping = NULL;
	__free_pages(slab_page(slab), order);
}

/* once: nothing to hold */
static void once(struct slab *slab)
{
	__ClearPageSlab(slab_page(slab));
}

/* the slab is assigned: a page taken at the top would go stale */
static void walks(struct slab *slab)
{
	__ClearPageSlab(slab_page(slab));
	slab = slab->next;
	__ClearPageSlab(slab_page(slab));
}

/* the name page is taken */
static void named(struct slab *slab, struct page *page)
{
	__ClearPageSlab(slab_page(slab));
	put_page(slab_page(slab));
	put_page(page);
}

/* twice only: left alone */
static void __free_slab(struct kmem_cache *s, struct slab *slab)
{
	__ClearPageSlab(slab_page(slab));
	slab_page(slab)->mapping = NULL;
}

/* a local slab set in its declaration counts as assigned: left alone */
static void local_slab(void *object)
{
	struct slab *slab = virt_to_slab(object);
	int n = 1;

	put_page(slab_page(slab));
	if (n)
		put_page(slab_page(slab));
}

/* under a conditional, twice only: left alone (conditional.c has the
 * functions under a conditional that take it more often) */
static void list_objects(struct kmem_cache *s, struct slab *slab)
{
#ifdef CONFIG_SLUB_DEBUG
	void *addr = slab_address(slab);

	slab_lock(slab_page(slab));
	get_map(s, slab_page(slab));
#endif
}

/* the slab is the cursor of an iterator: left alone */
static void walk_partial(struct kmem_cache_node *n, struct slab *slab, struct slab *h)
{
	int k = 0;

	list_for_each_entry_safe(slab, h, &n->partial, slab_list) {
		remove_partial(n, slab_page(slab));
		put_page(slab_page(slab));
	}
}

/* a local slab: left alone (only a parameter keeps its value throughout) */
static void local_slab(void *object)
{
	struct slab *slab;
	int n = 1;

	slab = virt_to_slab(object);
	put_page(slab_page(slab));
	put_page(slab_page(slab));
}

/* no declarations of its own: the local, then a blank line */
static int free_checks(struct kmem_cache *s, struct slab *slab, void *object)
{
	if (!check_valid_pointer(s, slab_page(slab), object))
		return 0;
	if (on_freelist(s, slab_page(slab), object))
		return 0;
	slab_err(s, slab_page(slab), "x");
	return 1;
}
