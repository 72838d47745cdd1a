/* SPDX-License-Identifier: MIT */
/*
 * Talking to tmemd: one JSON request per line, one reply per line.
 * The daemon's errors come back inside the protocol
 * ({"error":{"errno":N,"message":"..."}}) and become exit code 1.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "io_util.h"
#include "tmemctl.h"

#define REPLY_TIMEOUT_MS 30000

const char *tmemctl_default_socket(char *buf, size_t len)
{
	const char *env = getenv("TMEMCTL_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (env && *env)
		return env;
	if (geteuid() == 0)
		return "/run/tmemd/control.sock";
	if (!xdg || !*xdg || snprintf(buf, len, "%s/tmemd/control.sock", xdg) >= (int)len)
		return NULL;
	return buf;
}

/* The socket --socket names, else --runtime-dir's control.sock, else the
 * default; *from says which, for error messages.  NULL if none. */
static const char *socket_path(const struct tmemctl_opts *opts, char *buf, size_t len,
			       const char **from)
{
	if (opts->socket) {
		*from = "--socket";
		return opts->socket;
	}
	if (opts->runtime_dir) {
		*from = "--runtime-dir";
		return snprintf(buf, len, "%s/control.sock", opts->runtime_dir) < (int)len ?
		       buf : NULL;
	}
	*from = getenv("TMEMCTL_SOCKET") && *getenv("TMEMCTL_SOCKET") ? "$TMEMCTL_SOCKET" :
		"the default";
	return tmemctl_default_socket(buf, len);
}

static int open_conn(const struct tmemctl_opts *opts, struct tmemctl_conn *conn, bool quiet)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char buf[4096];
	const char *from, *path = socket_path(opts, buf, sizeof(buf), &from);

	memset(conn, 0, sizeof(*conn));
	conn->fd = -1;
	if (!path) {
		usage_error("no control socket: use --socket PATH or --runtime-dir DIR, or "
			    "set TMEMCTL_SOCKET or XDG_RUNTIME_DIR");
		return EXIT_USAGE;
	}
	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "tmemctl: socket path too long: %s\n", path);
		return EXIT_USAGE;
	}
	strcpy(addr.sun_path, path);
	conn->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (conn->fd < 0 || connect(conn->fd, (struct sockaddr *)&addr, sizeof(addr))) {
		int e = errno;

		if (!quiet)
			fprintf(stderr, "tmemctl: cannot connect to %s (%s): %s%s\n", path,
				from, strerror(e), e == EACCES ? " (the control socket is for "
				"root and the tmemd admin group)" : e == ENOENT ||
				e == ECONNREFUSED ? " (is tmemd running? its socket is "
				"<runtime-dir>/control.sock: use --runtime-dir DIR or --socket PATH)"
				: "");
		tmemctl_close(conn);
		return EXIT_FAILED;
	}
	return 0;
}

int tmemctl_open(const struct tmemctl_opts *opts, struct tmemctl_conn *conn)
{
	return open_conn(opts, conn, false);
}

int tmemctl_open_quiet(const struct tmemctl_opts *opts, struct tmemctl_conn *conn)
{
	return open_conn(opts, conn, true);
}

void tmemctl_close(struct tmemctl_conn *conn)
{
	if (conn->fd >= 0)
		close(conn->fd);
	free(conn->buf);
	memset(conn, 0, sizeof(*conn));
	conn->fd = -1;
}

/* Reads until a full line is buffered; returns its length (without the
 * newline) or -errno (-EPIPE: tmemd closed, -ETIMEDOUT, -EMSGSIZE). */
static long read_line(struct tmemctl_conn *conn)
{
	char *nl;

	while (!(nl = conn->len ? memchr(conn->buf, '\n', conn->len) : NULL)) {
		struct pollfd p = { .fd = conn->fd, .events = POLLIN };
		ssize_t n;

		if (conn->len == conn->cap) {
			size_t ncap = conn->cap ? conn->cap * 2 : 65536;
			char *b;

			if (ncap > TMEMCTL_MAX_REPLY)
				return -EMSGSIZE;
			if (!(b = realloc(conn->buf, ncap)))
				return -ENOMEM;
			conn->buf = b;
			conn->cap = ncap;
		}
		if (poll(&p, 1, REPLY_TIMEOUT_MS) == 0)
			return -ETIMEDOUT;
		n = recv(conn->fd, conn->buf + conn->len, conn->cap - conn->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		conn->len += (size_t)n;
	}
	return nl - conn->buf;
}

/* Splits a reply into *result, or prints its error.  Steals reply. */
static int take_reply(const char *cmd, json_t *reply, json_t **result)
{
	json_t *err = json_object_get(reply, "error");
	json_t *res = json_object_get(reply, "result");
	json_t *ver = json_object_get(reply, "version");
	int rc = EXIT_FAILED;

	if (!json_is_integer(ver) || json_integer_value(ver) != TMEMCTL_PROTO_VERSION) {
		fprintf(stderr, "tmemctl: %s: tmemd replied with an unknown protocol version\n",
			cmd);
	} else if (json_is_object(err)) {
		const char *msg = json_string_value(json_object_get(err, "message"));
		int e = (int)json_integer_value(json_object_get(err, "errno"));

		fprintf(stderr, "tmemctl: %s: %s (%s)\n", cmd, msg ? msg : "failed",
			strerror(e));
	} else if (res) {
		*result = json_incref(res);
		rc = EXIT_OK;
	} else {
		fprintf(stderr, "tmemctl: %s: malformed reply from tmemd\n", cmd);
	}
	json_decref(reply);
	return rc;
}

int tmemctl_request(struct tmemctl_conn *conn, const char *cmd, json_t *args,
		    json_t **result)
{
	json_t *req = json_pack("{s:i, s:s, s:o}", "version", TMEMCTL_PROTO_VERSION,
				"cmd", cmd, "args", args ? args : json_object());
	char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_error_t jerr;
	json_t *reply;
	long n;
	int rc;

	json_decref(req);
	*result = NULL;
	if (!text) {
		fprintf(stderr, "tmemctl: out of memory\n");
		return EXIT_FAILED;
	}
	rc = io_write_all(conn->fd, text, strlen(text), true);
	if (rc == 0)
		rc = io_write_all(conn->fd, "\n", 1, true);
	free(text);
	n = rc ? rc : read_line(conn);
	if (n < 0) {
		conn->lost = true;
		fprintf(stderr, "tmemctl: %s: %s\n", cmd, n == -EPIPE ?
			"tmemd closed the connection" : strerror((int)-n));
		return EXIT_FAILED;
	}
	reply = json_loadb(conn->buf, (size_t)n, 0, &jerr);
	conn->len -= (size_t)n + 1;
	memmove(conn->buf, conn->buf + n + 1, conn->len);
	if (!reply) {
		fprintf(stderr, "tmemctl: %s: malformed reply from tmemd: %s\n", cmd, jerr.text);
		return EXIT_FAILED;
	}
	return take_reply(cmd, reply, result);
}

int tmemctl_call(const struct tmemctl_opts *opts, const char *cmd, json_t *args,
		 json_t **result)
{
	struct tmemctl_conn conn;
	int rc = tmemctl_open(opts, &conn);

	if (rc) {
		json_decref(args);
		return rc;
	}
	rc = tmemctl_request(&conn, cmd, args, result);
	tmemctl_close(&conn);
	return rc;
}
