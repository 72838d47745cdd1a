/* SPDX-License-Identifier: MIT */
/*
 * daemon/systemd/: the sd_notify helpers against a fake $NOTIFY_SOCKET,
 * watchdog pacing, and the log sink (stderr lines; journal entries sent to
 * a fake journald socket in a private mount namespace).
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "common/test_main.h"
#include "packaging/notify_sock.h"
#include "systemd/sd.h"

static struct notify_sock ns;
static char msg[4096];

static void setup(void)
{
	ck_assert_int_eq(notify_sock_open(&ns), 0);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", ns.path, 1), 0);
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

static void teardown(void)
{
	unsetenv("NOTIFY_SOCKET");
	notify_sock_close(&ns);
}

static const char *recv_one(void)
{
	pid_t pid;

	ck_assert_int_gt(notify_sock_recv(&ns, msg, sizeof(msg), 2000, &pid), 0);
	ck_assert_int_eq(pid, getpid());
	return msg;
}

START_TEST(test_ready_stopping)
{
	ck_assert_int_eq(tmemd_sd_ready(), 1);
	ck_assert_str_eq(recv_one(), "READY=1");
	ck_assert_int_eq(tmemd_sd_stopping(), 1);
	ck_assert_str_eq(recv_one(), "STOPPING=1");
	/* Nothing else was sent. */
	ck_assert_int_eq(notify_sock_recv(&ns, msg, sizeof(msg), 0, NULL), -ETIMEDOUT);
}
END_TEST

START_TEST(test_reloading_has_monotonic_usec)
{
	uint64_t before = tmemd_sd_now_usec(), after, stamp;
	const char *p;

	ck_assert_int_eq(tmemd_sd_reloading(), 1);
	after = tmemd_sd_now_usec();
	recv_one();
	ck_assert(notify_has_line(msg, "RELOADING=1"));
	ck_assert(notify_has_line(msg, "MONOTONIC_USEC="));
	p = strstr(msg, "MONOTONIC_USEC=");
	ck_assert_int_eq(sscanf(p, "MONOTONIC_USEC=%" SCNu64, &stamp), 1);
	ck_assert_uint_ge(stamp, before);
	ck_assert_uint_le(stamp, after);
}
END_TEST

START_TEST(test_status)
{
	ck_assert_int_eq(tmemd_sd_status_counts(3, 100, 28), 1);
	ck_assert_str_eq(recv_one(), "STATUS=3 clients, 128 pages (100 ephemeral, 28 persistent)");
	ck_assert_int_eq(tmemd_sd_status_counts(1, 0, 0), 1);
	ck_assert_str_eq(recv_one(), "STATUS=1 client, 0 pages (0 ephemeral, 0 persistent)");
	ck_assert_int_eq(tmemd_sd_status("loading %s", "tmemd.conf"), 1);
	ck_assert_str_eq(recv_one(), "STATUS=loading tmemd.conf");
	ck_assert_int_eq(tmemd_sd_status(NULL), -EINVAL);
}
END_TEST

START_TEST(test_abstract_socket)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char name[64];
	int fd;

	/* systemd may hand out an abstract socket ("@name"). */
	snprintf(name, sizeof(name), "tmemd-test-%d", (int)getpid());
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%s", name);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa,
			      offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name)), 0);
	snprintf(msg, sizeof(msg), "@%s", name);
	setenv("NOTIFY_SOCKET", msg, 1);
	ck_assert_int_eq(tmemd_sd_ready(), 1);
	memset(msg, 0, sizeof(msg));
	ck_assert_int_eq(recv(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT), 7);
	ck_assert_str_eq(msg, "READY=1");
	close(fd);
}
END_TEST

