// SPDX-License-Identifier: MIT
/* Starts and stops a real tmemd for the shim tests; see tmemd_fixture.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tmemd_fixture.h"

#ifndef SHIM_TEST_TMEMD
#define SHIM_TEST_TMEMD "build/tmemd"
#endif

static int sock_accepts(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ok;

	if (strlen(path) >= sizeof(sa.sun_path))
		return 0;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

int tmemd_fixture_restart(struct tmemd_fixture *f)
{
	const char *bin = getenv("TMEMD") ? getenv("TMEMD") : SHIM_TEST_TMEMD;
	int i, status;

	f->pid = fork();
	if (f->pid < 0)
		return -errno;
	if (f->pid == 0) {
		char log[320];

		/* Keep the test's output readable; the log stays for a look. */
		snprintf(log, sizeof(log), "%s/tmemd.log", f->dir);
		if (!freopen(log, "a", stderr) || !freopen(log, "a", stdout))
			_exit(126);
		if (f->conf[0])
			execl(bin, bin, "--foreground", "--transport", "local",
			      "--runtime-dir", f->dir, "--state-dir", f->dir, "--memory", "64M", "-c",
			      f->conf, (char *)NULL);
		else
			execl(bin, bin, "--foreground", "--transport", "local",
			      "--runtime-dir", f->dir, "--state-dir", f->dir, "--memory", "64M",
			      (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	for (i = 0; i < 500; i++) {
		if (sock_accepts(f->sock))
			return 0;
		if (waitpid(f->pid, &status, WNOHANG) == f->pid) {
			f->pid = -1;
			return -ECHILD;
		}
		usleep(10 * 1000);
	}
	return -ETIMEDOUT;
}

int tmemd_fixture_start(struct tmemd_fixture *f, const char *conf_text)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	FILE *fp;

	memset(f, 0, sizeof(*f));
	f->pid = -1;
	snprintf(f->dir, sizeof(f->dir), "%s/tmem-shim-XXXXXX", tmp);
	if (!mkdtemp(f->dir))
		return -errno;
	snprintf(f->sock, sizeof(f->sock), "%s/guest.sock", f->dir);
	if (conf_text) {
		snprintf(f->conf, sizeof(f->conf), "%s/tmemd.conf", f->dir);
		fp = fopen(f->conf, "w");
		if (!fp)
			return -errno;
		fputs(conf_text, fp);
		fclose(fp);
	}
	return tmemd_fixture_restart(f);
}

void tmemd_fixture_kill(struct tmemd_fixture *f, int sig)
{
	if (f->pid <= 0)
		return;
	kill(f->pid, sig);
	waitpid(f->pid, NULL, 0);
	f->pid = -1;
}

int tmemd_fixture_freeze(struct tmemd_fixture *f)
{
	int status;
	pid_t got;

	if (f->pid <= 0)
		return -ECHILD;
	if (kill(f->pid, SIGSTOP))
		return -errno;
	/* The parent hears of a group stop only once its last thread has
	 * stopped. */
	do
		got = waitpid(f->pid, &status, WUNTRACED);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	if (!WIFSTOPPED(status)) {
		f->pid = -1;
		return -ECHILD;
	}
	return 0;
}

void tmemd_fixture_stop(struct tmemd_fixture *f)
{
	char cmd[300];

	tmemd_fixture_kill(f, SIGTERM);
	if (!f->dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", f->dir);
}
