/* Left alone: page_slab() once; a page assigned again after the test; the
 * name slab taken; a page parameter; a guarded call that does not take the
 * page's slab; a NULL test that does not leave the function. */
static struct slab *once(gfp_t flags)
{
	struct page *page;

	page = alloc_pages(flags, 0);
	if (!page)
		return NULL;
	__SetPageSlab(page);
	return page_slab(page);
}

static void again(void *a, void *b)
{
	struct page *page;

	page = virt_to_head_page(a);
	use(page_slab(page));
	page = virt_to_head_page(b);
	use(page_slab(page));
}

static void named(void *a, struct slab *slab)
{
	struct page *page;

	page = virt_to_head_page(a);
	use(page_slab(page), slab);
	use(page_slab(page));
}

static void param(struct page *page)
{
	if (!page)
		return;
	use(page_slab(page));
	use(page_slab(page));
}

static struct slab *guarded(gfp_t flags)
{
	struct page *page;

	page = alloc_pages(flags, 0);
	if (page)
		account(page, 0);
	if (!page)
		return NULL;
	return page_slab(page);
}

static void stays(gfp_t flags)
{
	struct page *page;

	page = alloc_pages(flags, 0);
	if (!page)
		pr_warn("no page");
	use(page_slab(page));
	use(page_slab(page));
}

static void declared(void *a)
{
	struct page *page;
	struct slab *slab = NULL;

	page = virt_to_head_page(a);
	use(page_slab(page));
	use(page_slab(page));
}

static void in_a_branch(gfp_t flags, bool retry)
{
	struct page *page;

	page = alloc_pages(flags, 0);
	if (retry) {
		page = alloc_pages(flags, 1);
		if (!page)
			return;
	}
	use(page_slab(page));
	use(page_slab(page));
}
