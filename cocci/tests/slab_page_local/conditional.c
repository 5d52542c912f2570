/* Preprocessor conditionals: the local goes where it is used whatever the
 * configuration, or the function is left alone. */

/* one use outside every conditional: the local at the top */
static void deactivate(struct kmem_cache *s, struct slab *slab, int m)
{
	int lock = 0;

	if (m == 1)
		remove_partial(s, slab_page(slab));
#ifdef CONFIG_SLUB_DEBUG
	if (s->flags && !lock)
		add_full(s, slab_page(slab));
#endif
	discard_slab(s, slab_page(slab));
}

/* the uses after the conditional's end: the local at the top, then a blank
 * line (the body starts with a statement) */
static bool cmpxchg_slab(struct kmem_cache *s, struct slab *slab, void *old)
{
	VM_BUG_ON(!irqs_disabled());
#if defined(CONFIG_HAVE_CMPXCHG_DOUBLE)
	if (s->flags & 1) {
		if (cmpxchg_double(&slab->freelist, &slab->counters, old, 0, old, 0))
			return true;
	} else
#endif
	{
		slab_lock(slab_page(slab));
		if (slab->freelist == old) {
			slab_unlock(slab_page(slab));
			return true;
		}
		slab_unlock(slab_page(slab));
	}
	return false;
}

/* every use inside the block the body starts with: the block's first
 * declaration */
static void list_objects(struct kmem_cache *s, struct slab *slab, const char *text)
{
#ifdef CONFIG_SLUB_DEBUG
	void *addr = slab_address(slab);
	unsigned long *map;

	slab_err(s, slab_page(slab), text);
	slab_lock(slab_page(slab));
	map = get_map(s, slab_page(slab));
	put_map(map, addr);
#endif
}

/* every use inside a conditional in the middle of the body: left alone (a
 * declaration there would follow a statement) */
static void middle(struct kmem_cache *s, struct slab *slab)
{
	stat(s, 1);
#ifdef CONFIG_SLUB_DEBUG
	slab_lock(slab_page(slab));
	get_map(s, slab_page(slab));
	slab_unlock(slab_page(slab));
#endif
}

/* uses in both branches of a conditional: left alone */
static void branches(struct kmem_cache *s, struct slab *slab)
{
#ifdef CONFIG_SLUB_DEBUG
	int a = 0;

	slab_lock(slab_page(slab));
	get_map(s, slab_page(slab));
#else
	int b = 0;

	slab_unlock(slab_page(slab));
#endif
}

/* the definition and its stub under #else: only the definition that takes
 * slab_page() gets the local */
#ifdef CONFIG_SLUB_DEBUG
static int free_debug(struct kmem_cache *s, struct slab *slab, void *object)
{
	int ret = 0;

	slab_lock(slab_page(slab));
	if (!check(s, slab_page(slab), object))
		ret = 1;
	slab_unlock(slab_page(slab));
	return ret;
}
#else
static inline int free_debug(struct kmem_cache *s, struct slab *slab,
			     void *object) { return 0; }
#endif

/* two definitions of one name that both take slab_page(): left alone */
#ifdef CONFIG_A
static void twin(struct slab *slab)
{
	int a = 0;

	get(slab_page(slab));
	get(slab_page(slab));
	get(slab_page(slab));
}
#else
static void twin(struct slab *slab)
{
	int b = 0;

	put(slab_page(slab));
	put(slab_page(slab));
	put(slab_page(slab));
}
#endif
