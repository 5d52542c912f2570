/* Not in 5.10: kmem_obj_info() (5.12) and its stub, dropped as the
 * declarations of __check_heap_object() are; its neighbour stays. */
#ifdef CONFIG_PRINTK
void kmem_obj_info(struct kmem_obj_info *kpp, void *object, struct page *page);
#else
static inline void kmem_obj_info(struct kmem_obj_info *kpp, void *object,
				 struct page *page) { }
#endif
bool kmem_valid_obj(void *object);
