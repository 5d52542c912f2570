/* AMD-style walkers (drivers/iommu/amd/iommu.c in 5.10) with a new
 * 7-level page table: free_pt_l7() is new, and so is the PAGE_MODE_7
 * case of free_sub_pt() that calls it. */
static struct page *free_pt_page(unsigned long pt, struct page *freelist)
{
	struct page *p = virt_to_page((void *)pt);

	p->freelist = freelist;

	return p;
}

static struct page *free_pt_l7(unsigned long pt, struct page *freelist)
{
	u64 *ptes = (u64 *)pt;
	int i;

	for (i = 0; i < 512; ++i) {
		if (!IOMMU_PTE_PRESENT(ptes[i]))
			continue;
		freelist = free_pt_l6((unsigned long)IOMMU_PTE_PAGE(ptes[i]), freelist);
	}

	return free_pt_page(pt, freelist);
}

static struct page *free_sub_pt(unsigned long root, int mode,
				struct page *freelist)
{
	switch (mode) {
	case PAGE_MODE_NONE:
		break;
	case PAGE_MODE_1_LEVEL:
		freelist = free_pt_page(root, freelist);
		break;
	case PAGE_MODE_7_LEVEL:
		freelist = free_pt_l7(root, freelist);
		break;
	default:
		BUG();
	}

	return freelist;
}

static struct page *free_clear_pte(u64 *pte, u64 pteval, struct page *freelist)
{
	if (!IOMMU_PTE_PRESENT(pteval))
		return freelist;

	return free_sub_pt((unsigned long)IOMMU_PTE_PAGE(pteval),
			   IOMMU_PTE_MODE(pteval), freelist);
}
