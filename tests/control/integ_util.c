/* SPDX-License-Identifier: MIT */
/* Integration-test plumbing; see integ_util.h. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "integ_util.h"
#include "tmem_names.h"

#define MAX_ARGS 32

const char *tmemctl_bin(void)
{
	const char *env = getenv("TMEMCTL_BIN");

	return env ? env : TEST_BUILD_DIR "/tmemctl";
}

const char *tmemd_bin(void)
{
	const char *env = getenv("TMEMD_BIN");

	return env ? env : TEST_BUILD_DIR "/tmemd";
}

void host_init(struct host *h)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->dir, sizeof(h->dir), "/tmp/tmemctl-integ-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(h->dir));
	ck_assert_int_eq(chmod(h->dir, 0755), 0);
	snprintf(h->run, sizeof(h->run), "%s/run", h->dir);
	snprintf(h->state, sizeof(h->state), "%s/state", h->dir);
	snprintf(h->sock, sizeof(h->sock), "%s/control.sock", h->run);
	snprintf(h->guest_sock, sizeof(h->guest_sock), "%s/guest.sock", h->run);
	ck_assert_int_eq(mkdir(h->run, 0755), 0);
}

/* Writes <dir>/tmemd.conf: the [tmemd] keys the host options ask for. */
static void write_conf(struct host *h, const char *const *opt, char *path, size_t len)
{
	static const char *const keys[][2] = {
		{ "--admin-group", "control-admin-group" },
		{ "--socket-mode", "control-socket-mode" },
		{ "--max-per-uid", "control-max-per-uid" },
		{ "--arena", "arena" },
	};
	FILE *f;

	snprintf(path, len, "%s/tmemd.conf", h->dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[tmemd]\n", f);
	for (; opt[0]; opt += 2) {
		size_t k = 0;

		while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[k][0], opt[0]))
			k++;
		ck_assert_msg(k < sizeof(keys) / sizeof(keys[0]) && opt[1],
			      "bad host option %s", opt[0]);
		fprintf(f, "%s = %s\n", keys[k][1], opt[1]);
	}
	ck_assert_int_eq(fclose(f), 0);
}

