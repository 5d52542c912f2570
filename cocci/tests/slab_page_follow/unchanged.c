/* Slab locals that keep slab_page(): left alone. */

/* three uses in all, at most two per value: the cursor of a loop */
static void unfreeze(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct slab *slab;
	struct slab *slab_to_discard = NULL;

	while ((slab = slub_percpu_partial(c))) {
		cmpxchg_slab(s, slab_page(slab));
		add_partial(s, slab_page(slab));
	}
	while (slab_to_discard) {
		slab = slab_to_discard;
		slab_to_discard = slab_to_discard->next;
		discard_slab(s, slab_page(slab));
	}
}

/* the cursor of an iterator */
static void walk(struct kmem_cache *s, struct kmem_cache_node *n)
{
	struct slab *slab, *h;

	list_for_each_entry_safe(slab, h, &n->partial, slab_list) {
		remove_partial(n, slab_page(slab));
		list_slab_objects(s, slab_page(slab));
		discard_slab(s, slab_page(slab));
	}
}

/* assigned inside a condition: no statement to follow it after */
static void cond(struct kmem_cache_cpu *c)
{
	struct slab *slab;

	if ((slab = c->slab) != NULL) {
		get(slab_page(slab));
		get(slab_page(slab));
		get(slab_page(slab));
	}
}

/* the name page is taken */
static void named(struct kmem_cache_cpu *c, struct page *page)
{
	struct slab *slab;

	slab = c->slab;
	get(slab_page(slab));
	get(slab_page(slab));
	get(slab_page(slab));
	put_page(page);
}

/* a preprocessor conditional between the declaration and the last use */
static void conditional(struct kmem_cache_cpu *c)
{
	struct slab *slab;

	slab = c->slab;
	get(slab_page(slab));
	get(slab_page(slab));
#ifdef CONFIG_SLUB_DEBUG
	get(slab_page(slab));
#endif
}

/* twice per value */
static void twice(struct kmem_cache_cpu *c)
{
	struct slab *slab;

	slab = c->slab;
	get(slab_page(slab));
	get(slab_page(slab));
	slab = c->partial;
	get(slab_page(slab));
	get(slab_page(slab));
}

/* a parameter: slab_page_local.cocci's */
static void param(struct slab *slab)
{
	get(slab_page(slab));
	get(slab_page(slab));
	get(slab_page(slab));
}
