/* new code, not in 5.10: a helper that drops the vector and its tag bit */
static struct obj_cgroup **slab_take_objcgs(struct slab *slab)
{
	struct obj_cgroup **vec;

	vec = (struct obj_cgroup **)((unsigned long)slab_page(slab)->obj_cgroups & ~0x1UL);
	slab_page(slab)->obj_cgroups = NULL;
	return vec;
}

static bool slab_set_objcgs(struct slab *slab, struct obj_cgroup **vec)
{
	return !cmpxchg(&slab_page(slab)->obj_cgroups, NULL,
			(struct obj_cgroup **)((unsigned long)vec | 0x1UL));
}