START_TEST(test_not_under_systemd)
{
	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(tmemd_sd_ready(), 0);
	ck_assert_int_eq(tmemd_sd_status_counts(0, 0, 0), 0);
	ck_assert_int_eq(tmemd_sd_reloading(), 0);
	/* A socket that is not there is an error, not silence. */
	setenv("NOTIFY_SOCKET", "/nonexistent/tmemd-notify", 1);
	ck_assert_int_lt(tmemd_sd_ready(), 0);
}
END_TEST

static void set_watchdog(const char *usec, pid_t pid)
{
	char buf[24];

	setenv("WATCHDOG_USEC", usec, 1);
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	setenv("WATCHDOG_PID", buf, 1);
}

START_TEST(test_watchdog_pacing)
{
	struct tmemd_sd_watchdog wd;
	uint64_t t0 = 5000000;

	set_watchdog("2000000", getpid());
	ck_assert_int_eq(tmemd_sd_watchdog_init(&wd, t0), 1);
	ck_assert_uint_eq(wd.period_usec, 1000000);
	/* The first ping is due at once, then every half timeout. */
	ck_assert_int_eq(tmemd_sd_watchdog_timeout_ms(&wd, t0), 0);
	ck_assert_int_eq(tmemd_sd_watchdog_tick(&wd, t0), 1);
	ck_assert_str_eq(recv_one(), "WATCHDOG=1");
	ck_assert_int_eq(tmemd_sd_watchdog_timeout_ms(&wd, t0), 1000);
	ck_assert_int_eq(tmemd_sd_watchdog_timeout_ms(&wd, t0 + 999500), 1);
	ck_assert_int_eq(tmemd_sd_watchdog_tick(&wd, t0 + 999999), 0);
	ck_assert_int_eq(tmemd_sd_watchdog_tick(&wd, t0 + 1000000), 1);
	ck_assert_str_eq(recv_one(), "WATCHDOG=1");
	/* A late loop pings once and starts a new period from then. */
	ck_assert_int_eq(tmemd_sd_watchdog_tick(&wd, t0 + 7000000), 1);
	recv_one();
	ck_assert_int_eq(tmemd_sd_watchdog_timeout_ms(&wd, t0 + 7000000), 1000);
	ck_assert_int_eq(notify_sock_recv(&ns, msg, sizeof(msg), 0, NULL), -ETIMEDOUT);
}
END_TEST

START_TEST(test_watchdog_disabled)
{
	struct tmemd_sd_watchdog wd;

	ck_assert_int_eq(tmemd_sd_watchdog_init(&wd, 0), 0);
	ck_assert_int_eq(tmemd_sd_watchdog_timeout_ms(&wd, 0), -1);
	ck_assert_int_eq(tmemd_sd_watchdog_tick(&wd, UINT64_MAX), 0);
	/* WATCHDOG_PID names another process: not for us. */
	set_watchdog("2000000", getpid() + 1);
	ck_assert_int_eq(tmemd_sd_watchdog_init(&wd, 0), 0);
	ck_assert_int_eq(tmemd_sd_watchdog_timeout_ms(&wd, 0), -1);
	ck_assert_int_eq(tmemd_sd_watchdog_timeout_ms(NULL, 0), -1);
	ck_assert_int_eq(tmemd_sd_watchdog_init(NULL, 0), -EINVAL);
	ck_assert_int_eq(notify_sock_recv(&ns, msg, sizeof(msg), 0, NULL), -ETIMEDOUT);
}
END_TEST

START_TEST(test_watchdog_bad_env)
{
	struct tmemd_sd_watchdog wd;

	set_watchdog("soon", getpid());
	ck_assert_int_lt(tmemd_sd_watchdog_init(&wd, 0), 0);
	ck_assert_int_eq(tmemd_sd_watchdog_timeout_ms(&wd, 0), -1);
}
END_TEST

