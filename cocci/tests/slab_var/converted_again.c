/* cursor.res: code this rule has converted already, which it must leave alone */
/* 5.10's __kmem_cache_shrink(): the second cursor of two iterators keeps
 * its name (t); it is renamed in place, never wrapped in slab_page(). */
int __kmem_cache_shrink(struct kmem_cache *s)
{
	struct slab *slab;
	struct slab *t;

	for_each_kmem_cache_node(s, node, n) {
		list_for_each_entry_safe(slab, t, &n->partial, slab_list) {
			if (free == slab->objects)
				list_move(&slab->slab_list, &discard);
		}
		list_for_each_entry_safe(slab, t, &discard, slab_list)
			discard_slab(s, slab_page(slab));
	}
	return 0;
}

/* Another function's iterator with the same cursor name is left alone. */
static void other(struct kmem_cache_node *n)
{
	struct page *t;

	list_for_each_entry(t, &n->full, slab_list)
		t->slab_cache = NULL;
}
