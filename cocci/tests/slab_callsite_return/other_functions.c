/*
 * Nothing here calls kasan_addr_to_slab(): a member of the same name and
 * a function whose name only begins with it are left alone.  New code,
 * not in 5.10.
 */
struct user_kasan_ops {
	struct page *(*kasan_addr_to_slab)(const void *addr);
};

static struct page *user_kasan_lookup(struct user_kasan_ops *ops, const void *addr)
{
	return ops->kasan_addr_to_slab(addr) ?: kasan_addr_to_slab_or_page(addr);
}
