/* SPDX-License-Identifier: MIT */
/*
 * The phases that drive tmemd through libtmem with one request at a
 * time: synchronous put->get round trips and an op mix from N processes
 * (the pipelined ones are in pipeline_phases.c).  Ephemeral private
 * pools throughout, like cleancache.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "tmem.h"

#define NPAGES 64
/* With --corpus: up to this many of its pages (16 MiB), in order. */
#define NPAGES_CORPUS 4096

void bench_key_handle(uint64_t key, struct tmem_oid *oid, uint32_t *index)
{
	memset(oid, 0, sizeof(*oid));
	oid->oid[0] = key >> 8;
	*index = (uint32_t)(key & 255);
}

int bench_open_pool(const struct bench_opts *o, const char *tag,
		    uint32_t entries, uint32_t slots, struct tmem_conn **c,
		    int32_t *pool)
{
	char name[64];
	int rc;

	snprintf(name, sizeof(name), "bench-%s-%d", tag, (int)getpid());
	rc = tmem_connect_geometry(o->socket, name, entries, slots, c);
	if (rc) {
		fprintf(stderr, "tmem-bench: connect %s: %s\n",
			o->socket ? o->socket : "(default)", strerror(-rc));
		return rc;
	}
	*pool = tmem_new_pool(*c, tmem_pool_flags(0), NULL);
	if (*pool < 0) {
		rc = *pool;
		fprintf(stderr, "tmem-bench: new pool: %s\n", strerror(-rc));
		tmem_disconnect(*c);
		return rc;
	}
	return 0;
}

/* The distinct pages a phase cycles through. */
uint64_t bench_npages(const struct bench_opts *o)
{
	if (o->content != CONTENT_CORPUS)
		return NPAGES;
	return o->corpus_pages < NPAGES_CORPUS ? o->corpus_pages : NPAGES_CORPUS;
}

void *make_pages(const struct bench_opts *o)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull, n = bench_npages(o);
	char *p = aligned_alloc(4096, n * 4096);

	if (p && o->content == CONTENT_CORPUS)
		memcpy(p, o->corpus, n * 4096);
	else if (p)
		for (unsigned i = 0; i < n; i++)
			fill_page(p + i * 4096, o->content, i, &rng);
	return p;
}

int phase_roundtrip(const struct bench_opts *o, json_t *out)
{
	char *pages = make_pages(o), *buf = aligned_alloc(4096, 4096);
	struct tmem_conn *c = NULL;
	json_t *r = json_object();
	uint64_t warm = o->rt_ops / 10 + 100, misses = 0, t0 = 0, t1;
	struct lat lat = { 0 };
	int32_t pool;
	int rc;

	rc = !pages || !buf ? -ENOMEM : lat_init(&lat, o->rt_ops);
	if (!rc)
		rc = bench_open_pool(o, "rt", TMEM_DEFAULT_ENTRIES, TMEM_DEFAULT_SLOTS, &c, &pool);
	for (uint64_t i = 0; !rc && i < warm + o->rt_ops; i++) {
		uint64_t key = i % o->keys, s = now_ns();
		struct tmem_oid oid;
		uint32_t idx;
		int got;

		if (i == warm)
			t0 = s;
		bench_key_handle(key, &oid, &idx);
		rc = tmem_put(c, pool, &oid, idx, pages + (i % bench_npages(o)) * 4096);
		if (rc >= 0) {
			got = tmem_get(c, pool, &oid, idx, buf);
			rc = got < 0 ? got : 0;
			misses += got == 0;
		}
		if (i >= warm)
			lat_add(&lat, now_ns() - s);
	}
	t1 = now_ns();
	if (!rc) {
		json_object_set_new(r, "pairs", json_integer((json_int_t)o->rt_ops));
		json_object_set_new(r, "pairs_per_s",
				    json_real((double)o->rt_ops * 1e9 / (double)(t1 - t0)));
		json_object_set_new(r, "misses", json_integer((json_int_t)misses));
		lat_report(&lat, r);
		json_object_set_new(out, "roundtrip", r);
		r = NULL;
	}
	tmem_disconnect(c);
	json_decref(r);
	lat_free(&lat);
	free(pages);
	free(buf);
	return rc;
}

struct mix_result {
	uint64_t ops, hits, gets, errors, elapsed_ns;
};

static int mix_child(const struct bench_opts *o, unsigned id,
		     struct mix_result *res, uint64_t *samples)
{
	char *pages = make_pages(o), *buf = aligned_alloc(4096, 4096);
	unsigned total = o->mix_put + o->mix_get + o->mix_flush;
	uint64_t rng = 0x1234567ull + id * 7919, t0;
	struct tmem_conn *c;
	int32_t pool;
	char tag[16];
	int rc;

