/* new_code.res: code this rule has converted already, which it must leave alone */
/* new code, not in 5.10: a helper that drops the vector and its tag bit */
static struct obj_cgroup **slab_take_objcgs(struct slab *slab)
{
	struct obj_cgroup **vec;

	vec = (struct obj_cgroup **)(slab->memcg_data & ~0x1UL);
	slab->memcg_data = 0;
	return vec;
}

static bool slab_set_objcgs(struct slab *slab, struct obj_cgroup **vec)
{
	return !cmpxchg(&slab->memcg_data, 0, (unsigned long)vec | 0x1UL);
}
