/* a member that is not named: another structure's page member is left alone */
struct page_cursor {
	struct page *page;
};

static void start(struct page_cursor *pc, void *object)
{
	pc->page = virt_to_head_page(object);
}
