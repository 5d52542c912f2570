/* Not in 5.10: a new function counting cpu partial slabs in `pages`,
 * declared inside an #ifdef. */
static unsigned int cpu_partial_slabs(struct kmem_cache_cpu *c)
{
#ifdef CONFIG_SLUB_CPU_PARTIAL
	struct slab *slab = slub_percpu_partial(c);
	unsigned int pages = 0;

	if (slab)
		pages = slab->slabs;
	return pages;
#else
	return 0;
#endif
}
