/* SPDX-License-Identifier: MIT */
/*
 * The same put/get workload against memcached on loopback: the bench
 * starts its own memcached (Debian's /usr/bin/memcached) on a free
 * 127.0.0.1 port and talks the text protocol with 4 KiB values and
 * 35-byte keys: synchronous set->get pairs, pipelined sets (32 per
 * write) and multi-gets (32 keys per get), over the same key spread
 * (--keys) as the tmem phases, so both work on the same amount of data.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "io_util.h"

#define VAL 4096
#define BATCH 32

struct mc {
	pid_t pid;
	int fd;
	char rbuf[1 << 20];
	size_t rlen;
};

static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &len))
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static int mc_start(struct mc *m, uint64_t keys)
{
	char mbuf[24];

	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int port = free_port(), one = 1;
	char pbuf[16];

	if (port < 0)
		return -EADDRNOTAVAIL;
	snprintf(pbuf, sizeof(pbuf), "%d", port);
	/* room for every key's 4 KiB item plus slab overhead */
	snprintf(mbuf, sizeof(mbuf), "%llu", (unsigned long long)(keys * 6 / 1024 + 64));
	m->pid = fork();
	if (m->pid == 0) {
		execl("/usr/bin/memcached", "memcached", "-l", "127.0.0.1", "-p", pbuf,
		      "-U", "0", "-m", mbuf, "-t", "2", "-u", "nobody", (char *)NULL);
		_exit(127);
	}
	sa.sin_port = htons((uint16_t)port);
	for (int i = 0; i < 200; i++) {
		m->fd = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(m->fd, (struct sockaddr *)&sa, sizeof(sa))) {
			setsockopt(m->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return 0;
		}
		close(m->fd);
		m->fd = -1;
		usleep(20000);
	}
	kill(m->pid, SIGTERM);
	waitpid(m->pid, NULL, 0);
	return -ECONNREFUSED;
}

static void mc_stop(struct mc *m)
{
	if (m->fd >= 0)
		close(m->fd);
	kill(m->pid, SIGTERM);
	waitpid(m->pid, NULL, 0);
}

/* Reads until the buffer holds count occurrences of end (e.g. "\r\n"). */
static int read_until(struct mc *m, const char *end, unsigned count)
{
	m->rlen = 0;
	for (;;) {
		unsigned seen = 0;
		const char *p = m->rbuf;
		ssize_t k;

		m->rbuf[m->rlen] = '\0';
		while ((p = memmem(p, m->rlen - (size_t)(p - m->rbuf), end, strlen(end)))) {
			seen++;
			p += strlen(end);
		}
		if (seen >= count)
			return 0;
		if (m->rlen + 65536 >= sizeof(m->rbuf))
			return -EOVERFLOW;
		k = recv(m->fd, m->rbuf + m->rlen, 65536, 0);
		if (k <= 0)
			return -EIO;
		m->rlen += (size_t)k;
	}
}

static size_t set_cmd(char *buf, uint64_t key, const char *val)
{
	size_t n = (size_t)sprintf(buf, "set tmem-bench-key-%020llu 0 0 %d\r\n",
				   (unsigned long long)key, VAL);

	memcpy(buf + n, val, VAL);
	memcpy(buf + n + VAL, "\r\n", 2);
	return n + VAL + 2;
}

static int sync_pairs(struct mc *m, uint64_t n, uint64_t keys, const char *val, json_t *r)
{
	char *buf = malloc(VAL + 128);
	struct lat lat;
	uint64_t t0 = now_ns();
	int rc = buf ? lat_init(&lat, n) : -ENOMEM;

	for (uint64_t i = 0; !rc && i < n; i++) {
		uint64_t s = now_ns();
		size_t len = set_cmd(buf, i % keys, val);

		rc = io_write_all(m->fd, buf, len, true);
		if (!rc)
			rc = read_until(m, "STORED\r\n", 1);
		len = (size_t)sprintf(buf, "get tmem-bench-key-%020llu\r\n",
				      (unsigned long long)(i % keys));
		if (!rc)
			rc = io_write_all(m->fd, buf, len, true);
		if (!rc)
			rc = read_until(m, "END\r\n", 1);
		lat_add(&lat, now_ns() - s);
	}
	if (!rc) {
		json_object_set_new(r, "sync_pairs_per_s",
				    json_real((double)n * 1e9 / (double)(now_ns() - t0)));
		json_t *l = json_object();
		lat_report(&lat, l);
		json_object_set_new(r, "sync_latency", l);
		lat_free(&lat);
	}
	free(buf);
	return rc;
}

