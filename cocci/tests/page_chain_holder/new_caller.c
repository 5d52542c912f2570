/* AMD-style callers (5.10's amd/iommu.c) and a new caller that frees a
 * range of a domain: a chain built across several calls, a != NULL test. */
static void free_page_list(struct page *freelist)
{
	while (freelist != NULL) {
		unsigned long p = (unsigned long)page_address(freelist);
		freelist = freelist->freelist;
		free_page(p);
	}
}

static int map_range(struct protection_domain *dom, u64 *pte, int count)
{
	struct page *freelist = NULL;
	bool updated = false;
	int i;

	for (i = 0; i < count; ++i)
		freelist = free_clear_pte(&pte[i], pte[i], freelist);

	if (freelist != NULL)
		updated = true;

	if (updated)
		domain_flush_tlb_pde(dom);

	free_page_list(freelist);
	return 0;
}

static void new_trim_domain(struct dmar_domain *domain, unsigned long last)
{
	struct page *freelist = domain_unmap(domain, 0, last);

	free_page_list(freelist);
}
