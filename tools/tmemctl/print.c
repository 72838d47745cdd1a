/* SPDX-License-Identifier: MIT */
/*
 * Human output: tables and sizes shared by status, stats, list and top.
 *
 * A printer reads its figures through the h*() getters, which remember
 * the first key the reply lacks (or holds with the wrong type).  The text
 * goes to a memory buffer first; print_reply() shows it only when every
 * key was there, and otherwise fails with the key's name: a figure tmemd
 * did not send must never show up as 0.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

/* v when ok; else NULL, and path is remembered if it is the first. */
static json_t *hcheck(struct hout *o, const char *path, json_t *v, bool ok)
{
	if (!ok && !o->missing[0])
		snprintf(o->missing, sizeof(o->missing), "%s", path);
	return ok ? v : NULL;
}

uint64_t hu64(struct hout *o, json_t *obj, const char *path)
{
	json_t *v = jpath(obj, path);

	v = hcheck(o, path, v, json_is_integer(v) && json_integer_value(v) >= 0);
	return v ? (uint64_t)json_integer_value(v) : 0;
}

const char *hstr(struct hout *o, json_t *obj, const char *path)
{
	json_t *v = jpath(obj, path);

	v = hcheck(o, path, v, json_is_string(v));
	return v ? json_string_value(v) : "?";
}

bool hbool(struct hout *o, json_t *obj, const char *path)
{
	json_t *v = jpath(obj, path);

	return json_is_true(hcheck(o, path, v, json_is_boolean(v)));
}

json_t *hval(struct hout *o, json_t *obj, const char *path, bool (*is)(const json_t *))
{
	json_t *v = jpath(obj, path);

	return hcheck(o, path, v, v && is(v));
}

int print_reply(const char *cmd, json_t *result, human_fn human)
{
	return print_reply_ctx(cmd, result, human, NULL);
}

int print_reply_ctx(const char *cmd, json_t *result, human_fn human, void *ctx)
{
	struct hout o = { .ctx = ctx };
	char *text = NULL;
	size_t len = 0;

	o.f = open_memstream(&text, &len);
	if (!o.f) {
		fprintf(stderr, "tmemctl: %s: out of memory\n", cmd);
		return EXIT_FAILED;
	}
	human(&o, result);
	fclose(o.f);
	if (o.missing[0]) {
		fprintf(stderr, "tmemctl: %s: tmemd's reply lacks \"%s\" (tmemd and tmemctl "
			"versions differ?)\n", cmd, o.missing);
		free(text);
		return EXIT_FAILED;
	}
	fwrite(text, 1, len, stdout);
	free(text);
	return EXIT_OK;
}

void fmt_pages(char *buf, size_t len, uint64_t pages)
{
	fmt_bytes(buf, len, pages * TMEM_PAGE_SIZE);
}

void fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char units[] = "KMGTP";
	double v = (double)bytes / 1024;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f%c", v, units[u]);
}

void hpages(struct hout *o, char *buf, size_t len, json_t *obj, const char *path)
{
	fmt_pages(buf, len, hu64(o, obj, path));
}

static bool is_cap(const json_t *v)
{
	return json_is_null(v) || (json_is_integer(v) && json_integer_value(v) >= 0);
}

void hcap(struct hout *o, char *buf, size_t len, json_t *obj, const char *path)
{
	json_t *cap = hval(o, obj, path, is_cap);

	if (json_is_integer(cap))
		fmt_pages(buf, len, (uint64_t)json_integer_value(cap));
	else
		snprintf(buf, len, "-");
}

static bool is_domid(const json_t *v)
{
	return json_is_null(v) || json_is_integer(v);
}

void hdomid(struct hout *o, char *buf, size_t len, json_t *client)
{
	json_t *d = hval(o, client, "domid", is_domid);

	if (json_is_integer(d))
		snprintf(buf, len, "%lld", (long long)json_integer_value(d));
	else
		snprintf(buf, len, "local");
}

bool json_is_object_fn(const json_t *v)
{
	return json_is_object(v);
}

static bool is_array(const json_t *v)
{
	return json_is_array(v);
}

json_t *harray(struct hout *o, json_t *obj, const char *path)
{
	return hval(o, obj, path, is_array);
}

