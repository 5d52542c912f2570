/* slabconv template: AMD IOMMU per-level page-table walkers, on a list.
 * DEFINE_FREE_PT_FN() generates free_pt_l2() .. free_pt_l6(); their names are
 * pasted with ## and their bodies are macro text, so page_chain_walk.cocci
 * cannot convert them as it converts the walkers it can see.  This is the
 * same conversion written out: the walker takes the list of freed pages
 * (linked through page->lru) instead of returning the chain.
 */
#define DEFINE_FREE_PT_FN(LVL, FN)						\
static void free_pt_##LVL (unsigned long __pt, struct list_head *list)	\
{										\
	unsigned long p;							\
	u64 *pt;								\
	int i;									\
										\
	pt = (u64 *)__pt;							\
										\
	for (i = 0; i < 512; ++i) {						\
		/* PTE present? */						\
		if (!IOMMU_PTE_PRESENT(pt[i]))					\
			continue;						\
										\
		/* Large PTE? */						\
		if (PM_PTE_LEVEL(pt[i]) == 0 ||					\
		    PM_PTE_LEVEL(pt[i]) == 7)					\
			continue;						\
										\
		p = (unsigned long)IOMMU_PTE_PAGE(pt[i]);			\
		FN(p, list);							\
	}									\
										\
	free_pt_page((unsigned long)pt, list);					\
}
