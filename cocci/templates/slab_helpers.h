/* slabconv template: the struct slab accessors of mm/slab.h.
 * New functions with no counterpart in the tree; inserted at the top of
 * mm/slab.h, before it includes slab_def.h and slub_def.h, whose inline
 * helpers (obj_to_index(), nearest_obj()) use them once they take a slab.
 * slab_address() names its page: page_address(slab_page(x)) is what
 * slab_fold.cocci turns into slab_address(x), and it folds mm/slab.h.
 */
/*
 * Does this memory belong to a slab cache?  Slub can return page allocator
 * memory for certain size allocations.
 */
static inline bool slab_test_cache(const struct slab *slab)
{
	return test_bit(PG_slab, &slab->flags);
}

static inline bool slab_test_multi_page(const struct slab *slab)
{
	return test_bit(PG_head, &slab->flags);
}

/*
 * If network-based swap is enabled, sl*b must keep track of whether pages
 * were allocated from pfmemalloc reserves.
 */
static inline bool slab_test_pfmemalloc(const struct slab *slab)
{
	return test_bit(PG_pfmemalloc, &slab->flags);
}

static inline void slab_set_pfmemalloc(struct slab *slab)
{
	set_bit(PG_pfmemalloc, &slab->flags);
}

static inline void slab_clear_pfmemalloc(struct slab *slab)
{
	clear_bit(PG_pfmemalloc, &slab->flags);
}

static inline void __slab_clear_pfmemalloc(struct slab *slab)
{
	__clear_bit(PG_pfmemalloc, &slab->flags);
}

static inline void *slab_address(const struct slab *slab)
{
	const struct page *page = slab_page(slab);

	return page_address(page);
}

static inline int slab_nid(const struct slab *slab)
{
	return pgflags_nid(slab->flags);
}

static inline pg_data_t *slab_pgdat(const struct slab *slab)
{
	return NODE_DATA(slab_nid(slab));
}

static inline struct slab *virt_to_slab(const void *addr)
{
	struct page *page = virt_to_page(addr);

	return page_slab(page);
}

static inline int slab_order(const struct slab *slab)
{
	if (!slab_test_multi_page(slab))
		return 0;
	return ((struct page *)slab)[1].compound_order;
}

static inline size_t slab_size(const struct slab *slab)
{
	return PAGE_SIZE << slab_order(slab);
}
