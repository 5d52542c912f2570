/*
 * Nothing here uses user_setup_object(): a member of that name, a function
 * of a similar name, a comment that names it.  New code, not in 5.10.
 */
struct user_ops {
	void *(*user_setup_object)(struct kmem_cache *s, struct page *page, void *p);
};

static void *user_ops_setup(struct user_ops *ops, struct kmem_cache *s, struct page *page)
{
	/* user_setup_object(s, page, p) is another's */
	return ops->user_setup_object(s, page, NULL) + user_setup_object_of(s, page, NULL);
}
