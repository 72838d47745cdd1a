/* SPDX-License-Identifier: MIT */
/*
 * Pipelined puts: from one client (pipeline), and from --clients N
 * processes at once (scale).  tmemd serves each ring on one worker and
 * places a new ring on the least loaded one, so N clients on a tmemd
 * with N workers is N compressing workers: the scale phase is how the
 * workers' parallelism shows, as the one-client rate is one worker's.
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

struct pipe_client {
	struct tmem_conn *c;
	int32_t pool;
	char *pages;
};

static uint32_t pipe_depth(const struct bench_opts *o)
{
	uint32_t want = o->depth < 2 ? 2 : o->depth > 1024 ? 1024 : o->depth, p = 2;

	while (p < want)
		p <<= 1;
	return p;
}

/* In flight: at most the ring's entries.  Eight slots per entry let a
 * slot cool off in tmemd's cache before it is rewritten (see libtmem's
 * take_slot()). */
static uint32_t pipe_slots(const struct bench_opts *o)
{
	return 8 * pipe_depth(o) > TMEM_RING_MAX_SLOTS ? TMEM_RING_MAX_SLOTS : 8 * pipe_depth(o);
}

static int pipe_open(const struct bench_opts *o, const char *tag, struct pipe_client *pc)
{
	pc->pages = make_pages(o);
	if (!pc->pages)
		return -ENOMEM;
	return bench_open_pool(o, tag, pipe_depth(o), pipe_slots(o), &pc->c, &pc->pool);
}

static void pipe_close(struct pipe_client *pc)
{
	if (pc->c)
		tmem_disconnect(pc->c);
	free(pc->pages);
}

/* o->pipe_ops puts, then waits for all of them.  0 or -errno. */
static int pipe_pass(const struct bench_opts *o, struct pipe_client *pc)
{
	int rc = 0;

	for (uint64_t i = 0; i < o->pipe_ops && !rc; i++) {
		uint64_t key = i % o->keys;
		char *pg = pc->pages + (i % bench_npages(o)) * 4096;
		struct tmem_oid oid;
		uint32_t idx;

		bench_key_handle(key, &oid, &idx);
		/* Every page differs; not a corpus's, whose zero and
		 * same-filled pages are the point. */
		if (o->content != CONTENT_ZERO && o->content != CONTENT_CORPUS)
			memcpy(pg, &key, sizeof(key));
		rc = tmem_put_async(pc->c, pc->pool, &oid, idx, pg, NULL);
	}
	return rc ? rc : tmem_wait_all(pc->c);
}

static void add_ratios(json_t *out, json_t *r, double rate)
{
	if (jnum(out, "memcpy.pages_per_s") > 0) {
		json_object_set_new(r, "ratio_to_cold_memcpy",
			json_real(rate / jnum(out, "memcpy.pages_per_s")));
		json_object_set_new(r, "ratio_to_sequential_memcpy",
			json_real(rate / jnum(out, "memcpy.sequential_pages_per_s")));
	}
	if (jnum(out, "lz4.pages_per_s") > 0)
		json_object_set_new(r, "ratio_to_lz4_rate",
			json_real(rate / jnum(out, "lz4.pages_per_s")));
}

int phase_pipeline(const struct bench_opts *o, json_t *out)
{
	struct pipe_client pc = { 0 };
	uint64_t t0 = 0, t1 = 0;
	double rate;
	json_t *r;
	int rc;

	rc = pipe_open(o, "pipe", &pc);
	/* pass 0 warms the arena pages and the ring; pass 1 counts */
	for (int pass = 0; pass < 2 && !rc; pass++) {
		t0 = now_ns();
		rc = pipe_pass(o, &pc);
		t1 = now_ns();
	}
	pipe_close(&pc);
	if (rc)
		return rc;
	rate = (double)o->pipe_ops * 1e9 / (double)(t1 - t0);
	r = json_pack("{s:i,s:i,s:I,s:f}", "depth", (int)pipe_depth(o),
		      "slots", (int)pipe_slots(o), "puts", (json_int_t)o->pipe_ops,
		      "puts_per_s", rate);
	add_ratios(out, r, rate);
	json_object_set_new(out, "pipeline", r);
	return 0;
}

