/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "restart_harness.h"

static void notify_socket(struct rdaemon *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(d->notify, sizeof(d->notify), "%s/notify.sock", d->dir);
	ck_assert_uint_lt(strlen(d->notify), sizeof(sa.sun_path));
	memcpy(sa.sun_path, d->notify, strlen(d->notify) + 1);
	d->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(d->notify_fd, 0);
	ck_assert_int_eq(bind(d->notify_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
}

void rdaemon_init(struct rdaemon *d, enum keep_mode mode, const char *config)
{
	char conf[300];
	FILE *f;
	int fd;

	memset(d, 0, sizeof(*d));
	d->mode = mode;
	d->notify_fd = d->stored_fd = -1;
	snprintf(d->dir, sizeof(d->dir), "/tmp/tmemd-rtest.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d->dir));
	snprintf(d->sock, sizeof(d->sock), "%s/guest.sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/tmemd.log", d->dir);
	snprintf(conf, sizeof(conf), "%s/tmemd.conf", d->dir);
	f = fopen(conf, "w");
	ck_assert_ptr_nonnull(f);
	fputs(config ? config : "", f);
	fclose(f);
	if (mode == KEEP_FDSTORE) {
		notify_socket(d);
		return;
	}
	/* The arena must be on tmpfs: /dev/shm, not /tmp. */
	snprintf(d->arena, sizeof(d->arena), "/dev/shm/tmemd-rtest-arena.XXXXXX");
	fd = mkstemp(d->arena);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

/* What tmemd said on NOTIFY_SOCKET: keep the memfd it stores. */
static void drain_notify(struct rdaemon *d)
{
	for (;;) {
		char buf[512];
		union {
			char b[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b) };
		ssize_t n = recvmsg(d->notify_fd, &msg, MSG_CMSG_CLOEXEC);
		struct cmsghdr *cm;

		if (n < 0)
			return;
		buf[n] = '\0';
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			int fd;

			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
				continue;
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
			if (strstr(buf, "FDSTORE=1") && strstr(buf, "FDNAME=tmemd-arena")) {
				if (d->stored_fd >= 0)
					close(d->stored_fd);
				d->stored_fd = fd;
			} else {
				close(fd);
			}
		}
	}
}

static void child_exec(struct rdaemon *d)
{
	const char *bin = getenv("TMEMD_BIN");
	char conf[300], state[300], pid[32];
	int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

	if (!bin)
		bin = TMEMD_DEFAULT_BIN;
	dup2(fd, 2);
	snprintf(conf, sizeof(conf), "%s/tmemd.conf", d->dir);
	snprintf(state, sizeof(state), "%s/state", d->dir);
	if (d->mode == KEEP_FDSTORE) {
		setenv("NOTIFY_SOCKET", d->notify, 1);
		if (d->stored_fd >= 0) {
			dup2(d->stored_fd, 3); /* dup2 clears close-on-exec */
			snprintf(pid, sizeof(pid), "%d", (int)getpid());
			setenv("LISTEN_FDS", "1", 1);
			setenv("LISTEN_FDNAMES", "tmemd-arena", 1);
			setenv("LISTEN_PID", pid, 1);
		}
	}
	execl(bin, "tmemd", "-c", conf, "--runtime-dir", d->dir, "--state-dir", state,
	      "--transport", "local", "--memory", d->memory ? d->memory : "16M", "--foreground",
	      d->mode == KEEP_ARENA_FILE ? "--arena" : d->extra ? d->extra : NULL,
	      d->mode == KEEP_ARENA_FILE ? d->arena : NULL,
	      d->mode == KEEP_ARENA_FILE ? d->extra : NULL, (char *)NULL);
	_exit(127);
}

/*
 * A SIGTERM may come at once (test_start_stop): until the child has
 * reset it, the handler the test runner installed would run in it, so it
 * is blocked over the fork and the child takes it with the default
 * action, as a tmemd that has not blocked it yet would.
 */
void rdaemon_spawn(struct rdaemon *d)
{
	sigset_t term, old;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigprocmask(SIG_BLOCK, &term, &old);
	d->pid = fork();
	if (d->pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		child_exec(d);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	ck_assert_int_ge(d->pid, 0);
	d->starts++;
}

bool rdaemon_start(struct rdaemon *d, int *status)
{
	rdaemon_spawn(d);
	return rdaemon_wait_ready(d, 5000, status);
}

int rdaemon_wait_exit(struct rdaemon *d, int timeout_ms)
{
	int st;

	for (int i = 0; i < timeout_ms; i++) {
		if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
			d->pid = 0;
			return st;
		}
		harness_msleep(1);
	}
	rdaemon_kill9(d);
	return -1;
}

bool rdaemon_wait_ready(struct rdaemon *d, int timeout_ms, int *status)
{
	int st = 0;

	for (int i = 0; i < timeout_ms; i++) {
		if (harness_connectable(d->sock)) {
			if (d->mode == KEEP_FDSTORE)
				drain_notify(d);
			return true;
		}
		if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
			d->pid = 0;
			if (status)
				*status = st;
			return false;
		}
		harness_msleep(1);
	}
	rdaemon_dump_log(d);
	ck_abort_msg("tmemd did not start");
	return false;
}

void rdaemon_kill9(struct rdaemon *d)
{
	int st;

	if (d->pid <= 0)
		return;
	if (d->mode == KEEP_FDSTORE)
		drain_notify(d);
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &st, 0);
	d->pid = 0;
}

int rdaemon_stop(struct rdaemon *d)
{
	int st;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	waitpid(d->pid, &st, 0);
	d->pid = 0;
	if (d->mode == KEEP_FDSTORE)
		drain_notify(d);
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (st) /* a sanitizer's report, or why it failed */
		rdaemon_dump_log(d);
	return st;
}

void rdaemon_fini(struct rdaemon *d)
{
	rdaemon_kill9(d);
	if (d->notify_fd >= 0)
		close(d->notify_fd);
	if (d->stored_fd >= 0)
		close(d->stored_fd);
	if (d->arena[0])
		unlink(d->arena);
	harness_remove_tree(d->dir);
}

bool rdaemon_log_has(struct rdaemon *d, const char *s)
{
	char buf[65536];
	FILE *f = fopen(d->log, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, s) != NULL;
}

void rdaemon_dump_log(struct rdaemon *d)
{
	harness_dump_file(d->log);
}
