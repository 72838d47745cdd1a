/* SPDX-License-Identifier: MIT */
/*
 * One frame of tmemctl top: per-client rows from a stats document, the
 * rates over the interval since the previous frame (PUTS/s, GETS/s and
 * HIT% all over the same interval; "-" on the first frame, which has
 * none), sorted by the chosen column.
 */
#include <string.h>
#include <time.h>

#include "top.h"

struct row {
	struct top_sample s;
	char dom[16], eph_text[16], pers_text[16], tier_text[16];
	uint64_t eph, pers, evict;
	double puts, gets, hit;   /* per second / percent; < 0: no interval */
	double readbacks;         /* per second from the host tier; < 0: no interval */
	bool frozen;
};

static const char *const sort_names[TOP_SORT_NR] = {
	[TOP_SORT_NAME] = "name", [TOP_SORT_EPH] = "eph", [TOP_SORT_PERS] = "pers",
	[TOP_SORT_PUTS] = "puts", [TOP_SORT_GETS] = "gets", [TOP_SORT_HIT] = "hit",
	[TOP_SORT_EVICT] = "evict",
};

int top_sort_parse(const char *text, enum top_sort *out)
{
	for (int i = 0; i < TOP_SORT_NR; i++) {
		if (!strcmp(text, sort_names[i])) {
			*out = (enum top_sort)i;
			return 0;
		}
	}
	return -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const struct top_sample *find_prev(const struct top *t, const char *name)
{
	for (size_t i = 0; i < t->nr_prev; i++)
		if (strcmp(t->prev[i].name, name) == 0)
			return &t->prev[i];
	return NULL;
}

static void fill_row(struct hout *o, const struct top *t, json_t *c, double dt, struct row *r)
{
	const struct top_sample *p;

	memset(r, 0, sizeof(*r));
	snprintf(r->s.name, sizeof(r->s.name), "%s", hstr(o, c, "name"));
	r->s.puts = hu64(o, c, "ops.puts");
	r->s.gets = hu64(o, c, "ops.gets");
	r->s.succ_gets = hu64(o, c, "ops.succ_gets");
	r->eph = hu64(o, c, "pages.ephemeral");
	r->pers = hu64(o, c, "pages.persistent");
	r->evict = hu64(o, c, "ops.evictions");
	r->frozen = hbool(o, c, "frozen");
	/* The host tier (absent from an older tmemd: 0). */
	r->s.readbacks = json_integer_value(jpath(c, "tier.readbacks"));
	fmt_pages(r->tier_text, sizeof(r->tier_text),
		  (uint64_t)json_integer_value(jpath(c, "tier.pages")));
	fmt_pages(r->eph_text, sizeof(r->eph_text), r->eph);
	fmt_pages(r->pers_text, sizeof(r->pers_text), r->pers);
	hdomid(o, r->dom, sizeof(r->dom), c);
	p = find_prev(t, r->s.name);
	r->puts = r->gets = r->hit = r->readbacks = -1;
	if (p && dt > 0) {
		uint64_t dgets = r->s.gets - p->gets;

		r->readbacks = (double)(r->s.readbacks - p->readbacks) / dt;
		r->puts = (double)(r->s.puts - p->puts) / dt;
		r->gets = (double)dgets / dt;
		if (dgets)
			r->hit = 100.0 * (double)(r->s.succ_gets - p->succ_gets) / (double)dgets;
	}
}

static double key_of(const struct row *r, enum top_sort k)
{
	switch (k) {
	case TOP_SORT_EPH: return (double)r->eph;
	case TOP_SORT_PERS: return (double)r->pers;
	case TOP_SORT_PUTS: return r->puts;
	case TOP_SORT_GETS: return r->gets;
	case TOP_SORT_HIT: return r->hit;
	case TOP_SORT_EVICT: return (double)r->evict;
	default: return 0;
	}
}

/* True when x goes before y: names ascending; every other column
 * largest first, then by name. */
static bool before(const struct row *x, const struct row *y, enum top_sort k)
{
	double kx = key_of(x, k), ky = key_of(y, k);

	if (k != TOP_SORT_NAME && kx != ky)
		return kx > ky;
	return strcmp(x->s.name, y->s.name) < 0;
}

/* Insertion sort: a few hundred rows at most, and no qsort context. */
static void sort_rows(struct row *rows, size_t n, enum top_sort k)
{
	for (size_t i = 1; i < n; i++) {
		struct row r = rows[i];
		size_t j = i;

		for (; j > 0 && before(&r, &rows[j - 1], k); j--)
			rows[j] = rows[j - 1];
		rows[j] = r;
	}
}

static void rate(char *buf, size_t len, double v, int decimals)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", decimals, v);
}

static void print_row(FILE *f, const struct row *r)
{
	char puts[16], gets[16], hit[16], rb[16];

	rate(puts, sizeof(puts), r->puts, 0);
	rate(gets, sizeof(gets), r->gets, 0);
	rate(hit, sizeof(hit), r->hit, 1);
	rate(rb, sizeof(rb), r->readbacks, 0);
	fprintf(f, "%-20s %-6s %9s %9s %10s %10s %6s %9llu %-6s %9s %8s\n", r->s.name, r->dom,
		r->eph_text, r->pers_text, puts, gets, hit, (unsigned long long)r->evict,
		r->frozen ? "yes" : "no", r->tier_text, rb);
}

void top_frame(struct hout *o, json_t *stats)
{
	struct top *t = o->ctx;
	json_t *clients = harray(o, stats, "clients"), *c;
	double now = now_s(), dt = t->prev_time ? now - t->prev_time : 0;
	struct row rows[TOP_MAX_CLIENTS];
	size_t i, n = 0;

	if (t->tty)
		fputs("\033[H\033[2J", o->f);
	print_pool_summary(o, stats);
	print_memory_summary(o, stats);
	print_tier_summary(o, stats);
	fprintf(o->f, "\n%-20s %-6s %9s %9s %10s %10s %6s %9s %-6s %9s %8s\n", "NAME", "DOMID",
		"EPH", "PERS", "PUTS/s", "GETS/s", "HIT%", "EVICT", "FROZEN", "TIER", "RB/s");
	json_array_foreach(clients, i, c)
		if (n < TOP_MAX_CLIENTS)
			fill_row(o, t, c, dt, &rows[n++]);
	sort_rows(rows, n, t->sort);
	for (i = 0; i < n; i++) {
		print_row(o->f, &rows[i]);
		t->prev[i] = rows[i].s;
	}
	if (t->tty)
		fprintf(o->f, "\n(q to quit; sorted by %s)\n", sort_names[t->sort]);
	t->nr_prev = n;
	t->prev_time = now;
}