/* True when a SOCK_SEQPACKET listener accepts a connection at path. */
static bool answers(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok;

	ck_assert_uint_lt(strlen(path), sizeof(addr.sun_path));
	memcpy(addr.sun_path, path, strlen(path) + 1);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Waits until tmemd serves both sockets (0) or exits (-1). */
static int wait_ready(struct host *h)
{
	for (int i = 0; i < 1000; i++) {
		int status;

		if (waitpid(h->pid, &status, WNOHANG) == h->pid) {
			h->exit_status = WIFEXITED(status) ? WEXITSTATUS(status)
							   : 128 + WTERMSIG(status);
			h->pid = 0;
			return -1;
		}
		/* tmemd opens guest.sock after control.sock.  No probe of
		 * control.sock: it would count against the per-uid limit
		 * until tmemd sees it closed. */
		if (answers(h->guest_sock))
			return 0;
		usleep(10000);
	}
	ck_abort_msg("tmemd did not come up in 10 s, see %s/host.err", h->dir);
	return -1;
}

int host_start(struct host *h, ...)
{
	const char *opt[MAX_ARGS];
	char conf[128], errpath[128];
	int n = 0;
	va_list ap;

	va_start(ap, h);
	while (n < MAX_ARGS - 1 && (opt[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	opt[n] = NULL;
	write_conf(h, opt, conf, sizeof(conf));
	snprintf(errpath, sizeof(errpath), "%s/host.err", h->dir);
	h->pid = fork();
	ck_assert_int_ge(h->pid, 0);
	if (h->pid == 0) {
		int err = open(errpath, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (err >= 0)
			dup2(err, 2);
		execl(tmemd_bin(), "tmemd", "--foreground", "--transport", "local",
		      "--runtime-dir", h->run, "--state-dir", h->state, "--memory", "4M",
		      "--workers", "1", "-c", conf, (char *)NULL);
		_exit(127);
	}
	return wait_ready(h);
}

static struct guest *guest_find(struct host *h, const char *name)
{
	for (int i = 0; i < HOST_MAX_GUESTS; i++)
		if (h->guests[i].conn && !strcmp(h->guests[i].name, name))
			return &h->guests[i];
	return NULL;
}

/* Connects; a name just disconnected may still be attached for a moment
 * (tmemd lets it go when its main loop sees the hang-up). */
static long guest_add(struct host *h, const char *name)
{
	struct guest *g = NULL;
	int rc;

	for (int i = 0; i < HOST_MAX_GUESTS && !g; i++)
		if (!h->guests[i].conn)
			g = &h->guests[i];
	if (!g)
		return -ENOSPC;
	for (int tries = 0; tries < 200; tries++) {
		rc = tmem_connect(h->guest_sock, name, &g->conn);
		if (rc != -EEXIST)
			break;
		usleep(10000);
	}
	if (rc == 0)
		snprintf(g->name, sizeof(g->name), "%s", name);
	return rc;
}

static long guest_pool(struct guest *g, const char *kind, const char *uuid_text)
{
	struct tmem_uuid uuid = { 0 };
	uint32_t flags = 0;

	if (!strcmp(kind, "pers"))
		flags = TMEM_POOL_PERSIST;
	else if (!strcmp(kind, "shared"))
		flags = TMEM_POOL_SHARED;
	if (flags == TMEM_POOL_SHARED && (!uuid_text || tmem_uuid_parse(uuid_text, &uuid)))
		return -EINVAL;
	return tmem_new_pool(g->conn, tmem_pool_flags(flags), &uuid);
}

/* puts/gets/flush over indexes 0..n-1 of object oid; counts the 1s. */
static long guest_pages(struct guest *g, const char *op, int32_t pool, uint64_t oid_lo,
			long n)
{
	static uint8_t page[TMEM_PAGE_SIZE];
	struct tmem_oid oid = { { oid_lo, 0, 0 } };
	long ok = 0;

	for (long i = 0; i < n; i++) {
		int rc;

		memset(page, (int)(i + 1), sizeof(page));
		if (!strcmp(op, "textputs"))  /* compressible, not same-filled */
			for (size_t at = 0; at < sizeof(page);)
				at += (size_t)snprintf((char *)page + at, sizeof(page) - at,
						       "page %ld of object %llu: tmem text. ", i,
						       (unsigned long long)oid_lo);
		if (!strcmp(op, "puts") || !strcmp(op, "textputs"))
			rc = tmem_put(g->conn, pool, &oid, (uint32_t)i, page);
		else if (!strcmp(op, "gets"))
			rc = tmem_get(g->conn, pool, &oid, (uint32_t)i, page);
		else
			rc = tmem_flush_page(g->conn, pool, &oid, (uint32_t)i);
		if (rc < 0)
			return rc;
		ok += rc;
	}
	return ok;
}

long host_cmd(struct host *h, const char *fmt, ...)
{
	char line[256], op[16], name[64], a[64] = "", b[64] = "";
	struct guest *g;
	long n = 0;
	va_list ap;
	int nf;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	nf = sscanf(line, "%15s %63s %63s %63s %ld", op, name, a, b, &n);
	ck_assert_msg(nf >= 2, "bad host command: %s", line);
	if (!strcmp(op, "add"))
		return guest_add(h, name);
	g = guest_find(h, name);
	if (!g)
		return -ENOENT;
	if (!strcmp(op, "remove")) {
		tmem_disconnect(g->conn);
		g->conn = NULL;
		return 0;
	}
	if (!strcmp(op, "pool"))
		return guest_pool(g, a, nf >= 4 ? b : NULL);
	ck_assert_msg(nf == 5 && (!strcmp(op, "puts") || !strcmp(op, "textputs") ||
				  !strcmp(op, "gets") || !strcmp(op, "flush")),
		      "bad host command: %s", line);
	return guest_pages(g, op, (int32_t)atoi(a), strtoull(b, NULL, 0), n);
}

void host_stop(struct host *h)
{
	int status;

	for (int i = 0; i < HOST_MAX_GUESTS; i++) {
		tmem_disconnect(h->guests[i].conn);
		h->guests[i].conn = NULL;
	}
	if (!h->pid)
		return;
	kill(h->pid, SIGTERM);
	if (waitpid(h->pid, &status, 0) == h->pid)
		h->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	h->pid = 0;
}

void host_cleanup(struct host *h)
{
	char cmd[128];

	host_stop(h);
	if (h->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", h->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", h->dir);
	}
}

void host_teardown(struct host *h)
{
	if (h->pid) {
		host_stop(h);
		ck_assert_msg(h->exit_status == 0, "host exited %d, see %s/host.err",
			      h->exit_status, h->dir);
	}
	host_cleanup(h);
}

bool host_logged(struct host *h, const char *a, const char *b)
{
	char path[160], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/host.err", h->dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, a) && strstr(line, b);
	fclose(f);
	return found;
}

/* Reads all of fd into a NUL-terminated malloc'd string. */
static char *slurp(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2048)
			buf = realloc(buf, cap *= 2);
	}
	ck_assert_ptr_nonnull(buf);
	buf[len] = '\0';
	close(fd);
	return buf;
}

struct run run_argv(const char *const *argv, const char *env_socket)
{
	struct run r = { 0 };
	char errpath[] = "/tmp/tmemctl-err-XXXXXX";
	int out[2], errfd = mkstemp(errpath), status;
	pid_t pid;

	ck_assert_int_ge(errfd, 0);
	unlink(errpath);
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(errfd, 2);
		if (env_socket)
			setenv("TMEMCTL_SOCKET", env_socket, 1);
		else
			unsetenv("TMEMCTL_SOCKET");
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	r.out = slurp(out[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	lseek(errfd, 0, SEEK_SET);
	r.err = slurp(errfd);
	return r;
}

void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static struct run ctl_va(struct host *h, const char *const *prefix, bool json, va_list ap)
{
	const char *argv[MAX_ARGS];
	int n = 0;

	for (; prefix && *prefix; prefix++)
		argv[n++] = *prefix;
	argv[n++] = tmemctl_bin();
	argv[n++] = "--socket";
	argv[n++] = h->sock;
	if (json)
		argv[n++] = "--json";
	while (n < MAX_ARGS - 1 && (argv[n] = va_arg(ap, const char *)))
		n++;
	argv[n] = NULL;
	return run_argv(argv, NULL);
}

struct run ctl(struct host *h, ...)
{
	struct run r;
	va_list ap;

	va_start(ap, h);
	r = ctl_va(h, NULL, false, ap);
	va_end(ap);
	return r;
}

struct run ctl_as(struct host *h, const char *const *prefix, ...)
{
	struct run r;
	va_list ap;

	va_start(ap, prefix);
	r = ctl_va(h, prefix, false, ap);
	va_end(ap);
	return r;
}

json_t *ctl_json(struct host *h, ...)
{
	json_error_t jerr;
	struct run r;
	json_t *doc;
	va_list ap;

	va_start(ap, h);
	r = ctl_va(h, NULL, true, ap);
	va_end(ap);
	ck_assert_msg(r.status == 0, "tmemctl failed (%d): %s", r.status, r.err);
	doc = json_loads(r.out, 0, &jerr);
	ck_assert_msg(doc != NULL, "not JSON: %s: %s", jerr.text, r.out);
	run_free(&r);
	return doc;
}

int raw_connect(struct host *h)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_lt(strlen(h->sock), sizeof(addr.sun_path));
	memcpy(addr.sun_path, h->sock, strlen(h->sock) + 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

void raw_send(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;  /* the server may close first; the reply tells */
		p += n;
		len -= (size_t)n;
	}
}

json_t *raw_reply(int fd)
{
	char buf[65536];
	size_t len = 0;

	while (len < sizeof(buf) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		ck_assert_int_eq(poll(&p, 1, 10000), 1);
		n = recv(fd, buf + len, 1, 0);
		if (n <= 0)
			return NULL;
		if (buf[len++] == '\n')
			return json_loadb(buf, len, 0, NULL);
	}
	return NULL;
}

int reply_errno(json_t *reply)
{
	json_t *err = json_object_get(reply, "error");

	ck_assert_ptr_nonnull(reply);
	ck_assert_int_eq(json_integer_value(json_object_get(reply, "version")), 1);
	if (!err) {
		ck_assert_ptr_nonnull(json_object_get(reply, "result"));
		return 0;
	}
	ck_assert(json_is_string(json_object_get(err, "message")));
	return (int)json_integer_value(json_object_get(err, "errno"));
}

void write_text_file(const char *dir, const char *name, const char *text)
{
	char path[192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* How many reloads (good or bad) tmemd has logged so far. */
static int reloads_logged(struct host *h)
{
	char path[160], line[1024];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/host.err", h->dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "reloaded ") || strstr(line, "error: reload: ");
	fclose(f);
	return n;
}

void host_reload(struct host *h)
{
	int before = reloads_logged(h);

	ck_assert_int_eq(kill(h->pid, SIGHUP), 0);
	for (int i = 0; i < 500 && reloads_logged(h) == before; i++)
		usleep(10000);
	ck_assert_msg(reloads_logged(h) > before, "no reload logged, see %s/host.err", h->dir);
}
