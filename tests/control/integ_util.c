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

#define MAX_ARGS 32

const char *tmemctl_bin(void)
{
	const char *env = getenv("TMEMCTL_BIN");

	return env ? env : TEST_BUILD_DIR "/tmemctl";
}

static const char *host_bin(void)
{
	const char *env = getenv("CONTROL_HOST_BIN");

	return env ? env : TEST_BUILD_DIR "/tests/control/control_host";
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
	ck_assert_int_eq(mkdir(h->run, 0755), 0);
}

int host_start(struct host *h, ...)
{
	const char *argv[MAX_ARGS] = { host_bin(), "--runtime-dir", h->run,
				       "--state-dir", h->state };
	int in[2], out[2], n = 5;
	char line[64], errpath[128];
	va_list ap;

	va_start(ap, h);
	while (n < MAX_ARGS - 1 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	snprintf(errpath, sizeof(errpath), "%s/host.err", h->dir);
	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	h->pid = fork();
	ck_assert_int_ge(h->pid, 0);
	if (h->pid == 0) {
		int err = open(errpath, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(in[0], 0);
		dup2(out[1], 1);
		if (err >= 0)
			dup2(err, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	h->in = fdopen(in[1], "w");
	h->out = fdopen(out[0], "r");
	if (fgets(line, sizeof(line), h->out) && strcmp(line, "ready\n") == 0)
		return 0;
	host_stop(h);
	return -1;
}

long host_cmd(struct host *h, const char *fmt, ...)
{
	char line[128];
	va_list ap;
	long v;

	va_start(ap, fmt);
	vfprintf(h->in, fmt, ap);
	va_end(ap);
	fputc('\n', h->in);
	fflush(h->in);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), h->out));
	if (sscanf(line, "ok %ld", &v) == 1)
		return v;
	ck_assert_int_eq(sscanf(line, "err %ld", &v), 1);
	return v;
}

void host_stop(struct host *h)
{
	int status;

	if (!h->pid)
		return;
	fclose(h->in);
	fclose(h->out);
	h->in = h->out = NULL;
	if (waitpid(h->pid, &status, 0) == h->pid)
		h->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	h->pid = 0;
}

void host_cleanup(struct host *h)
{
	char cmd[128];

	if (h->pid)
		kill(h->pid, SIGTERM);
	host_stop(h);
	if (h->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", h->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", h->dir);
	}
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
