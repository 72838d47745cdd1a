/* SPDX-License-Identifier: MIT */
/*
 * control_host: serves the real control server (libtmemctl-server.a) over
 * the real store and policy, exactly as tmemd does, until tmemd is wired
 * to it.  The integration tests start it like tmemd (a runtime dir, a
 * state dir) and talk to it with the real tmemctl.
 *
 * What a guest would do over a transport, the tests do over stdin, one
 * command per line, one reply line each ("ok N" or "err -ERRNO"):
 *   add NAME DOMID          a client connects (DOMID -1 = local); the
 *                           stored settings apply (settings_for)
 *   remove NAME             the client goes away
 *   pool NAME KIND [UUID]   new pool, KIND eph|pers|shared (UUID in text
 *                           form); ok POOL_ID
 *   puts NAME POOL OID N    N puts (indexes 0..N-1) through tmem_policy_put;
 *                           ok STORED
 *   gets NAME POOL OID N    N gets; ok HITS
 *   flush NAME POOL OID I   flush one page; ok RET
 * stdout also carries "ready" once the socket is up.
 *
 * Options: --runtime-dir D --state-dir D [--admin-group G]
 *          [--socket-mode OCTAL] [--pages N] [--max-per-uid N]
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "control/control.h"
#include "control/ctl_proto.h"

#define HOST_MAX_CLIENTS 32

struct host_client {
	char name[TMEM_CLIENT_NAME_MAX];
	int domid;
	struct tmem_pclient *pc;
};

struct host {
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_control *ctl;
	struct host_client clients[HOST_MAX_CLIENTS];
	struct tmem_client_settings defaults;
};

static int for_each(void *ctx, tmemd_control_client_fn fn, void *arg)
{
	struct host *h = ctx;

	for (int i = 0; i < HOST_MAX_CLIENTS; i++) {
		struct host_client *c = &h->clients[i];
		struct tmemd_control_client cl = { c->name, c->domid, c->pc };
		int rc;

		if (!c->pc)
			continue;
		rc = fn(&cl, arg);
		if (rc)
			return rc;
	}
	return 0;
}

static struct host_client *lookup(struct host *h, const char *spec)
{
	char *end;
	long domid = strtol(spec, &end, 10);
	bool numeric = *spec && !*end;

	for (int i = 0; i < HOST_MAX_CLIENTS; i++) {
		struct host_client *c = &h->clients[i];

		if (c->pc && (numeric ? c->domid == domid : !strcmp(c->name, spec)))
			return c;
	}
	return NULL;
}

static int with_client(void *ctx, const char *spec, tmemd_control_client_fn fn,
		       void *arg)
{
	struct host_client *c = lookup(ctx, spec);
	struct tmemd_control_client cl;

	if (!c)
		return -ENOENT;
	cl = (struct tmemd_control_client){ c->name, c->domid, c->pc };
	return fn(&cl, arg);
}

static void log_line(void *ctx, int prio, const char *fmt, va_list ap)
{
	(void)ctx;
	fprintf(stderr, "control_host[%d]: ", prio);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static int cmd_add(struct host *h, const char *name, int domid)
{
	struct tmem_client_settings s = h->defaults;

	for (int i = 0; i < HOST_MAX_CLIENTS; i++) {
		struct host_client *c = &h->clients[i];

		if (c->pc)
			continue;
		tmemd_control_settings_for(h->ctl, name, domid, &s);
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->domid = domid;
		return tmem_policy_client_add(h->policy, name, &s, &c->pc);
	}
	return -ENOSPC;
}

static int cmd_pool(struct host_client *c, const char *kind, const char *uuid_text)
{
	struct tmem_uuid uuid = { 0 };
	uint32_t flags = 0;

	if (!strcmp(kind, "pers"))
		flags = TMEM_POOL_PERSIST;
	else if (!strcmp(kind, "shared"))
		flags = TMEM_POOL_SHARED;
	if (flags == TMEM_POOL_SHARED && (!uuid_text || ctl_uuid_parse(uuid_text, &uuid)))
		return -EINVAL;
	return tmem_new_pool(tmem_pclient_store_client(c->pc), tmem_pool_flags(flags), &uuid);
}

/* puts/gets/flush over indexes 0..n-1 of object oid; counts the 1s. */
static long page_ops(struct host_client *c, const char *op, int pool, uint64_t oid_lo,
		     long n)
{
	static uint8_t page[TMEM_PAGE_SIZE];
	struct tmem_oid oid = { { oid_lo, 0, 0 } };
	struct tmem_client *sc = tmem_pclient_store_client(c->pc);
	long ok = 0;

	for (long i = 0; i < n; i++) {
		int rc;

		memset(page, (int)(i + 1), sizeof(page));
		if (!strcmp(op, "puts"))
			rc = tmem_policy_put(c->pc, pool, &oid, (uint32_t)i, page);
		else if (!strcmp(op, "gets"))
			rc = tmem_get_page(sc, pool, &oid, (uint32_t)i, page);
		else
			rc = tmem_flush_page(sc, pool, &oid, (uint32_t)i);
		if (rc < 0)
			return rc;
		ok += rc;
	}
	return ok;
}

