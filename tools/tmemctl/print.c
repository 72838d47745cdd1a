/* SPDX-License-Identifier: MIT */
/* Human output: tables and sizes shared by status, stats, list and top. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tmem_proto.h"
#include "tmemctl.h"

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("tmemctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see tmemctl --help)\n", stderr);
}

int print_json(json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
	return EXIT_OK;
}

/* Follows a dotted path ("pages.ephemeral") through nested objects. */
json_t *jpath(json_t *obj, const char *path)
{
	char key[64];

	while (obj && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		obj = json_object_get(obj, key);
		path += n + (path[n] == '.');
	}
	return obj;
}

uint64_t jget_u64(json_t *obj, const char *path)
{
	json_t *v = jpath(obj, path);

	return json_is_integer(v) && json_integer_value(v) > 0 ?
		(uint64_t)json_integer_value(v) : 0;
}

void fmt_pages(char *buf, size_t len, uint64_t pages)
{
	static const char units[] = "KMGTP";
	double v = (double)pages * TMEM_PAGE_SIZE / 1024;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f%c", v, units[u]);
}

void fmt_cap(char *buf, size_t len, json_t *cap)
{
	if (json_is_integer(cap))
		fmt_pages(buf, len, (uint64_t)json_integer_value(cap));
	else
		snprintf(buf, len, "-");
}

static void fmt_domid(char *buf, size_t len, json_t *client)
{
	json_t *d = json_object_get(client, "domid");

	if (json_is_integer(d))
		snprintf(buf, len, "%lld", (long long)json_integer_value(d));
	else
		snprintf(buf, len, "local");
}

void print_clients_table(FILE *out, json_t *clients)
{
	size_t i;
	json_t *c;

	fprintf(out, "%-4s %-20s %-6s %6s %-6s %-4s %9s %9s %9s %9s\n", "ID", "NAME",
		"DOMID", "WEIGHT", "FROZEN", "COMP", "EPH", "EPH-MAX", "PERS", "PERS-MAX");
	json_array_foreach(clients, i, c) {
		char dom[16], eph[16], ephmax[16], pers[16], persmax[16];

		fmt_domid(dom, sizeof(dom), c);
		fmt_pages(eph, sizeof(eph), jget_u64(c, "pages.ephemeral"));
		fmt_pages(pers, sizeof(pers), jget_u64(c, "pages.persistent"));
		fmt_cap(ephmax, sizeof(ephmax), jpath(c, "caps.ephemeral_max_pages"));
		fmt_cap(persmax, sizeof(persmax), jpath(c, "caps.persistent_max_pages"));
		fprintf(out, "%-4llu %-20s %-6s %6llu %-6s %-4s %9s %9s %9s %9s\n",
			(unsigned long long)jget_u64(c, "id"),
			json_string_value(json_object_get(c, "name")), dom,
			(unsigned long long)jget_u64(c, "weight"),
			json_is_true(json_object_get(c, "frozen")) ? "yes" : "no",
			json_is_true(json_object_get(c, "compress")) ? "on" : "off",
			eph, ephmax, pers, persmax);
	}
}

void print_pool_summary(FILE *out, json_t *pool)
{
	char total[16], used[16], freep[16], eph[16], pers[16];

	fmt_pages(total, sizeof(total), jget_u64(pool, "total_pages"));
	fmt_pages(used, sizeof(used), jget_u64(pool, "used_pages"));
	fmt_pages(freep, sizeof(freep), jget_u64(pool, "free_pages"));
	fmt_pages(eph, sizeof(eph), jget_u64(pool, "ephemeral_pages"));
	fmt_pages(pers, sizeof(pers), jget_u64(pool, "persistent_pages"));
	fprintf(out, "pool: total %s  used %s  free %s  ephemeral %s  persistent %s  "
		"evictions %llu\n", total, used, freep, eph, pers,
		(unsigned long long)jget_u64(pool, "evictions"));
}
