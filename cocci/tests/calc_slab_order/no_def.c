/* without SLUB's definition nothing is renamed, not even a 4-argument call */
static int other(void)
{
	return slab_order(a, b, c, d);
}