void print_clients_table(struct hout *o, json_t *clients)
{
	size_t i;
	json_t *c;

	fprintf(o->f, "%-4s %-20s %-20s %-6s %6s %-6s %-7s %9s %9s %9s %9s\n", "ID", "CLIENT",
		"NAME", "DOMID", "WEIGHT", "FROZEN", "COMP", "EPH", "EPH-MAX", "PERS", "PERS-MAX");
	json_array_foreach(clients, i, c) {
		char dom[16], eph[16], ephmax[16], pers[16], persmax[16];

		hdomid(o, dom, sizeof(dom), c);
		hpages(o, eph, sizeof(eph), c, "pages.ephemeral");
		hpages(o, pers, sizeof(pers), c, "pages.persistent");
		hcap(o, ephmax, sizeof(ephmax), c, "caps.ephemeral_max_pages");
		hcap(o, persmax, sizeof(persmax), c, "caps.persistent_max_pages");
		fprintf(o->f, "%-4llu %-20s %-20s %-6s %6llu %-6s %-7s %9s %9s %9s %9s\n",
			(unsigned long long)hu64(o, c, "id"), hstr(o, c, "client"),
			hstr(o, c, "name"), dom,
			(unsigned long long)hu64(o, c, "weight"),
			hbool(o, c, "frozen") ? "yes" : "no",
			hstr(o, c, "compress"), eph, ephmax, pers, persmax);
	}
}

/*
 * Two lines, as zramctl: the pool's frames (physical), then what is
 * stored, logical (DATA, by kind) beside compressed (COMPR) and the
 * frames they take (TOTAL), and the ratio.  Every figure says which it
 * is, so none adds up wrong with another (issue 30).
 */
void print_pool_summary(struct hout *o, json_t *doc)
{
	char total[16], used[16], freep[16], data[16], eph[16], pers[16], compr[16], ratio[16];
	json_t *r = jpath(doc, "pool.data.compression_ratio");

	hpages(o, total, sizeof(total), doc, "pool.total_pages");
	hpages(o, used, sizeof(used), doc, "pool.used_pages");
	hpages(o, freep, sizeof(freep), doc, "pool.free_pages");
	fmt_bytes(data, sizeof(data), hu64(o, doc, "pool.data.logical_bytes"));
	fmt_bytes(eph, sizeof(eph), hu64(o, doc, "pool.data.ephemeral.logical_bytes"));
	fmt_bytes(pers, sizeof(pers), hu64(o, doc, "pool.data.persistent.logical_bytes"));
	fmt_bytes(compr, sizeof(compr), hu64(o, doc, "pool.data.compressed_bytes"));
	if (json_is_number(r))
		snprintf(ratio, sizeof(ratio), "%.2f", json_number_value(r));
	else
		snprintf(ratio, sizeof(ratio), "-");
	fprintf(o->f, "pool: size %s  free %s  evictions %llu  admin flushes %llu\n",
		total, freep, (unsigned long long)hu64(o, doc, "pool.evictions"),
		(unsigned long long)hu64(o, doc, "pool.ops.ephemeral.admin_flushes"));
	fprintf(o->f, "stored: DATA %s (ephemeral %s, persistent %s)  COMPR %s  TOTAL %s  "
		"ratio %s\n", data, eph, pers, compr, used, ratio);
}

/* "45s", "12m", "5h", "3d": an age, roughly. */
static void fmt_age(char *buf, size_t len, uint64_t s)
{
	if (s < 120)
		snprintf(buf, len, "%llus", (unsigned long long)s);
	else if (s < 120 * 60)
		snprintf(buf, len, "%llum", (unsigned long long)(s / 60));
	else if (s < 48 * 3600)
		snprintf(buf, len, "%lluh", (unsigned long long)(s / 3600));
	else
		snprintf(buf, len, "%llud", (unsigned long long)(s / 86400));
}

void print_parked(struct hout *o, json_t *parked)
{
	size_t i;
	json_t *p;

	if (json_array_size(parked) == 0)
		return;
	fprintf(o->f, "\n%-41s %-20s %9s %5s %6s\n", "PARKED", "NAME", "PAGES", "POOLS", "AGE");
	json_array_foreach(parked, i, p) {
		char pages[16], age[24];

		hpages(o, pages, sizeof(pages), p, "pages");
		fmt_age(age, sizeof(age), hu64(o, p, "age_seconds"));
		fprintf(o->f, "%-41s %-20s %9s %5llu %6s\n", hstr(o, p, "client"),
			hstr(o, p, "name"), pages, (unsigned long long)hu64(o, p, "pools"), age);
	}
}

/* Clients a start recovered that have not come back (issue 30). */
void print_recovered(struct hout *o, json_t *rec)
{
	size_t i;
	json_t *e;

	if (json_array_size(rec) == 0)
		return;
	fprintf(o->f, "\n%-41s %9s %9s  %s\n", "RECOVERED", "EPH", "PERS",
		"(not back yet: freed after reattach-grace, or now by tmemctl forget)");
	json_array_foreach(rec, i, e) {
		char eph[16], pers[16];

		hpages(o, eph, sizeof(eph), e, "pages.ephemeral");
		hpages(o, pers, sizeof(pers), e, "pages.persistent");
		fprintf(o->f, "%-41s %9s %9s\n", hstr(o, e, "client"), eph, pers);
	}
}
