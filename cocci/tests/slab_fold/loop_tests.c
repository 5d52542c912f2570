/*
 * A branch's walk of the cpu partial chain: after slab_var.cocci, the
 * loops test slab_page() of the cursor.  New code, not in 5.10.
 */
static unsigned int user_cpu_partial_objects(struct kmem_cache_cpu *c)
{
	struct slab *slab;
	unsigned int x = 0;

	for (slab = slub_percpu_partial(c); slab_page(slab); slab = slab->next)
		x += slab->objects;
	return x;
}

static unsigned int user_cpu_partial_count(struct kmem_cache_cpu *c)
{
	struct slab *slab = slub_percpu_partial(c);
	unsigned int x = 0;

	while (slab_page(slab)) {
		x++;
		slab = slab->next;
	}
	return x;
}
