/* SPDX-License-Identifier: MIT */
/*
 * tmemctl freeable: what xl tmem-freeable printed, the memory tmemd could
 * give back to the host at once (the frames its ephemeral pages hold,
 * and free frames not given back yet), from "status".
 */
#include "args.h"
#include "tmem_proto.h"

static void human(struct hout *o, json_t *r)
{
	uint64_t pages = hu64(o, r, "pool.freeable_pages");
	char size[16];

	fmt_pages(size, sizeof(size), pages);
	fprintf(o->f, "freeable: %s (%llu pages)\n", size, (unsigned long long)pages);
}

int cmd_freeable(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	struct cmd_pos pos;
	json_t *status, *pages;
	int rc;

	if (!cmd_args(&opts, argc, argv, NULL, 0, 0, &pos, &rc))
		return rc;
	rc = tmemctl_call(&opts, "status", NULL, &status);
	if (rc)
		return rc;
	if (!opts.json) {
		rc = print_reply("freeable", status, human);
		json_decref(status);
		return rc;
	}
	pages = jpath(status, "pool.freeable_pages");
	if (!json_is_integer(pages)) {
		fprintf(stderr, "tmemctl: freeable: tmemd's reply lacks \"pool.freeable_pages\"\n");
		json_decref(status);
		return EXIT_FAILED;
	}
	rc = print_json(json_pack("{s:I, s:I}", "freeable_pages", json_integer_value(pages),
				  "freeable_bytes",
				  json_integer_value(pages) * (json_int_t)TMEM_PAGE_SIZE));
	json_decref(status);
	return rc;
}
