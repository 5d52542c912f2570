/* A variable assigned from a function that can return NULL, used untested. */
static struct page *get_page_from_list(struct list_head *list)
{
	struct page *page = NULL;

	if (!list_empty(list))
		page = list_first_entry(list, struct page, lru);
	return page;
}

static struct slab *first_slab(struct kmem_cache_node *n)
{
	return list_first_entry_or_null(&n->partial, struct slab, slab_list);
}

static void *f(struct kmem_cache_node *n, gfp_t gfp)
{
	struct page *page = get_page_from_list(&n->list);
	struct slab *slab;

	page_slab(page)->inuse++;
	page = alloc_pages(gfp, 0);
	slab_set_pfmemalloc(page_slab(page));
	slab = first_slab(n);
	if (slab_nid(slab) != 0)
		return NULL;
	return slab;
}

/* through slab_page(), a cast: the NULL is read where the slab is */
static void *h(struct kmem_cache_node *n)
{
	struct page *page = slab_page(first_slab(n));
	struct slab *slab = first_slab(n);

	slab_address(page_slab(page));
	return slab_page(slab)->freelist;
}

/* reassigned from a function that does not return NULL: nothing to report */
static int g(struct kmem_cache_node *n, void *obj)
{
	struct slab *slab = first_slab(n);

	slab = virt_to_slab(obj);
	return slab_order(slab);
}