struct scale_result {
	int rc;
	uint64_t t0, t1;
};

/* One scale client: warm up, say so on ready, wait for go, count. */
static int scale_child(const struct bench_opts *o, unsigned id, int ready[2],
		       int go[2], struct scale_result *res)
{
	struct pipe_client pc = { 0 };
	char tag[16], b = 0;

	/* Only the parent may hold these ends: its read of ready sees EOF
	 * once every client has written or died, a client's read of go
	 * sees EOF if the parent dies. */
	close(ready[0]);
	close(go[1]);
	snprintf(tag, sizeof(tag), "scale%u", id);
	res->rc = pipe_open(o, tag, &pc);
	if (!res->rc)
		res->rc = pipe_pass(o, &pc);
	/* Ready even after a failure: the parent counts on N bytes. */
	if (write(ready[1], &b, 1) != 1)
		res->rc = res->rc ? res->rc : -EPIPE;
	close(ready[1]);
	if (read(go[0], &b, 1) != 1)
		res->rc = res->rc ? res->rc : -EPIPE;
	res->t0 = now_ns();
	if (!res->rc)
		res->rc = pipe_pass(o, &pc);
	res->t1 = now_ns();
	pipe_close(&pc);
	return res->rc ? 1 : 0;
}

/* Forks the clients; releases them together once all are warm. */
static int scale_run(const struct bench_opts *o, struct scale_result *res)
{
	int ready[2], go[2], failed = 0;
	unsigned started = 0;
	char b[64] = { 0 };

	if (pipe(ready) || pipe(go))
		return -errno;
	for (; started < o->clients; started++) {
		pid_t pid = fork();

		if (pid < 0)
			break;
		if (pid == 0)
			_exit(scale_child(o, started, ready, go, &res[started]));
	}
	close(ready[1]);
	close(go[0]);
	for (unsigned n = 0; n < started;) {
		ssize_t got = read(ready[0], b, started - n);

		if (got <= 0)
			break;
		n += (unsigned)got;
	}
	if (write(go[1], b, started) != (ssize_t)started)
		failed++;
	close(go[1]);
	close(ready[0]);
	for (unsigned i = 0; i < started; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	}
	return failed || started < o->clients ? -EIO : 0;
}

int phase_scale(const struct bench_opts *o, json_t *out)
{
	size_t size = o->clients * sizeof(struct scale_result);
	struct scale_result *res = mmap(NULL, size, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t first = UINT64_MAX, last = 0;
	double rate, one = jnum(out, "pipeline.puts_per_s");
	json_t *r;
	int rc;

	if (res == MAP_FAILED)
		return -ENOMEM;
	rc = scale_run(o, res);
	for (unsigned i = 0; !rc && i < o->clients; i++) {
		first = res[i].t0 < first ? res[i].t0 : first;
		last = res[i].t1 > last ? res[i].t1 : last;
	}
	munmap(res, size);
	if (rc)
		return rc;
	/* From the first start to the last finish: a client that ran
	 * alone for a while cannot flatter the sum. */
	rate = (double)(o->clients * o->pipe_ops) * 1e9 / (double)(last - first);
	r = json_pack("{s:i,s:i,s:I,s:f}", "clients", (int)o->clients,
		      "depth", (int)pipe_depth(o), "puts", (json_int_t)(o->clients * o->pipe_ops),
		      "puts_per_s", rate);
	if (one > 0)
		json_object_set_new(r, "ratio_to_one_client", json_real(rate / one));
	add_ratios(out, r, rate);
	json_object_set_new(out, "scale", r);
	return 0;
}
