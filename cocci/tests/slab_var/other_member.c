/* 5.10's mem_cgroup_from_obj(): a member struct slab does not have. */
struct mem_cgroup *mem_cgroup_from_obj(void *p)
{
	struct page *page;

	if (mem_cgroup_disabled())
		return NULL;

	page = virt_to_head_page(p);
	if (!page->mem_cgroup)
		return NULL;
	if (page_has_obj_cgroups(page))
		return obj_to_index(page->slab_cache, page, p) ? NULL : root_mem_cgroup;

	/* All other pages use page->mem_cgroup */
	return page->mem_cgroup;
}
