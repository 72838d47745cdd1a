/* SPDX-License-Identifier: MIT */
/* tmem-bench internals: one header for the phase files. */
#ifndef TMEM_BENCH_H
#define TMEM_BENCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum content { CONTENT_ZERO, CONTENT_RANDOM, CONTENT_TEXT, CONTENT_CORPUS };

struct bench_opts {
	const char *socket;       /* guest.sock */
	bool json;
	unsigned clients;         /* processes in the mix and scale phases */
	unsigned mix_put, mix_get, mix_flush; /* ratios */
	enum content content;
	const uint8_t *corpus;    /* --corpus FILE's pages */
	uint64_t corpus_pages;
	uint64_t keys;            /* distinct pages */
	unsigned depth;           /* in flight for the pipelined phases */
	uint64_t ops;             /* per client, mix phase */
	uint64_t pipe_ops;        /* pipelined puts */
	uint64_t rt_ops;          /* round trips */
	int idle_pid;             /* 0: skip the idle-CPU measurement */
	unsigned idle_seconds;
	char phases[128];         /* comma list */
};

/* Latency samples in ns and their summary. */
struct lat {
	uint64_t *ns;
	size_t n, cap;
};
int lat_init(struct lat *l, size_t cap);
void lat_add(struct lat *l, uint64_t ns);
void lat_free(struct lat *l);
/* Sorts, then adds p50/p99/p999 (µs) to obj. */
void lat_report(struct lat *l, json_t *obj);

uint64_t now_ns(void);
/* Fills a page for key with the chosen content. */
void fill_page(void *page, enum content c, uint64_t key, uint64_t *rng);
uint64_t xorshift(uint64_t *s);
/* The pages a phase cycles through (--corpus: the corpus's first ones). */
uint64_t bench_npages(const struct bench_opts *o);
void *make_pages(const struct bench_opts *o);
/* --corpus: one core's LZ4 compress rate on those pages, this run. */
int phase_lz4(const struct bench_opts *o, json_t *out);
int load_corpus(struct bench_opts *o, const char *path);

/* Phases: each adds its results to out (a JSON object).  0 or -errno. */
int phase_memcpy(const struct bench_opts *o, json_t *out);
int phase_pipeline(const struct bench_opts *o, json_t *out);
int phase_scale(const struct bench_opts *o, json_t *out);
int phase_roundtrip(const struct bench_opts *o, json_t *out);
int phase_mix(const struct bench_opts *o, json_t *out);
int phase_memcached(const struct bench_opts *o, json_t *out);
int phase_idle(const struct bench_opts *o, json_t *out);

double jnum(json_t *obj, const char *path);

struct tmem_oid;
struct tmem_conn;
/* Bench key -> (oid, index): 256 pages per object. */
void bench_key_handle(uint64_t key, struct tmem_oid *oid, uint32_t *index);
/* Connects with that ring geometry and makes a private ephemeral pool. */
int bench_open_pool(const struct bench_opts *o, const char *tag,
		    uint32_t entries, uint32_t slots, struct tmem_conn **c,
		    int32_t *pool);

#endif /* TMEM_BENCH_H */
