/* Not in 5.10: a new function whose tests and list links went through
 * slab_page() after a conversion. */
static bool has_slabs(struct kmem_cache_cpu *c, struct slab *slab, struct slab *next)
{
	slab->next = slab_page(next);
	return slab_page(c->slab) || slab_page(slub_percpu_partial(c));
}

/* new code, not in 5.10: a slab field read straight off the head page */
static struct kmem_cache *qlink_cache(void *qlink)
{
	return virt_to_head_page(qlink)->slab_cache;
}

/* new code, not in 5.10: a test folded inside another (KASAN's reports) */
static bool addr_in_slab(struct slab *slab)
{
	return slab_page(slab) && PageSlab(slab_page(slab));
}
