// An RCU callback of a branch: the page comes from its rcu_head by
// container_of(), is freed as a page and counted as a slab.
static void slabconv_rcu_free_pages(struct rcu_head *h)
{
	struct page *pg = container_of(h, struct page, rcu_head);
	int order = compound_order(pg);

	slabconv_stat_objects -= pg->objects;
	slabconv_stat_slabs -= pg->pages;
	__free_pages(pg, order);
}
