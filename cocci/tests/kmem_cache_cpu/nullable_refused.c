/* Not in 5.10: reads of a nullable accessor where a page is still
 * expected and no slab local holds the value (nullable_refused.args):
 * refused with their place, never wrapped in slab_page(). */
struct cpu_view {
	struct page *first;
};

static void view(struct kmem_cache_cpu *c, struct cpu_view *v)
{
	v->first = slub_percpu_partial(c);
	show_page(slub_percpu_partial_read_once(c));
}
