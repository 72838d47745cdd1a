/* SPDX-License-Identifier: MIT */
/*
 * The control socket: listening, accepting, per-connection buffers.
 *
 * Framing: one request per line.  A connection reads into a fixed
 * TMEMD_CONTROL_MAX_MSG buffer; a request that fills it without a newline
 * gets an EMSGSIZE reply and the connection is closed after the reply
 * (there is no way to find the next request boundary), before any
 * parsing.  While a reply is pending the connection is watched for
 * EPOLLOUT only, so a peer that sends and never reads holds one reply,
 * not an unbounded queue.
 *
 * Connections per uid and in total are limited; a peer over a limit gets
 * an error reply (EUSERS) and is closed.
 */
#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "ctl_internal.h"

void ctl_log(struct tmemd_control *ctl, int prio, const char *fmt, ...)
{
	va_list ap;

	if (!ctl->hooks.log)
		return;
	va_start(ap, fmt);
	ctl->hooks.log(ctl->ctx, prio, fmt, ap);
	va_end(ap);
}

void ctl_log_peer(struct tmemd_control *ctl, int prio, uid_t uid, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ctl->hooks.log_peer)
		ctl->hooks.log_peer(ctl->ctx, prio, uid, fmt, ap);
	else if (ctl->hooks.log)
		ctl->hooks.log(ctl->ctx, prio, fmt, ap);
	va_end(ap);
}