static int pipelined(struct mc *m, uint64_t batches, uint64_t keys, const char *val, json_t *r)
{
	char *buf = malloc(BATCH * (VAL + 128));
	uint64_t t0;
	int rc = buf ? 0 : -ENOMEM;

	t0 = now_ns();
	for (uint64_t b = 0; !rc && b < batches; b++) {
		size_t len = 0;

		for (unsigned k = 0; k < BATCH; k++)
			len += set_cmd(buf + len, (b * BATCH + k) % keys, val);
		rc = io_write_all(m->fd, buf, len, true);
		if (!rc)
			rc = read_until(m, "STORED\r\n", BATCH);
	}
	if (!rc)
		json_object_set_new(r, "pipelined_sets_per_s",
			json_real((double)(batches * BATCH) * 1e9 / (double)(now_ns() - t0)));
	t0 = now_ns();
	for (uint64_t b = 0; !rc && b < batches; b++) {
		size_t len = (size_t)sprintf(buf, "get");

		for (unsigned k = 0; k < BATCH; k++)
			len += (size_t)sprintf(buf + len, " tmem-bench-key-%020llu",
					       (unsigned long long)((b * BATCH + k) % keys));
		len += (size_t)sprintf(buf + len, "\r\n");
		rc = io_write_all(m->fd, buf, len, true);
		if (!rc)
			rc = read_until(m, "END\r\n", 1);
	}
	if (!rc)
		json_object_set_new(r, "multiget_per_s",
			json_real((double)(batches * BATCH) * 1e9 / (double)(now_ns() - t0)));
	free(buf);
	return rc;
}

static void ratios(json_t *out, json_t *r)
{
	double mc_sync = jnum(r, "sync_pairs_per_s");
	double mc_pipe = jnum(r, "pipelined_sets_per_s");
	double mc_mget = jnum(r, "multiget_per_s");
	double best = mc_pipe > mc_mget ? mc_pipe : mc_mget;

	if (mc_sync > 0 && jnum(out, "roundtrip.pairs_per_s") > 0)
		json_object_set_new(r, "tmem_sync_ratio",
				    json_real(jnum(out, "roundtrip.pairs_per_s") / mc_sync));
	if (best > 0 && jnum(out, "pipeline.puts_per_s") > 0)
		json_object_set_new(r, "tmem_pipelined_ratio",
				    json_real(jnum(out, "pipeline.puts_per_s") / best));
}

int phase_memcached(const struct bench_opts *o, json_t *out)
{
	struct mc *m = calloc(1, sizeof(*m));
	char val[VAL];
	uint64_t rng = 7;
	json_t *r = json_object();
	int rc;

	if (!m)
		return -ENOMEM;
	for (unsigned i = 0; i < VAL; i += 8) {
		uint64_t x = xorshift(&rng);

		memcpy(val + i, &x, 8);
	}
	rc = mc_start(m, o->keys);
	if (rc) {
		fprintf(stderr, "tmem-bench: cannot start memcached: %s\n", strerror(-rc));
		goto out;
	}
	rc = sync_pairs(m, o->rt_ops / 10 + 1000, o->keys, val, r);
	if (!rc)
		rc = pipelined(m, o->pipe_ops / BATCH / 4 + 100, o->keys, val, r);
	mc_stop(m);
	if (!rc) {
		ratios(out, r);
		json_object_set_new(r, "value_bytes", json_integer(VAL));
		json_object_set_new(out, "memcached", r);
		r = NULL;
	}
out:
	json_decref(r);
	free(m);
	return rc;
}
