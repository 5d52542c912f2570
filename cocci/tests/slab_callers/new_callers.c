/* new code, not in 5.10: callers written against the old API */
static bool slab_is_full(struct kmem_cache *s, const struct slab *slab)
{
	return slab->inuse == slab->objects;
}

static void report_full(struct kmem_cache *s, struct slab *slab, void *obj)
{
	if (slab_is_full(s, slab_page(slab)))
		pr_info("%s: full\n", s->name);
	if (slab_is_full(s, virt_to_head_page(obj)))
		pr_info("%s: object's slab full\n", s->name);
}

static unsigned int count_full(struct kmem_cache *s, struct kmem_cache_node *n)
{
	struct page *page;
	unsigned int x = 0;

	list_for_each_entry(page, &n->full, slab_list)
		x += slab_is_full(s, page);
	/* an unrelated function taking a page is left alone */
	list_for_each_entry(page, &n->partial, slab_list)
		x += page_is_full(s, page);
	return x;
}

static unsigned int free_in(struct slab *slab)
{
	return slab_page(slab)->objects - slab_page(slab)->inuse;
}
