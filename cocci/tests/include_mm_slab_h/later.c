/* Not in 5.10: a later include list, with more after <asm/sections.h>. */
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/kstrtox.h>
#include <asm/sections.h>
#include <linux/vmalloc.h>

static bool enable_checks __initdata = true;

/* Not in 5.10: a later check_heap_object() helper (is_kmap_addr() is 6.0's). */
static inline bool kmap_span_ok(const void *ptr, unsigned long n)
{
	unsigned long addr = (unsigned long)ptr;

	return !is_kmap_addr(ptr) || n <= (addr | (PAGE_SIZE - 1)) - addr + 1;
}
