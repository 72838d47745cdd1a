/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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
#include "tmem.h"

bool harness_connectable(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

void harness_msleep(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

void daemon_start(struct daemon *d, const char *config, const char *memory)
{
	const char *bin = getenv("TMEMD_BIN");
	char conf[300], state[300];
	FILE *f;

	if (!bin)
		bin = TMEMD_DEFAULT_BIN;
	snprintf(d->dir, sizeof(d->dir), "/tmp/tmemd-test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d->dir));
	snprintf(d->sock, sizeof(d->sock), "%s/guest.sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/tmemd.log", d->dir);
	snprintf(conf, sizeof(conf), "%s/tmemd.conf", d->dir);
	snprintf(state, sizeof(state), "%s/state", d->dir);
	f = fopen(conf, "w");
	ck_assert_ptr_nonnull(f);
	fputs(config ? config : "", f);
	fclose(f);
	d->pid = fork();
	ck_assert_int_ge(d->pid, 0);
	if (d->pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 2);
		execl(bin, "tmemd", "-c", conf, "--runtime-dir", d->dir,
		      "--state-dir", state,
		      "--transport", "local", "--memory", memory ? memory : "32M",
		      "--foreground", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		if (harness_connectable(d->sock))
			return;
		if (!daemon_alive(d))
			break;
		harness_msleep(10);
	}
	daemon_dump_log(d);
	ck_abort_msg("tmemd did not start");
}

bool daemon_alive(struct daemon *d)
{
	int st;

	return d->pid > 0 && waitpid(d->pid, &st, WNOHANG) == 0;
}

static int remove_one(const char *path, const struct stat *sb, int flag,
		      struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) ? -1 : 0;
}

void harness_remove_tree(const char *dir)
{
	nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* After a clean stop the runtime dir has served its purpose. */
void daemon_remove_dir(struct daemon *d)
{
	harness_remove_tree(d->dir);
}

int daemon_stop(struct daemon *d)
{
	int st;

	if (!daemon_alive(d))
		return -1;
	kill(d->pid, SIGTERM);
	for (int i = 0; i < 1000; i++) {
		pid_t r = waitpid(d->pid, &st, WNOHANG);

		if (r == d->pid) {
			d->pid = 0;
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				daemon_dump_log(d);
			else
				daemon_remove_dir(d);
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		harness_msleep(10);
	}
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &st, 0);
	d->pid = 0;
	return -1;
}

json_t *daemon_stats(struct daemon *d)
{
	char path[300];
	json_error_t err;

	snprintf(path, sizeof(path), "%s/stats.json", d->dir);
	unlink(path);
	kill(d->pid, SIGUSR1);
	for (int i = 0; i < 500; i++) {
		if (access(path, F_OK) == 0) {
			json_t *doc = json_load_file(path, 0, &err);

			ck_assert_msg(doc, "stats.json: %s", err.text);
			return doc;
		}
		harness_msleep(10);
	}
	ck_abort_msg("no stats.json");
	return NULL;
}

json_t *stats_client(json_t *stats, const char *name)
{
	json_t *clients = json_object_get(stats, "clients"), *c;
	size_t i;

	json_array_foreach(clients, i, c)
		if (!strcmp(json_string_value(json_object_get(c, "name")), name))
			return c;
	return NULL;
}

void daemon_dump_log(struct daemon *d)
{
	harness_dump_file(d->log);
}

void harness_dump_file(const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return;
	fprintf(stderr, "---- %s ----\n", path);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(f);
}

void test_page(void *page, unsigned long long seed)
{
	unsigned long long *w = page, x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (unsigned i = 0; i < 512; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
}

/* An honest client: persistent puts and verified gets until stop_fd
 * is readable.  Exit status: 0, or the number of errors (max 100). */
int harness_honest(const char *sock, const char *name, int stop_fd)
{
	static char page[4096], back[4096];
	struct tmem_conn *c;
	unsigned errors = 0, n = 0;
	int32_t pool;

	if (tmem_connect(sock, name, &c))
		return 100;
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	if (pool < 0)
		return 101;
	fcntl(stop_fd, F_SETFL, O_NONBLOCK);
	for (;; n++) {
		struct tmem_oid o = { .oid = { n % 512, 1, 2 } };
		char b;

		test_page(page, n);
		errors += tmem_put(c, pool, &o, 0, page) != 1;
		errors += tmem_get(c, pool, &o, 0, back) != 1;
		errors += memcmp(page, back, 4096) != 0;
		if (n % 64 == 0 && read(stop_fd, &b, 1) >= 0)
			break;
	}
	tmem_disconnect(c);
	return errors > 99 ? 99 : (int)errors;
}