	snprintf(tag, sizeof(tag), "mix%u", id);
	if (!pages || !buf || bench_open_pool(o, tag, TMEM_DEFAULT_ENTRIES, TMEM_DEFAULT_SLOTS, &c, &pool))
		return 1;
	t0 = now_ns();
	for (uint64_t i = 0; i < o->ops; i++) {
		uint64_t key = xorshift(&rng) % o->keys, s = now_ns();
		unsigned pick = (unsigned)(xorshift(&rng) % total);
		struct tmem_oid oid;
		uint32_t idx;

		bench_key_handle(key, &oid, &idx);
		if (pick < o->mix_put) {
			rc = tmem_put(c, pool, &oid, idx, pages + (i % bench_npages(o)) * 4096);
		} else if (pick < o->mix_put + o->mix_get) {
			rc = tmem_get(c, pool, &oid, idx, buf);
			res->gets++;
			res->hits += rc == 1;
		} else {
			rc = tmem_flush_page(c, pool, &oid, idx);
		}
		res->errors += rc < 0;
		samples[i] = now_ns() - s;
	}
	res->elapsed_ns = now_ns() - t0;
	res->ops = o->ops;
	tmem_disconnect(c);
	free(pages);
	free(buf);
	return res->errors ? 1 : 0;
}

int phase_mix(const struct bench_opts *o, json_t *out)
{
	size_t shm_size = o->clients * (sizeof(struct mix_result) + o->ops * 8);
	char *shm = mmap(NULL, shm_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct mix_result sum = { 0 };
	struct lat lat = { 0 };
	json_t *r;
	int failed = 0;

	if (shm == MAP_FAILED || lat_init(&lat, o->clients * o->ops))
		return -ENOMEM;
	for (unsigned i = 0; i < o->clients; i++) {
		struct mix_result *res = (void *)(shm + i * sizeof(*res));
		uint64_t *samples = (void *)(shm + o->clients * sizeof(*res) + i * o->ops * 8);

		if (fork() == 0)
			_exit(mix_child(o, i, res, samples));
	}
	for (unsigned i = 0; i < o->clients; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	}
	for (unsigned i = 0; i < o->clients; i++) {
		struct mix_result *res = (void *)(shm + i * sizeof(*res));
		uint64_t *samples = (void *)(shm + o->clients * sizeof(*res) + i * o->ops * 8);

		sum.ops += res->ops;
		sum.hits += res->hits;
		sum.gets += res->gets;
		sum.errors += res->errors;
		if (res->elapsed_ns > sum.elapsed_ns)
			sum.elapsed_ns = res->elapsed_ns;
		for (uint64_t k = 0; k < res->ops; k++)
			lat_add(&lat, samples[k]);
	}
	r = json_pack("{s:i,s:s,s:I,s:I,s:I,s:f}", "clients", (int)o->clients,
		      "mix", "put:get:flush", "ops", (json_int_t)sum.ops,
		      "errors", (json_int_t)sum.errors,
		      "failed_clients", (json_int_t)failed,
		      "ops_per_s", sum.elapsed_ns ? (double)sum.ops * 1e9 / (double)sum.elapsed_ns : 0.0);
	json_object_set_new(r, "ratio", json_sprintf("%u:%u:%u", o->mix_put, o->mix_get, o->mix_flush));
	json_object_set_new(r, "get_hit_rate", json_real(sum.gets ? (double)sum.hits / (double)sum.gets : 0.0));
	lat_report(&lat, r);
	json_object_set_new(out, "mix", r);
	lat_free(&lat);
	munmap(shm, shm_size);
	return failed ? -EIO : 0;
}

static int cpu_ticks(int pid, unsigned long long *ticks)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -EINVAL;
	*ticks = ut + st;
	return 0;
}

/* tmemd's CPU while one client stays connected and idle. */
int phase_idle(const struct bench_opts *o, json_t *out)
{
	unsigned long long a, b;
	struct tmem_conn *c;
	int32_t pool;
	double pct;
	int rc;

	rc = bench_open_pool(o, "idle", TMEM_DEFAULT_ENTRIES, TMEM_DEFAULT_SLOTS, &c, &pool);
	if (rc)
		return rc;
	usleep(200000);
	rc = cpu_ticks(o->idle_pid, &a);
	sleep(o->idle_seconds);
	if (!rc)
		rc = cpu_ticks(o->idle_pid, &b);
	tmem_disconnect(c);
	if (rc)
		return rc;
	pct = 100.0 * (double)(b - a) / (double)sysconf(_SC_CLK_TCK) / o->idle_seconds;
	json_object_set_new(out, "idle", json_pack("{s:i,s:i,s:f}", "pid", o->idle_pid,
						   "seconds", (int)o->idle_seconds,
						   "cpu_percent", pct));
	return 0;
}
