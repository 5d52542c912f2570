/* zsmalloc.res: code this rule has converted already, which it must leave alone */
/* 5.10's mm/zsmalloc.c: the first object offset kept in SLOB's ->units */
static inline int get_first_obj_offset(struct page *page)
{
	return page->page_type;
}

static inline void set_first_obj_offset(struct page *page, int offset)
{
	page->page_type = offset;
}

/* new code, not in 5.10: a third user of the same word */
static inline void clear_first_obj_offset(struct page *page)
{
	page->page_type = 0;
}

/* a struct that has its own units is left alone */
static int units_of(struct slob_block *b)
{
	return b->units;
}
