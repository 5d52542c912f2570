/* A new chain-freeing function in new code. */
static void new_free_chain(struct page *chain)
{
	while (chain) {
		struct page *next = chain->freelist;

		__free_page(chain);
		chain = next;
	}
}

int keep_me;
