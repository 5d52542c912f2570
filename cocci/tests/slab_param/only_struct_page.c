/* the parameter name does not matter; the type does: struct foo *foo is not a page */
static void f(int a, struct foo *foo)
{
	foo->inuse = 1;
}

static void f(int a, struct page *pg)
{
	pg->inuse = 1;
}
