/* A list cursor, a declaration inside an #ifdef, an initialised pointer,
 * the partial counters (pages becomes slabs) and `var = var->next`. */
static void unfreeze(struct kmem_cache *s, struct kmem_cache_node *n)
{
#ifdef CONFIG_SLUB_CPU_PARTIAL
	struct page *discard_page = NULL;
	struct page *page;

	list_for_each_entry(page, &n->partial, slab_list)
		count += page->pages;
	while (discard_page) {
		page = discard_page;
		discard_page = discard_page->next;
		discard_slab(s, page);
	}
#endif
}
