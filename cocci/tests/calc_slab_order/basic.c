static inline unsigned int slab_order(unsigned int size,
		unsigned int min_objects, unsigned int max_order,
		unsigned int fract_leftover)
{
	return size + min_objects + max_order + fract_leftover;
}

static inline int calculate_order(unsigned int size)
{
	int order = slab_order(size, 1, slub_max_order, 1);

	return order;
}

/* new code: a user of the one-argument struct slab helper stays as it is */
static int pages_in_slab(const struct slab *slab)
{
	return 1 << slab_order(slab);
}
