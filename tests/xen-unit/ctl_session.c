/* SPDX-License-Identifier: MIT */
/* tmemd's control server driven by a child process (ctl_session.h). */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control_glue.h"
#include "ctl_session.h"
#include "loop.h"

static bool stop_loop(int signo, void *data)
{
	(void)signo;
	(void)data;
	return true;
}

/* One request line to the socket at path (waiting up to 5 s for it to
 * listen); its reply line into out. */
static void ctl_one(const char *path, const char *req, char out[512])
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), tries = 0;
	size_t n = 0;
	ssize_t r;

	out[0] = '\0';
	if (fd < 0 || strlen(path) >= sizeof(a.sun_path))
		goto out;
	memcpy(a.sun_path, path, strlen(path) + 1);
	while (connect(fd, (struct sockaddr *)&a, sizeof(a)) && ++tries < 500)
		usleep(10000);
	if (tries == 500 || write(fd, req, strlen(req)) != (ssize_t)strlen(req) ||
	    write(fd, "\n", 1) != 1)
		goto out;
	while (n < 511 && (r = read(fd, out + n, 511 - n)) > 0) {
		n += (size_t)r;
		if (memchr(out, '\n', n))
			break;
	}
	out[n] = '\0';
out:
	if (fd >= 0)
		close(fd);
}

/*
 * Runs tmemd's control server (the daemon's glue, over reg, with mig's
 * migration or none)
 * while a child process sends reqs one by one, then stops it; reply[i]
 * is request i's reply line.  dir holds control.sock and state/.  The
 * child is forked before the server starts, so it holds none of it
 * (valgrind checks the child's leaks too).
 */
void control_session(const char *dir, struct tmemd_clients *reg, struct tmemd_config *cfg,
		     struct tmemd_migrate *mig, const char *const *reqs, int n,
		     char (*reply)[512])
{
	char state[128], sock[160];
	struct tmemd_ctl_glue_config gc = { .runtime_dir = dir, .state_dir = state,
					    .transport = "xen", .version = "test",
					    .daemon_cfg = cfg };
	struct tmemd_ctl_glue *g;
	struct tmemd_loop *loop;
	int p[2], status;
	pid_t pid;

	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(sock, sizeof(sock), "%s/control.sock", dir);
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (int i = 0; i < n; i++) {
			char r[512] = ""; /* all of it is sent */

			ctl_one(sock, reqs[i], r);
			if (write(p[1], r, sizeof(r)) != (ssize_t)sizeof(r))
				_exit(1);
		}
		/* To the loop's thread: it alone blocks SIGTERM. */
		syscall(SYS_tgkill, getppid(), getppid(), SIGTERM);
		/* SIGKILL, not exit: valgrind would leak-check this child,
		 * which lacks the threads (OpenSSL's) whose state it holds. */
		raise(SIGKILL);
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(tmemd_loop_create(stop_loop, NULL, &loop), 0);
	ck_assert_int_eq(tmemd_ctl_glue_start(&gc, loop, reg, &g), 0);
	tmemd_ctl_glue_set_migrate(g, mig);
	ck_assert_int_eq(tmemd_loop_run(loop), 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(read(p[0], reply[i], 512), 512);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	tmemd_ctl_glue_stop(g);
	tmemd_loop_destroy(loop);
}