START_TEST(test_stream_is_journal)
{
	struct stat st;
	char env[64];
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	ck_assert(tmemd_sd_stream_is_journal(env, fd));
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	ck_assert(!tmemd_sd_stream_is_journal(env, fd));
	ck_assert(!tmemd_sd_stream_is_journal(NULL, fd));
	ck_assert(!tmemd_sd_stream_is_journal("", fd));
	ck_assert(!tmemd_sd_stream_is_journal("12:34x", fd));
	ck_assert(!tmemd_sd_stream_is_journal("12", fd));
	ck_assert(!tmemd_sd_stream_is_journal(env, -1));
	close(fd);
}
END_TEST

/* Writes one entry through a sink on a pipe; returns what came out. */
static const char *log_through_pipe(struct tmemd_sd_log *lg, int priority,
				    const struct tmemd_sd_log_fields *f,
				    const char *text)
{
	int p[2];
	ssize_t n;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	lg->fd = p[1];
	tmemd_sd_log_write(lg, priority, f, text);
	close(p[1]);
	n = read(p[0], msg, sizeof(msg) - 1);
	close(p[0]);
	ck_assert_int_ge(n, 0);
	msg[n] = '\0';
	return msg;
}

START_TEST(test_log_stderr_lines)
{
	struct tmemd_sd_log_fields f = { .client = "web1", .domid = 7, .pool = 2 };
	struct tmemd_sd_log lg;
	char big[2000];

	unsetenv("JOURNAL_STREAM");
	tmemd_sd_log_open(&lg, TMEMD_SD_LOG_AUTO, STDERR_FILENO);
	ck_assert_int_eq(lg.target, TMEMD_SD_LOG_STDERR);
	ck_assert(!lg.fd_is_journal);
	ck_assert_str_eq(log_through_pipe(&lg, LOG_ERR, &f, "pool full"),
			 "tmemd: error: pool full -- client=web1 domid=7 pool=2\n");
	f.domid = -1;
	ck_assert_str_eq(log_through_pipe(&lg, LOG_INFO, &f, "hello"),
			 "tmemd: info: hello -- client=web1 pool=2\n");
	ck_assert_str_eq(log_through_pipe(&lg, LOG_WARNING, NULL, "plain"),
			 "tmemd: warning: plain\n");
	/* Over-long messages are cut, still one line. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_through_pipe(&lg, LOG_DEBUG, NULL, big);
	ck_assert_uint_lt(strlen(msg), sizeof(big));
	ck_assert_ptr_eq(strchr(msg, '\n'), msg + strlen(msg) - 1);
}
END_TEST

START_TEST(test_log_journal_stream_prefix)
{
	struct tmemd_sd_log lg;
	struct stat st;
	char env[64];
	int p[2];

	/* stderr is the service's journal stream (no structured journal
	 * wanted): journald reads the <N> prefix as the priority. */
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(fstat(p[1], &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	tmemd_sd_log_open(&lg, TMEMD_SD_LOG_STDERR, p[1]);
	ck_assert(lg.fd_is_journal);
	close(p[0]);
	close(p[1]);
	ck_assert_str_eq(log_through_pipe(&lg, LOG_NOTICE,
					  &(struct tmemd_sd_log_fields){ .client = NULL, .domid = 3, .pool = -1 },
					  "guest joined"),
			 "<5>guest joined -- domid=3\n");
	unsetenv("JOURNAL_STREAM");
}
END_TEST

/*
 * The journal path, end to end: in a private mount namespace a tmpfs on
 * /run holds a datagram socket where journald's would be.  Without the
 * socket the sink picks the fd; with it, the entry arrives in
 * journald's native format with the structured fields.  Runs in a child
 * so the namespace does not outlive it; the child prints what it got.
 */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = -1;

	if (fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text))
		rc = 0;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* A mount namespace of our own: directly as root, else inside a user
 * namespace where we are root (a package build need not run as root). */
static int private_mounts(void)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (unshare(CLONE_NEWNS) == 0)
		return 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -1;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0 ||
	    write_file("/proc/self/setgroups", "deny") < 0)
		return -1;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	return write_file("/proc/self/gid_map", map);
}

