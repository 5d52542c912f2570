#include <linux/atomic.h>
#include <linux/jump_label.h>
#include <asm/sections.h>

int x;
