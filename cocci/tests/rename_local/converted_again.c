/* new_code.res: code this rule has converted already, which it must leave alone */
/* Not in 5.10: a new function counting cpu partial slabs in `pages`,
 * declared inside an #ifdef. */
static unsigned int cpu_partial_slabs(struct kmem_cache_cpu *c)
{
#ifdef CONFIG_SLUB_CPU_PARTIAL
	struct slab *slab = slub_percpu_partial(c);
	unsigned int slabs = 0;

	if (slab)
		slabs = slab->slabs;
	return slabs;
#else
	return 0;
#endif
}
