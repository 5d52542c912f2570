/* basic.res: code this rule has converted already, which it must leave alone */
size_t ksize(const void *);

#ifdef CONFIG_HAVE_HARDENED_USERCOPY_ALLOCATOR
#else
#endif

void kfree(const void *);
