/* demo.c - the bundled demo workload (`make demo`): a tiny request server
 * with a known call structure and CPU budget (about 3 s at WL_SCALE=1):
 *
 *   main -> serve -> handle_request (x 30)
 *                      -> parse_request                 10%
 *                      -> build_response -> checksum     30%
 *                                        -> render_html  25%
 *                      -> walk_index (recursive, depth 6) 20%
 *           serve -> flush_log                           15%
 */
#include "workload.h"

static double k;

__attribute__((noinline)) void parse_request(void) { WL_SPIN_BODY(0.010 * k); }
__attribute__((noinline)) void checksum(void) { WL_SPIN_BODY(0.030 * k); }
__attribute__((noinline)) void render_html(void) { WL_SPIN_BODY(0.025 * k); }
__attribute__((noinline)) void flush_log(void) { WL_SPIN_BODY(0.450 * k); }

__attribute__((noinline)) void build_response(void)
{
	checksum();
	render_html();
}

__attribute__((noinline)) void walk_index(int depth)
{
	WL_SPIN_BODY(0.020 * k / 6);
	if (depth > 1)
		walk_index(depth - 1);
}

__attribute__((noinline)) void handle_request(void)
{
	parse_request();
	build_response();
	walk_index(6);
}

__attribute__((noinline)) void serve(int requests)
{
	for (int i = 0; i < requests; i++)
		handle_request();
	flush_log();
}

int main(void)
{
	k = wl_scale();
	serve(30);
	return 0;
}
