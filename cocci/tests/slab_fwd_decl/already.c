/* new code, not in 5.10: a header that declares struct slab already */
struct page;
struct slab;

void slab_account_hook(struct slab *slab, struct page *page);
