/* SPDX-License-Identifier: MIT */
/* tmemctl pool-size SIZE: grow or shrink the pool (not persistent). */
#include "args.h"
#include "tmem_size.h"

static void human(struct hout *o, json_t *r)
{
	char total[16], freep[16];

	hpages(o, total, sizeof(total), r, "total_pages");
	hpages(o, freep, sizeof(freep), r, "free_pages");
	fprintf(o->f, "pool: %s (%llu pages), %s free\n", total,
		(unsigned long long)hu64(o, r, "total_pages"), freep);
}

/* COMMAND SIZE, SIZE a whole number of pages above 0, as {pages}: pool-size
 * and release. */
int run_size_command(const struct tmemctl_opts *gopts, int argc, char **argv,
		     const char *cmd, human_fn print)
{
	struct tmemctl_opts opts = *gopts;
	struct cmd_pos pos;
	uint64_t pages;
	int rc;

	if (!cmd_args(&opts, argc, argv, NULL, 1, 1, &pos, &rc))
		return rc;
	rc = parse_size_pages(pos.argv[0], false, &pages);
	if (!rc && pages == 0)
		rc = TMEM_SIZE_RANGE;
	if (rc) {
		usage_error("%s: bad size '%s': %s (want " TMEM_SIZE_GRAMMAR ")",
			    cmd, pos.argv[0], tmem_size_strerror(rc));
		return EXIT_USAGE;
	}
	return run_request(&opts, cmd, json_pack("{s:I}", "pages", (json_int_t)pages), print);
}

int cmd_pool_size(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	return run_size_command(gopts, argc, argv, "pool-size", human);
}