static int journal_child(int out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX,
				  .sun_path = "/run/systemd/journal/socket" };
	struct tmemd_sd_log_fields f = { .client = "db2", .domid = 12, .pool = 4,
					 .has_peer = true, .peer_uid = 1000 };
	struct tmemd_sd_log lg;
	char buf[2048];
	ssize_t n;
	int fd;

	if (private_mounts() < 0 ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0 ||
	    mkdir("/run/systemd", 0755) < 0 || mkdir("/run/systemd/journal", 0755) < 0)
		return 2;
	tmemd_sd_log_open(&lg, TMEMD_SD_LOG_JOURNAL, out);
	if (lg.target != TMEMD_SD_LOG_STDERR)
		return 3;
	tmemd_sd_log_write(&lg, LOG_WARNING, &f, "no journald yet");
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 3;
	tmemd_sd_log_open(&lg, TMEMD_SD_LOG_JOURNAL, out);
	if (lg.target != TMEMD_SD_LOG_JOURNAL)
		return 3;
	tmemd_sd_log_write(&lg, LOG_ERR, &f, "quota exceeded");
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n <= 0)
		return 4;
	if (write(out, "JOURNAL\n", 8) != 8 || write(out, buf, (size_t)n) != n)
		return 5;
	return 0;
}

START_TEST(test_log_journal_fields)
{
	int p[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		_exit(journal_child(p[1]));
	}
	close(p[1]);
	while ((n = read(p[0], msg + got, sizeof(msg) - 1 - got)) > 0)
		got += n;
	close(p[0]);
	msg[got] = '\0';
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "journal child failed (status %d; 2 = no mount namespace)", status);
	ck_assert_msg(!strncmp(msg, "tmemd: warning: no journald yet -- client=db2 domid=12 pool=4 "
			       "peer_uid=1000\nJOURNAL\n",
			       strlen("tmemd: warning: no journald yet -- client=db2 domid=12 pool=4 "
				      "peer_uid=1000\nJOURNAL\n")),
		      "got: %s", msg);
	ck_assert(notify_has_line(msg, "MESSAGE=quota exceeded"));
	ck_assert(notify_has_line(msg, "PRIORITY=3"));
	ck_assert(notify_has_line(msg, "SYSLOG_IDENTIFIER=tmemd"));
	ck_assert(notify_has_line(msg, "CLIENT=db2"));
	ck_assert(notify_has_line(msg, "DOMID=12"));
	ck_assert(notify_has_line(msg, "POOL=4"));
	/* An audit entry's control peer (journalctl -u tmemd PEER_UID=1000). */
	ck_assert(notify_has_line(msg, "PEER_UID=1000"));
	ck_assert(!strstr(msg, "CODE_FILE="));
}
END_TEST

static Suite *sd_suite(void)
{
	Suite *s = suite_create("daemon-systemd");
	TCase *n = tcase_create("notify"), *w = tcase_create("watchdog");
	TCase *l = tcase_create("log");

	tcase_add_checked_fixture(n, setup, teardown);
	tcase_add_test(n, test_ready_stopping);
	tcase_add_test(n, test_reloading_has_monotonic_usec);
	tcase_add_test(n, test_status);
	tcase_add_test(n, test_abstract_socket);
	tcase_add_test(n, test_not_under_systemd);
	suite_add_tcase(s, n);
	tcase_add_checked_fixture(w, setup, teardown);
	tcase_add_test(w, test_watchdog_pacing);
	tcase_add_test(w, test_watchdog_disabled);
	tcase_add_test(w, test_watchdog_bad_env);
	suite_add_tcase(s, w);
	tcase_add_test(l, test_stream_is_journal);
	tcase_add_test(l, test_log_stderr_lines);
	tcase_add_test(l, test_log_journal_stream_prefix);
	tcase_add_test(l, test_log_journal_fields);
	suite_add_tcase(s, l);
	return s;
}

int main(void)
{
	return tmem_test_main(sd_suite(), 0);
}
