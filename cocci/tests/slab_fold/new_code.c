/* Not in 5.10: a new function whose tests and list links went through
 * slab_page() after a conversion. */
static bool has_slabs(struct kmem_cache_cpu *c, struct slab *slab, struct slab *next)
{
	slab->next = slab_page(next);
	return slab_page(c->slab) || slab_page(slub_percpu_partial(c));
}
