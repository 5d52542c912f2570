/* mm/slub.c after the locals were converted (slab_var.cocci), with the
 * accessors of the partial list known to be NULL in some configuration
 * (nullable.args): no slab_page() of them anywhere. */
static bool has_cpu_slab(int cpu, struct kmem_cache *s)
{
	struct kmem_cache_cpu *c = per_cpu_ptr(s->cpu_slab, cpu);

	return c->page || slub_percpu_partial(c);
}

static void *alloc(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct slab *slab;

	if (slub_percpu_partial(c)) {
		slab = page_slab(c->page = slub_percpu_partial(c));
		slub_set_percpu_partial(c, slab_page(slab));
	}
	while ((slab = page_slab(slub_percpu_partial(c))))
		unfreeze(slab);
	return NULL;
}

/* Not in 5.10: a reader whose local was converted to a slab first, and
 * the tests it makes of both accessors. */
static int cpu_partial_nodes(struct kmem_cache_cpu *c)
{
	struct slab *first;

	if (!slub_percpu_partial_read_once(c))
		return NUMA_NO_NODE;
	first = page_slab(slub_percpu_partial_read_once(c));
	return slub_percpu_partial(c) ? slab_nid(first) : NUMA_NO_NODE;
}

/* this_cpu_read() of the field is a struct slab * in every configuration */
static void put(struct kmem_cache *s, struct slab *slab)
{
	struct page *oldpage;

	oldpage = this_cpu_read(s->cpu_slab->partial);
	show_page(oldpage);
}
