/* SPDX-License-Identifier: MIT */
/*
 * tmemctl list [--all] [CLIENT]: the connected clients (or one) and
 * their settings; with --all also the settings stored for clients that
 * are not attached and the parked clients (tmemctl forget removes
 * those).
 */
#include <string.h>

#include "args.h"

/* A stored setting: absent means "not set here, the default applies". */
static void stored_field(char *buf, size_t len, json_t *settings, const char *key)
{
	json_t *v = json_object_get(settings, key);

	if (!v)
		snprintf(buf, len, "-");
	else if (json_is_null(v))
		snprintf(buf, len, "none");
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "yes" : "no");
	else if (json_is_integer(v) && strstr(key, "_pages"))
		fmt_pages(buf, len, (uint64_t)json_integer_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))  /* compress: off, lz4, zstd:LEVEL */
		snprintf(buf, len, "%s", json_string_value(v));
	else
		snprintf(buf, len, "?");
}

static void print_stored(struct hout *o, json_t *stored)
{
	static const char *const keys[] = { "weight", "ephemeral_max_pages",
					    "persistent_max_pages", "compress", "frozen",
					    "spill_max_pages" };
	size_t i, j;
	json_t *e, *u;

	fprintf(o->f, "\n%-20s %-8s %6s %9s %9s %-7s %-6s %9s  %s\n", "STORED", "ATTACHED",
		"WEIGHT", "EPH-MAX", "PERS-MAX", "COMP", "FROZEN", "SPILL-MAX", "SHARED-AUTH");
	json_array_foreach(stored, i, e) {
		json_t *s = hval(o, e, "settings", json_is_object_fn);
		char f[6][16];

		for (size_t k = 0; k < 6; k++)
			stored_field(f[k], sizeof(f[k]), s, keys[k]);
		fprintf(o->f, "%-20s %-8s %6s %9s %9s %-7s %-6s %9s ", hstr(o, e, "name"),
			hbool(o, e, "attached") ? "yes" : "no", f[0], f[1], f[2], f[3], f[4], f[5]);
		json_array_foreach(harray(o, e, "shared_auth"), j, u)
			fprintf(o->f, " %s", json_is_string(u) ? json_string_value(u) : "?");
		fputc('\n', o->f);
	}
}

/* The shared-pool grants in force, tmemd.conf's too (issue 30). */
static void print_grants(struct hout *o, json_t *grants)
{
	size_t i;
	json_t *g;

	if (json_array_size(grants) == 0)
		return;
	fprintf(o->f, "\n%-36s %-41s %s\n", "SHARED POOL", "MAY JOIN", "GRANTED BY");
	json_array_foreach(grants, i, g)
		fprintf(o->f, "%-36s %-41s %s\n", hstr(o, g, "uuid"), hstr(o, g, "client"),
			hstr(o, g, "from"));
}

/* Which settings tmemctl stored, which beat tmemd.conf's (issue 30).
 * Absent from an older tmemd: nothing printed. */
static void print_sources(struct hout *o, json_t *clients)
{
	static const char *const keys[] = { "weight", "ephemeral_max_pages",
					    "persistent_max_pages", "compress", "frozen",
					    "spill_max_pages" };
	bool header = false;
	size_t i;
	json_t *c;

	json_array_foreach(clients, i, c) {
		json_t *from = json_object_get(c, "from");
		bool any = false;

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			const char *src = json_string_value(json_object_get(from, keys[k]));

			if (!src || strcmp(src, "tmemctl"))
				continue;
			if (!header)
				fprintf(o->f, "\nSET BY TMEMCTL (beats tmemd.conf; tmemctl unset CLIENT "
					"goes back to the file)\n");
			header = true;
			if (!any)
				fprintf(o->f, "%-20s ", hstr(o, c, "client"));
			fprintf(o->f, "%s%s", any ? ", " : "", keys[k]);
			any = true;
		}
		if (any)
			fputc('\n', o->f);
	}
}

static void human(struct hout *o, json_t *r)
{
	print_clients_table(o, harray(o, r, "clients"));
	print_sources(o, harray(o, r, "clients"));
	if (!json_object_get(r, "stored"))
		return;
	print_stored(o, harray(o, r, "stored"));
	print_parked(o, harray(o, r, "parked"));
	/* Absent from an older tmemd: nothing printed. */
	if (json_object_get(r, "recovered"))
		print_recovered(o, harray(o, r, "recovered"));
	if (json_object_get(r, "grants"))
		print_grants(o, harray(o, r, "grants"));
}

int cmd_list(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	bool all = false;
	const struct cmd_opt extra[] = {
		{ .name = "all", .flag = &all, .short_name = 'a' },
		{ NULL },
	};
	struct cmd_pos pos;
	json_t *args;
	int rc;

	if (!cmd_args(&opts, argc, argv, extra, 0, 1, &pos, &rc))
		return rc;
	if (pos.argc && !check_client("list", pos.argv[0]))
		return EXIT_USAGE;
	args = json_pack("{s:b}", "all", all);
	if (pos.argc)
		json_object_set_new(args, "client", json_string(pos.argv[0]));
	return run_request(&opts, "list", args, human);
}
