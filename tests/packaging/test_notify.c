/* SPDX-License-Identifier: MIT */
/*
 * tmemd's sd_notify protocol, end to end: a real tmemd under a fake
 * $NOTIFY_SOCKET with the watchdog on, as tmemd.service runs it.
 *
 *   start:  FDSTORE=1 with FDNAME=tmemd-arena (the arena memfd, before
 *           any page is in it), READY=1 (guest.sock and control.sock
 *           already there), STATUS= with the counts, WATCHDOG=1 again
 *           and again;
 *   SIGHUP: RELOADING=1 (with MONOTONIC_USEC) and then READY=1, still
 *           running;
 *   SIGTERM: STOPPING=1, exit 0.
 *
 * Every message must come from tmemd's own pid (NotifyAccess=main).
 * Usage: test_notify [PATH-TO-TMEMD]  (default $TMEMD, then build/tmemd)
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/test_main.h"
#include "packaging/notify_sock.h"

#define WATCHDOG_USEC "400000" /* tmemd pings every 200 ms */

static const char *tmemd_path = "build/tmemd";
static struct notify_sock ns;
static char rundir[96], conf[96];
static pid_t tmemd = -1;
static char msg[4096];

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Reads messages until one has line (see notify_has_line) or timeout_ms
 * passes; fails the test then.  Returns that message in msg. */
static void expect(const char *line, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	pid_t pid;
	int n;

	for (;;) {
		int left = (int)(end - now_ms());

		n = notify_sock_recv(&ns, msg, sizeof(msg), left > 0 ? left : 0, &pid);
		ck_assert_msg(n != -ETIMEDOUT, "no %s from tmemd within %d ms",
			      line, timeout_ms);
		ck_assert_int_ge(n, 0);
		ck_assert_msg(pid == tmemd, "message from pid %d, not tmemd (%d): %s",
			      (int)pid, (int)tmemd, msg);
		if (notify_has_line(msg, line))
			return;
		/* Between the steps only these may come. */
		ck_assert_msg(notify_has_line(msg, "WATCHDOG=1") ||
			      notify_has_line(msg, "STATUS="),
			      "unexpected while waiting for %s: %s", line, msg);
	}
}

static void start_tmemd(void)
{
	char pid[16];
	FILE *f;

	ck_assert_int_eq(notify_sock_open(&ns), 0);
	snprintf(rundir, sizeof(rundir), "%s/run", ns.dir);
	ck_assert_int_eq(mkdir(rundir, 0755), 0);
	/* A real config file, so SIGHUP has something to re-read. */
	snprintf(conf, sizeof(conf), "%s/tmemd.conf", ns.dir);
	f = fopen(conf, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[defaults]\nweight = 100\n", f);
	ck_assert_int_eq(fclose(f), 0);

	tmemd = fork();
	ck_assert_int_ge(tmemd, 0);
	if (tmemd == 0) {
		/* A failed assertion ends the test without its teardown:
		 * tmemd must not outlive it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(127);
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		setenv("NOTIFY_SOCKET", ns.path, 1);
		setenv("WATCHDOG_USEC", WATCHDOG_USEC, 1);
		setenv("WATCHDOG_PID", pid, 1);
		execl(tmemd_path, "tmemd", "--foreground", "--transport", "local",
		      "--runtime-dir", rundir, "--memory", "16M", "-c", conf,
		      (char *)NULL);
		fprintf(stderr, "test_notify: exec %s: %s\n", tmemd_path,
			strerror(errno));
		_exit(127);
	}
}

static void stop_tmemd(void)
{
	char path[128];

	if (tmemd > 0 && waitpid(tmemd, NULL, WNOHANG) == 0) {
		kill(tmemd, SIGKILL);
		waitpid(tmemd, NULL, 0);
	}
	tmemd = -1;
	for (const char *const *n = (const char *const[]){ "guest.sock", "control.sock",
							  "stats.json", NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s", rundir, *n);
		unlink(path);
	}
	rmdir(rundir);
	unlink(conf);
	notify_sock_close(&ns);
}

static void assert_socket(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", rundir, name);
	ck_assert_msg(stat(path, &st) == 0 && S_ISSOCK(st.st_mode),
		      "READY=1 before %s was there", path);
}

START_TEST(test_notify_protocol)
{
	long long t0;
	int status;

	expect("FDSTORE=1", 10000);
	ck_assert_msg(notify_has_line(msg, "FDNAME=tmemd-arena"), "FDSTORE=1 without FDNAME: %s", msg);
	expect("READY=1", 10000);
	assert_socket("guest.sock");
	assert_socket("control.sock");
	expect("STATUS=", 5000);
	ck_assert_msg(strstr(msg, "client"), "STATUS= without client count: %s", msg);
	/* Two pings about 200 ms apart, so the event loop really sends them. */
	expect("WATCHDOG=1", 1000);
	t0 = now_ms();
	expect("WATCHDOG=1", 1000);
	ck_assert_int_ge(now_ms() - t0, 50);

	ck_assert_int_eq(kill(tmemd, SIGHUP), 0);
	expect("RELOADING=1", 5000);
	ck_assert(notify_has_line(msg, "MONOTONIC_USEC="));
	expect("READY=1", 5000);
	ck_assert_int_eq(waitpid(tmemd, NULL, WNOHANG), 0);
	expect("WATCHDOG=1", 1000);

	ck_assert_int_eq(kill(tmemd, SIGTERM), 0);
	expect("STOPPING=1", 5000);
	ck_assert_int_eq(waitpid(tmemd, &status, 0), tmemd);
	tmemd = -1;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "tmemd ended with status %d", status);
}
END_TEST

static Suite *notify_suite(void)
{
	Suite *s = suite_create("tmemd-notify");
	TCase *tc = tcase_create("protocol");

	tcase_add_checked_fixture(tc, start_tmemd, stop_tmemd);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_notify_protocol);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		tmemd_path = argv[1];
	else if (getenv("TMEMD"))
		tmemd_path = getenv("TMEMD");
	return tmem_test_main(notify_suite(), 0);
}
