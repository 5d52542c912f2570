/*
 * Nothing here calls obj_to_index(): a function of a similar name, a
 * member of the same name and a comment that names it are left alone.
 * New code, not in 5.10.
 */
struct user_ops {
	unsigned int (*obj_to_index)(struct page *page);
};

static unsigned int user_ops_index(struct user_ops *ops, struct page *page)
{
	/* obj_to_index(s, page, x) is the slab allocator's */
	return ops->obj_to_index(page) + obj_to_index_of(page, 1);
}
