// Only the variable named is converted: another page of the same
// function, a page held in a struct of the branch's, and var->next (a
// page chain, where struct slab's next chains slabs) stay as they are.
struct slabconv_holder {
	struct page *pg;
};

static int slabconv_mixed_sum(struct page *page, struct page *other,
			      struct slabconv_holder *h)
{
	if (!PageSlab(page))
		return page_count(page);
	if (page->next)
		return page->inuse + other->inuse;
	return page->inuse + h->pg->inuse;
}
