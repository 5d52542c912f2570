/* Not in 5.10: a later include list, with more after <asm/sections.h>. */
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/kstrtox.h>
#include <asm/sections.h>
#include <linux/vmalloc.h>

static bool enable_checks __initdata = true;
