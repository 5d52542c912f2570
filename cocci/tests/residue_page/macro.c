// Macro bodies are parsed too: a cast in a #define, and an access through
// a macro that yields a struct page.
#define to_page(x) ((struct page *)(x))
#define PAGE_SIZEOF sizeof(struct page)

static void *first_free(struct slab *slab)
{
	return to_page(slab)->freelist;
}