static int err_out(char *errbuf, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int err_out(char *errbuf, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int watch(struct tmemd_control *ctl, int op, int fd, uint32_t events,
		 void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(ctl->epfd, op, fd, &ev) ? -errno : 0;
}

static void conn_close(struct tmemd_control *ctl, struct ctl_conn *conn)
{
	for (struct ctl_conn **p = &ctl->conns; *p; p = &(*p)->next) {
		if (*p == conn) {
			*p = conn->next;
			break;
		}
	}
	epoll_ctl(ctl->epfd, EPOLL_CTL_DEL, conn->fd, NULL);
	close(conn->fd);
	free(conn->in);
	free(conn->out);
	free(conn);
	ctl->nr_conns--;
}

/* Sends what it can of the pending reply: 1 all sent, 0 would block, -errno. */
static int conn_send(struct ctl_conn *conn)
{
	while (conn->out_off < conn->out_len) {
		ssize_t n = send(conn->fd, conn->out + conn->out_off,
				 conn->out_len - conn->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -errno;
		conn->out_off += (size_t)n;
	}
	free(conn->out);
	conn->out = NULL;
	conn->out_len = conn->out_off = 0;
	return 1;
}

static void conn_reply(struct ctl_conn *conn, char *line)
{
	if (!line) {       /* out of memory: the peer sees the close */
		conn->close_after_write = true;
		return;
	}
	conn->out = line;
	conn->out_len = strlen(line);
	conn->out_off = 0;
}

static char *answer(struct tmemd_control *ctl, struct ctl_conn *conn,
		    const char *buf, size_t len)
{
	struct ctl_request req;
	struct ctl_err err;
	json_t *result = NULL;
	int rc;

	if (ctl_request_parse(buf, len, &req, &err))
		return ctl_reply_error(&err);
	if (ctl_cmd_writes(req.cmd) && !conn->writer) {
		ctl_log_peer(ctl, LOG_NOTICE, conn->uid, "control: refused \"%s\" from uid %u (pid %d)",
			ctl_cmd_name(req.cmd), (unsigned)conn->uid, (int)conn->pid);
		ctl_err_set(&err, EPERM, "\"%s\" changes state: only root or members "
			    "of the admin group may do that", ctl_cmd_name(req.cmd));
		return ctl_reply_error(&err);
	}
	rc = ctl_cmd_run(ctl, &req, &result, &err);
	if (ctl_cmd_writes(req.cmd))
		ctl_audit(ctl, conn, &req, rc, &err);
	if (rc)
		return ctl_reply_error(&err);
	return ctl_reply_result(result);
}

/*
 * Answers the first request in the input buffer.  false when there is no
 * complete one yet.  A full buffer with no newline is an oversized
 * request: answered with EMSGSIZE, then the connection closes.
 */
static bool conn_process(struct tmemd_control *ctl, struct ctl_conn *conn)
{
	char *nl = conn->in ? memchr(conn->in, '\n', conn->in_len) : NULL;
	struct ctl_err err;
	size_t used;

	if (!nl) {
		if (conn->in_len < TMEMD_CONTROL_MAX_MSG)
			return false;
		ctl_err_set(&err, EMSGSIZE, "request longer than %d bytes",
			    TMEMD_CONTROL_MAX_MSG);
		ctl_log_peer(ctl, LOG_NOTICE, conn->uid, "control: oversized request from uid %u",
			(unsigned)conn->uid);
		conn_reply(conn, ctl_reply_error(&err));
		conn->close_after_write = true;
		conn->in_len = 0;
		return true;
	}
	used = (size_t)(nl - conn->in) + 1;
	conn_reply(conn, answer(ctl, conn, conn->in, used - 1));
	memmove(conn->in, conn->in + used, conn->in_len - used);
	conn->in_len -= used;
	return true;
}

/*
 * Sends the pending reply, then answers buffered requests one at a time
 * while their replies go out at once.  Leaves the connection watched for
 * EPOLLOUT (a reply is pending) or EPOLLIN.  0, or -errno: drop the peer.
 */
static int conn_pump(struct tmemd_control *ctl, struct ctl_conn *conn)
{
	int rc;

	for (;;) {
		if (conn->out) {
			rc = conn_send(conn);
			if (rc < 0)
				return rc;
			if (rc == 0)
				return watch(ctl, EPOLL_CTL_MOD, conn->fd, EPOLLOUT, conn);
		}
		if (conn->close_after_write)
			return -ECONNRESET;
		if (!conn_process(ctl, conn))
			return watch(ctl, EPOLL_CTL_MOD, conn->fd, EPOLLIN, conn);
	}
}

/* Reads what is there and answers.  0, or -errno: drop the peer. */
static int conn_read(struct tmemd_control *ctl, struct ctl_conn *conn)
{
	ssize_t n;

	if (!conn->in && !(conn->in = malloc(TMEMD_CONTROL_MAX_MSG)))
		return -ENOMEM;
	n = recv(conn->fd, conn->in + conn->in_len,
		 TMEMD_CONTROL_MAX_MSG - conn->in_len, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ECONNRESET;
	conn->in_len += (size_t)n;
	return conn_pump(ctl, conn);
}

static unsigned conns_of(const struct tmemd_control *ctl, uid_t uid)
{
	unsigned n = 0;

	for (const struct ctl_conn *c = ctl->conns; c; c = c->next)
		n += c->uid == uid;
	return n;
}

/* Tells a peer over a limit why, best effort, and closes it. */
static void refuse(int fd, int errnum, const char *why)
{
	struct ctl_err err;
	char *line;

	ctl_err_set(&err, errnum, "%s", why);
	line = ctl_reply_error(&err);
	if (line && send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* nothing more to do: the close below tells the peer */
	}
	free(line);
	close(fd);
}

static void accept_one(struct tmemd_control *ctl, int fd)
{
	struct ctl_conn *conn = calloc(1, sizeof(*conn));

	if (!conn) {
		refuse(fd, ENOMEM, "out of memory");
		return;
	}
	conn->fd = fd;
	if (ctl_peer_identify(ctl, conn) != 0) {
		free(conn);
		refuse(fd, EACCES, "cannot read peer credentials");
		return;
	}
	if (ctl->nr_conns >= ctl->max_conns ||
	    conns_of(ctl, conn->uid) >= ctl->max_per_uid) {
		unsigned not_logged;

		if (tmemd_log_limit_ok(&ctl->refusals, &not_logged))
			ctl_log(ctl, LOG_WARNING, "control: too many connections, refused uid %u "
				"(%u more refusals not logged)", (unsigned)conn->uid, not_logged);
		free(conn);
		refuse(fd, EUSERS, "too many control connections");
		return;
	}
	if (watch(ctl, EPOLL_CTL_ADD, fd, EPOLLIN, conn)) {
		free(conn);
		refuse(fd, ENOMEM, "cannot watch the connection");
		return;
	}
	conn->next = ctl->conns;
	ctl->conns = conn;
	ctl->nr_conns++;
}

/* Out of fds or memory: stop watching the listener for a pause
 * (accept_pause.h); level-triggered, it would be ready again at once. */
static void pause_accepting(struct tmemd_control *ctl, int err)
{
	unsigned not_logged = 0;
	bool report = tmemd_accept_pause_start(&ctl->pause, &not_logged);

	if (ctl->pause.paused)
		(void)epoll_ctl(ctl->epfd, EPOLL_CTL_DEL, ctl->lfd, NULL);
	if (report)
		ctl_log(ctl, LOG_WARNING,
			"control: accept: %s; not accepting for %u ms (%u such failures not logged)",
			strerror(err), ctl->pause.delay_ms, not_logged);
}

static void resume_accepting(struct tmemd_control *ctl)
{
	int rc;

	tmemd_accept_pause_end(&ctl->pause);
	rc = watch(ctl, EPOLL_CTL_ADD, ctl->lfd, EPOLLIN, NULL);
	if (rc)
		ctl_log(ctl, LOG_ERR, "control: cannot watch the socket again: %s",
			strerror(-rc));
}

static int accept_all(struct tmemd_control *ctl)
{
	for (;;) {
		int fd = accept4(ctl->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0) {
			if (tmemd_accept_exhausted(errno))
				pause_accepting(ctl, errno);
			else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
				 errno != ECONNABORTED)
				ctl_log(ctl, LOG_WARNING, "control: accept: %s", strerror(errno));
			return 0;
		}
		tmemd_accept_ok(&ctl->pause);
		accept_one(ctl, fd);
	}
}

int tmemd_control_handle_event(struct tmemd_control *ctl, uint32_t events)
{
	struct epoll_event evs[32];
	int n;

	(void)events;
	n = epoll_wait(ctl->epfd, evs, 32, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		struct ctl_conn *conn = evs[i].data.ptr;
		int rc;

		if (!conn) {
			accept_all(ctl);
			continue;
		}
		if ((void *)conn == &ctl->pause) {
			resume_accepting(ctl);
			continue;
		}
		if (evs[i].events & EPOLLOUT)
			rc = conn_pump(ctl, conn);
		else if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			rc = conn_read(ctl, conn);
		else
			rc = 0;
		if (rc)
			conn_close(ctl, conn);
	}
	return 0;
}

int tmemd_control_fd(const struct tmemd_control *ctl)
{
	return ctl->epfd;
}

static int copy_str(char *dst, size_t len, const char *src)
{
	return snprintf(dst, len, "%s", src ? src : "") >= (int)len ? -ENAMETOOLONG : 0;
}

static int setup_paths(struct tmemd_control *ctl,
		       const struct tmemd_control_config *cfg)
{
	if (!cfg->runtime_dir || !cfg->state_dir)
		return -EINVAL;
	if (copy_str(ctl->runtime_dir, sizeof(ctl->runtime_dir), cfg->runtime_dir) ||
	    copy_str(ctl->state_dir, sizeof(ctl->state_dir), cfg->state_dir) ||
	    snprintf(ctl->sock_path, sizeof(ctl->sock_path), "%s/%s", cfg->runtime_dir,
		     TMEMD_CONTROL_SOCKET) >= (int)sizeof(ctl->sock_path) ||
	    snprintf(ctl->state_path, sizeof(ctl->state_path), "%s/%s", cfg->state_dir,
		     TMEMD_CONTROL_STATE_FILE) >= (int)sizeof(ctl->state_path))
		return -ENAMETOOLONG;
	if (strlen(ctl->sock_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	copy_str(ctl->transport, sizeof(ctl->transport), cfg->transport);
	copy_str(ctl->version, sizeof(ctl->version), cfg->version);
	return 0;
}

static int lookup_group(struct tmemd_control *ctl, const char *name)
{
	struct group gr, *res = NULL;
	char buf[16384];
	int rc;

	if (!name || !*name)
		return 0;
	rc = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
	if (rc)
		return -rc;
	if (!res)
		return -ENOENT;
	ctl->has_admin_gid = true;
	ctl->admin_gid = res->gr_gid;
	return 0;
}

/* mkdir -p for the state dir, 0700 for what it creates. */
static int make_dirs(const char *path)
{
	char tmp[PATH_MAX];

	if (copy_str(tmp, sizeof(tmp), path))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			return 0;
	}
}

static int open_listener(struct tmemd_control *ctl, unsigned mode)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	strcpy(addr.sun_path, ctl->sock_path);
	if (ctl_socket_in_use(ctl->sock_path) == 1) {
		close(fd);
		return -EADDRINUSE;
	}
	if (unlink(ctl->sock_path) != 0 && errno != ENOENT)
		goto fail;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		goto fail;
	/* chmod/chown the path before listen(): nobody can connect until then. */
	if (ctl->has_admin_gid && chown(ctl->sock_path, (uid_t)-1, ctl->admin_gid) != 0)
		goto fail;
	if (chmod(ctl->sock_path, mode) != 0 || listen(fd, 16) != 0)
		goto fail;
	ctl->lfd = fd;
	return 0;
fail:
	fd = (close(fd), -errno);
	return fd;
}

/* Re-applies every stored shared-pool authorisation to the store. */
static int apply_auths(struct tmemd_control *ctl)
{
	for (size_t i = 0; i < ctl->state.nr_auths; i++) {
		int rc = store_shared_auth(ctl->hooks.store, &ctl->state.auths[i].uuid,
					   ctl->state.auths[i].principal, true);
		if (rc)
			return rc;
	}
	return 0;
}

static int do_start(struct tmemd_control *ctl, const struct tmemd_control_config *cfg,
		    char *errbuf, size_t errlen)
{
	struct ctl_err err;
	int rc;

	rc = setup_paths(ctl, cfg);
	if (rc)
		return err_out(errbuf, errlen, rc, "control: bad runtime or state dir");
	rc = lookup_group(ctl, cfg->admin_group);
	if (rc)
		return err_out(errbuf, errlen, rc, "control: admin group \"%s\": %s",
			       cfg->admin_group, rc == -ENOENT ? "no such group" : strerror(-rc));
	rc = make_dirs(ctl->state_dir);
	if (rc)
		return err_out(errbuf, errlen, rc, "control: state dir %s: %s",
			       ctl->state_dir, strerror(-rc));
	rc = ctl_claim_state_dir(ctl->state_dir, &ctl->state_lock);
	if (rc == -EBUSY)
		return err_out(errbuf, errlen, rc, "control: state dir %s is in use by "
			       "another tmemd", ctl->state_dir);
	if (rc)
		return err_out(errbuf, errlen, rc, "control: state dir %s: %s",
			       ctl->state_dir, strerror(-rc));
	rc = ctl_state_load_stoppable(&ctl->state, ctl->state_path, cfg->should_stop,
				      cfg->stop_ctx, &err);
	if (rc)
		return err_out(errbuf, errlen, rc, "control: %s", err.msg);
	if (ctl->state.legacy_names)
		ctl_log(ctl, LOG_NOTICE, "%s was written by an older tmemd: its entries "
			"by name (%u) apply to the Xen domain of that xl name, or under "
			"the local transport to the local client of that name",
			ctl->state_path, ctl->state.legacy_names);
	rc = apply_auths(ctl);
	if (rc)
		return err_out(errbuf, errlen, rc, "control: re-applying the shared-pool "
			       "authorisations of %s: %s", ctl->state_path,
			       rc == -ENOSPC ? "with tmemd.conf's, more than tmemd holds ("
			       CTL_AUTH_LIMIT_TEXT ")" : strerror(-rc));
	ctl->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ctl->epfd < 0)
		return err_out(errbuf, errlen, -errno, "control: epoll: %s", strerror(errno));
	ctl->sock_mode = cfg->socket_mode ? cfg->socket_mode : 0660;
	rc = open_listener(ctl, ctl->sock_mode);
	if (rc == -EADDRINUSE)
		return err_out(errbuf, errlen, rc, "control: socket %s: another tmemd is "
			       "serving it", ctl->sock_path);
	if (rc)
		return err_out(errbuf, errlen, rc, "control: socket %s: %s",
			       ctl->sock_path, strerror(-rc));
	rc = watch(ctl, EPOLL_CTL_ADD, ctl->lfd, EPOLLIN, NULL);
	rc = rc ?: tmemd_accept_pause_init(&ctl->pause);
	/* Its events carry &ctl->pause, neither NULL (the listener) nor a
	 * connection. */
	rc = rc ?: watch(ctl, EPOLL_CTL_ADD, ctl->pause.timer_fd, EPOLLIN, &ctl->pause);
	if (rc)
		return err_out(errbuf, errlen, rc, "control: epoll: %s", strerror(-rc));
	return 0;
}

int tmemd_control_start(const struct tmemd_control_config *cfg,
			const struct tmemd_control_hooks *hooks, void *hooks_ctx,
			struct tmemd_control **out, char *errbuf, size_t errlen)
{
	struct tmemd_control *ctl;
	int rc;

	*out = NULL;
	if (!cfg || !hooks || !hooks->store || !hooks->policy ||
	    !hooks->for_each_client || !hooks->with_client)
		return err_out(errbuf, errlen, -EINVAL, "control: missing config or hooks");
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return err_out(errbuf, errlen, -ENOMEM, "control: out of memory");
	ctl->hooks = *hooks;
	ctl->ctx = hooks_ctx;
	ctl->epfd = ctl->lfd = ctl->state_lock = ctl->pause.timer_fd = -1;
	ctl->max_per_uid = cfg->max_conns_per_uid ? cfg->max_conns_per_uid :
			   TMEMD_CONTROL_DEFAULT_PER_UID;
	ctl->max_conns = cfg->max_conns ? cfg->max_conns : TMEMD_CONTROL_DEFAULT_MAX_CONNS;
	clock_gettime(CLOCK_MONOTONIC, &ctl->started);
	ctl->started_wall = time(NULL);
	rc = do_start(ctl, cfg, errbuf, errlen);
	if (rc) {
		tmemd_control_stop(ctl);
		return rc;
	}
	*out = ctl;
	return 0;
}

void tmemd_control_stop(struct tmemd_control *ctl)
{
	if (!ctl)
		return;
	while (ctl->conns)
		conn_close(ctl, ctl->conns);
	if (ctl->lfd >= 0) {
		close(ctl->lfd);
		unlink(ctl->sock_path);
	}
	if (ctl->epfd >= 0)
		close(ctl->epfd);
	if (ctl->state_lock >= 0)
		close(ctl->state_lock);
	tmemd_accept_pause_fini(&ctl->pause);
	ctl_state_free(&ctl->state);
	free(ctl);
}

int tmemd_control_settings_for(const struct tmemd_control *ctl,
			       const char *const *names,
			       struct tmem_client_settings *out)
{
	int found = 0;

	for (unsigned i = 0; names && names[i]; i++) {
		const struct ctl_settings *s = ctl_state_lookup(&ctl->state, names[i]);

		if (s) {
			ctl_settings_apply(s, out);
			found = 1;
		}
	}
	return found;
}

unsigned tmemd_control_stored_auths(const struct tmemd_control *ctl, const char *principal,
				    struct tmem_uuid *out, unsigned max)
{
	unsigned n = 0;

	for (size_t i = 0; i < ctl->state.nr_auths; i++) {
		if (strcmp(ctl->state.auths[i].principal, principal))
			continue;
		if (n < max)
			out[n] = ctl->state.auths[i].uuid;
		n++;
	}
	return n;
}

int tmemd_control_default_state_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (geteuid() == 0)
		n = snprintf(buf, len, "/var/lib/tmemd");
	else if (xdg && *xdg == '/')
		n = snprintf(buf, len, "%s/tmemd", xdg);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.local/state/tmemd", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