static long run_line(struct host *h, char *line)
{
	char op[16], name[TMEM_CLIENT_NAME_MAX], a[64] = "", b[64] = "";
	long n = 0;
	int pool = 0;
	struct host_client *c;
	int nf = sscanf(line, "%15s %63s %63s %63s %ld", op, name, a, b, &n);

	if (nf >= 3 && !strcmp(op, "add"))
		return cmd_add(h, name, atoi(a));
	c = nf >= 2 ? lookup(h, name) : NULL;
	if (!c)
		return -ENOENT;
	if (!strcmp(op, "remove")) {
		tmem_policy_client_remove(c->pc);
		c->pc = NULL;
		return 0;
	}
	if (!strcmp(op, "pool"))
		return cmd_pool(c, a, nf >= 4 ? b : NULL);
	pool = atoi(a);
	if (nf == 5 && (!strcmp(op, "puts") || !strcmp(op, "gets") || !strcmp(op, "flush")))
		return page_ops(c, op, pool, strtoull(b, NULL, 0), n);
	return -EINVAL;
}

/* Reads stdin lines; false at EOF. */
static bool serve_stdin(struct host *h)
{
	static char buf[4096];
	static size_t len;
	ssize_t n = read(STDIN_FILENO, buf + len, sizeof(buf) - 1 - len);
	char *nl;

	if (n <= 0)
		return false;
	len += (size_t)n;
	while ((nl = memchr(buf, '\n', len))) {
		long rc;

		*nl = '\0';
		rc = run_line(h, buf);
		printf(rc < 0 ? "err %ld\n" : "ok %ld\n", rc);
		fflush(stdout);
		len -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, len);
	}
	return len < sizeof(buf) - 1;
}

static int run(struct host *h)
{
	struct epoll_event ev = { .events = EPOLLIN }, got;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ev.data.fd = tmemd_control_fd(h->ctl);
	epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	ev.data.fd = STDIN_FILENO;
	epoll_ctl(ep, EPOLL_CTL_ADD, STDIN_FILENO, &ev);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (epoll_wait(ep, &got, 1, -1) < 1)
			continue;
		if (got.data.fd == STDIN_FILENO) {
			if (!serve_stdin(h))
				break;
		} else if (tmemd_control_handle_event(h->ctl, got.events) < 0) {
			break;
		}
	}
	close(ep);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "runtime-dir", required_argument, NULL, 'r' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "admin-group", required_argument, NULL, 'g' },
		{ "socket-mode", required_argument, NULL, 'm' },
		{ "pages", required_argument, NULL, 'p' },
		{ "max-per-uid", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	struct tmemd_control_config cfg = { .transport = "test-host", .version = "test" };
	struct tmemd_control_hooks hooks = { .for_each_client = for_each,
					     .with_client = with_client, .log = log_line };
	struct tmem_store_config scfg = { .arena_bytes = 1024 * TMEM_PAGE_SIZE };
	struct tmem_policy_config pcfg;
	static struct host h;
	char err[512];
	int c, rc;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': cfg.runtime_dir = optarg; break;
		case 's': cfg.state_dir = optarg; break;
		case 'g': cfg.admin_group = optarg; break;
		case 'm': cfg.socket_mode = (unsigned)strtoul(optarg, NULL, 8); break;
		case 'p': scfg.arena_bytes = strtoull(optarg, NULL, 0) * TMEM_PAGE_SIZE; break;
		case 'u': cfg.max_conns_per_uid = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	scfg.max_arena_bytes = 4 * scfg.arena_bytes;
	tmem_policy_config_defaults(&pcfg);
	h.defaults = pcfg.defaults;
	rc = tmem_store_create(&scfg, &h.store);
	if (rc == 0)
		rc = tmem_policy_create(h.store, &pcfg, &h.policy);
	if (rc) {
		fprintf(stderr, "control_host: store/policy: %s\n", strerror(-rc));
		return 1;
	}
	hooks.store = h.store;
	hooks.policy = h.policy;
	rc = tmemd_control_start(&cfg, &hooks, &h, &h.ctl, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "control_host: %s\n", err);
		return 1;
	}
	run(&h);
	tmemd_control_stop(h.ctl);
	for (int i = 0; i < HOST_MAX_CLIENTS; i++)
		tmem_policy_client_remove(h.clients[i].pc);
	tmem_policy_destroy(h.policy);
	tmem_store_destroy(h.store);
	return 0;
}
