/* 5.10's include/linux/kasan.h, its prototypes converted */
#include <linux/types.h>

struct kmem_cache;
struct page;
struct vm_struct;
struct task_struct;

void kasan_poison_slab(struct slab *slab);
