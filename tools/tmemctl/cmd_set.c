/* SPDX-License-Identifier: MIT */
/*
 * tmemctl set CLIENT|-a [--weight N] [--ephemeral-max SIZE]
 *                    [--persistent-max SIZE] [--spill-max SIZE]
 *                    [--compress off|lz4|zstd[:LEVEL]]
 * A client that is not connected yet gets the settings when it connects;
 * either way they survive a tmemd restart.  -a applies them to every
 * connected client now and stores nothing (as xl tmem-set -a): a reload
 * or a restart goes back to what is stored and to tmemd.conf.
 */
#include <string.h>

#include "args.h"
#include "tmem_compress.h"
#include "tmem_size.h"

#define MAX_WEIGHT 10000 /* TMEM_MAX_WEIGHT in policy/ */

static void human(struct hout *o, json_t *r)
{
	json_t *stored = json_object_get(r, "stored");  /* absent from an older tmemd */

	if (json_is_false(stored))
		fprintf(o->f, "%s: settings applied, not stored (-a: a reload or restart goes "
			"back to tmemd.conf and what is stored)\n", hstr(o, r, "client"));
	else
		fprintf(o->f, "%s: settings saved%s\n", hstr(o, r, "client"),
			hbool(o, r, "connected") ? " and applied" :
			" (applied when it connects)");
}

static int add_size(json_t *args, const char *key, const char *flag, const char *text)
{
	uint64_t pages;
	int r = parse_size_pages(text, true, &pages);

	if (r) {
		usage_error("set: %s: bad size '%s': %s (want " TMEM_SIZE_GRAMMAR ", or none)",
			    flag, text, tmem_size_strerror(r));
		return EXIT_USAGE;
	}
	json_object_set_new(args, key, pages == UINT64_MAX ? json_null() :
			    json_integer((json_int_t)pages));
	return 0;
}

static int build_args(json_t *args, const char *weight, const char *eph,
		      const char *pers, const char *spill, const char *compress)
{
	uint64_t w;

	if (weight) {
		if (parse_uint(weight, MAX_WEIGHT, &w) || w == 0) {
			usage_error("set: --weight: expected 1..%d, not \"%s\"", MAX_WEIGHT, weight);
			return EXIT_USAGE;
		}
		json_object_set_new(args, "weight", json_integer((json_int_t)w));
	}
	if (eph && add_size(args, "ephemeral_max_pages", "--ephemeral-max", eph))
		return EXIT_USAGE;
	if (pers && add_size(args, "persistent_max_pages", "--persistent-max", pers))
		return EXIT_USAGE;
	if (spill && add_size(args, "spill_max_pages", "--spill-max", spill))
		return EXIT_USAGE;
	if (compress) {
		/* proto/tmem_compress.h: the daemon's grammar, levels included. */
		struct tmem_compress cz;
		enum tmem_compress_result r = tmem_compress_parse(compress, &cz);

		if (r != TMEM_COMPRESS_OK) {
			usage_error("set: --compress: expected " TMEM_COMPRESS_VALUES ", not \"%s\"%s",
				    compress, r == TMEM_COMPRESS_OLD_FORM ? " (on/off is gone)" : "");
			return EXIT_USAGE;
		}
		json_object_set_new(args, "compress", json_string(compress));
	}
	if (json_object_size(args) == 1) {
		usage_error("set: nothing to set");
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_set(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	const char *weight = NULL, *eph = NULL, *pers = NULL, *spill = NULL, *compress = NULL;
	bool all = false;
	const struct cmd_opt extra[] = {
		{ .name = "all", .flag = &all, .short_name = 'a' },
		{ .name = "weight", .value = &weight },
		{ .name = "ephemeral-max", .value = &eph },
		{ .name = "persistent-max", .value = &pers },
		{ .name = "spill-max", .value = &spill },
		{ .name = "compress", .value = &compress },
		{ NULL },
	};
	struct cmd_pos pos;
	json_t *args;
	int rc;

	if (!cmd_args(&opts, argc, argv, extra, 0, 1, &pos, &rc))
		return rc;
	if (all == (pos.argc == 1)) {
		usage_error("set: expected CLIENT or --all%s", all ? ", not both" : "");
		return EXIT_USAGE;
	}
	if (!all && !check_client("set", pos.argv[0]))
		return EXIT_USAGE;
	args = json_pack("{s:s}", "client", all ? "" : pos.argv[0]);
	rc = build_args(args, weight, eph, pers, spill, compress);
	if (rc) {
		json_decref(args);
		return rc;
	}
	if (all) {
		json_object_set_new(args, "live", json_true());
		return run_request_all(&opts, "set", args, human);
	}
	return run_request(&opts, "set", args, human);
}
