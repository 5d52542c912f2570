// Without a nullable macro (-D nullable=-: the configuration never gives
// NULL), no local is reported.
static ssize_t slabs_cpu_partial_show(struct kmem_cache *s, char *buf)
{
	int objects = 0;
	int cpu;

	for_each_online_cpu(cpu) {
		struct page *page;

		page = slub_percpu_partial(per_cpu_ptr(s->cpu_slab, cpu));
		if (page)
			objects += page->pobjects;
	}
	return objects;
}

/* Not in 5.10: a new reader that declares and sets its local at once. */
static int cpu_partial_node(struct kmem_cache_cpu *c)
{
	struct page *first = slub_percpu_partial_read_once(c);

	return first ? page_to_nid(first) : NUMA_NO_NODE;
}

/* Not in 5.10: a local set by a macro that is never NULL stays a page. */
static struct page *cpu_page(struct kmem_cache_cpu *c)
{
	struct page *page;

	page = cpu_page_of(c);
	return page;
}

/* A slab local already (converted by an earlier step): nothing to do. */
static void drain(struct kmem_cache_cpu *c)
{
	struct slab *slab;

	while ((slab = page_slab(slub_percpu_partial(c))))
		unfreeze(slab);
}
