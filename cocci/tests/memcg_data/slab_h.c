/* 5.10's mm/slab.h and memcontrol.c once the helpers take a slab. */
static inline struct obj_cgroup **slab_objcgs(struct slab *slab)
{
	return (struct obj_cgroup **)
		((unsigned long)slab_page(slab)->obj_cgroups & ~0x1UL);
}

static inline bool slab_has_obj_cgroups(struct slab *slab)
{
	return ((unsigned long)slab_page(slab)->obj_cgroups & 0x1UL);
}

static inline void memcg_free_slab_cgroups(struct slab *slab)
{
	kfree(slab_objcgs(slab));
	slab_page(slab)->obj_cgroups = NULL;
}

int memcg_alloc_slab_cgroups(struct slab *slab, struct kmem_cache *s,
			     gfp_t gfp)
{
	void *vec = kcalloc(1, 8, gfp);

	if (cmpxchg(&slab_page(slab)->obj_cgroups, NULL,
		    (struct obj_cgroup **) ((unsigned long)vec | 0x1UL)))
		kfree(vec);
	return 0;
}

/* a page's own vector (not a slab's) is left alone */
static void other(struct page *page)
{
	page->obj_cgroups = NULL;
}
