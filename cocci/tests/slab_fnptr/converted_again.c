/* count_partial.res: code this rule has converted already, which it must leave alone */
/* 5.10's count_partial(), after its local became a slab. */
static unsigned long count_partial(struct kmem_cache_node *n,
					int (*get_count)(struct slab *))
{
	unsigned long x = 0;
	struct slab *slab;

	list_for_each_entry(slab, &n->partial, slab_list)
		x += get_count(slab);
	return x;
}

/* Not in 5.10: a new walker that still holds a page. */
static unsigned long count_one(struct page *page,
			       int (*get_count)(struct page *))
{
	return get_count(page);
}
