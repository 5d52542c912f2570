#include <asm/sections.h>
#include "slab.h"

int x;
