/* SPDX-License-Identifier: MIT */
/* tmemctl pool-size SIZE: grow or shrink the pool (not persistent). */
#include "args.h"

static void human(struct hout *o, json_t *r)
{
	char total[16], freep[16];

	hpages(o, total, sizeof(total), r, "total_pages");
	hpages(o, freep, sizeof(freep), r, "free_pages");
	fprintf(o->f, "pool: %s (%llu pages), %s free\n", total,
		(unsigned long long)hu64(o, r, "total_pages"), freep);
}

int cmd_pool_size(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	struct cmd_pos pos;
	uint64_t pages;
	int rc;

	if (!cmd_args(&opts, argc, argv, NULL, 1, 1, &pos, &rc))
		return rc;
	if (parse_size_pages(pos.argv[0], false, &pages) || pages == 0) {
		usage_error("pool-size: bad size \"%s\" (e.g. 256M, 2G, 1000p; bytes must "
			    "be whole 4 KiB pages)", pos.argv[0]);
		return EXIT_USAGE;
	}
	return run_request(&opts, "pool-size",
			   json_pack("{s:I}", "pages", (json_int_t)pages), human);
}
