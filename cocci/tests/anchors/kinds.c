/* anchors/definition.cocci: every kind of top-level declaration it locates */
struct page {
	unsigned long flags;
};

enum slab_state {
	DOWN,
	UP
};

int page_to_nid(const struct page *page);

/* a comment above the definition */
static inline int
compound_order(struct page *page)
{
	return page->flags;
}

static int user(struct page *page)
{
	return compound_order(page);	/* a call is not a declaration */
}
