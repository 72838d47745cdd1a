/* SPDX-License-Identifier: MIT */
/* Latency samples, page contents and clocks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

int lat_init(struct lat *l, size_t cap)
{
	l->ns = malloc(cap * sizeof(*l->ns));
	l->n = 0;
	l->cap = cap;
	return l->ns ? 0 : -ENOMEM;
}

void lat_add(struct lat *l, uint64_t ns)
{
	if (l->n < l->cap)
		l->ns[l->n++] = ns;
}

void lat_free(struct lat *l)
{
	free(l->ns);
	l->ns = NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const struct lat *l, double p)
{
	size_t i;

	if (!l->n)
		return 0;
	i = (size_t)(p * (double)(l->n - 1) + 0.5);
	return (double)l->ns[i] / 1000.0;
}

void lat_report(struct lat *l, json_t *obj)
{
	qsort(l->ns, l->n, sizeof(*l->ns), cmp_u64);
	json_object_set_new(obj, "p50_us", json_real(pct(l, 0.50)));
	json_object_set_new(obj, "p99_us", json_real(pct(l, 0.99)));
	json_object_set_new(obj, "p999_us", json_real(pct(l, 0.999)));
	json_object_set_new(obj, "samples", json_integer((json_int_t)l->n));
}

void fill_page(void *page, enum content c, uint64_t key, uint64_t *rng)
{
	static const char text[] =
		"Transcendent memory is a pool of host RAM that guests reach "
		"page by page through a copy-in/copy-out interface. ";
	uint64_t *w = page;
	char *p = page;

	switch (c) {
	case CONTENT_ZERO:
		memset(page, 0, 4096);
		return;
	case CONTENT_RANDOM:
		for (unsigned i = 0; i < 512; i++)
			w[i] = xorshift(rng);
		break;
	case CONTENT_CORPUS: /* make_pages() copies the corpus instead */
		memset(page, 0, 4096);
		break;
	case CONTENT_TEXT:
		for (unsigned i = 0; i < 4096; i++)
			p[i] = text[i % (sizeof(text) - 1)];
		break;
	}
	w[0] = key; /* every page differs, so dedup cannot cheat */
}

double jnum(json_t *obj, const char *path)
{
	char buf[128], *save = NULL, *tok;
	json_t *v = obj;

	strncpy(buf, path, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
		v = json_object_get(v, tok);
	return v ? json_number_value(v) : 0;
}
