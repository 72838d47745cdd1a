/* SPDX-License-Identifier: MIT */
/*
 * Who may write through control.sock (daemon/control/ctl_peer.c), with
 * real peers: forked children with chosen uid and supplementary groups
 * connect to a unix socket and ctl_peer_identify() judges them.  Needs
 * root (setgroups, setuid), as make check runs in CI.
 *
 * Issue 19 item 12: SO_PEERGROUPS failed for a peer in more than 1024
 * groups, and ctl_peer.c fell back to /etc/group, where a process that
 * had dropped the admin group was still listed: a writer again.  Now
 * the groups come from the kernel however many there are, and when the
 * kernel does not give them the peer is read-only: the attack itself is
 * replayed with SO_PEERGROUPS failing and a private /etc/group that lists
 * the peer's user in the admin group.
 */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_main.h"
#include "control/ctl_internal.h"

#define ADMIN_GID 4242u
#define NOBODY 65534u

/* Connects a child with these supplementary groups, as uid/gid nobody,
 * and returns ctl_peer_identify's verdict on it. */
static bool writer_with_groups(unsigned ngroups, bool with_admin)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct tmemd_control ctl = { .has_admin_gid = true, .admin_gid = ADMIN_GID };
	struct ctl_conn conn = { .fd = -1 };
	char dir[] = "/tmp/ctl-peer.XXXXXX";
	int lfd, st, go[2];
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", dir);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	ck_assert_int_eq(chmod(dir, 0777) | chmod(sa.sun_path, 0777), 0);
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		gid_t *groups = calloc(ngroups, sizeof(*groups));
		int fd;
		char b;

		close(go[1]);
		for (unsigned i = 0; i < ngroups; i++)
			groups[i] = 10000 + i;
		if (with_admin)
			groups[ngroups - 1] = ADMIN_GID;
		if (setgroups(ngroups, groups) || setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(3);
		(void)read(go[0], &b, 1); /* stay connected until judged */
		_exit(0);
	}
	close(go[0]);
	conn.fd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(conn.fd, 0);
	ck_assert_int_eq(ctl_peer_identify(&ctl, &conn), 0);
	ck_assert_uint_eq(conn.uid, NOBODY);
	close(go[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed: %d", st);
	close(conn.fd);
	close(lfd);
	unlink(sa.sun_path);
	rmdir(dir);
	return conn.writer;
}

START_TEST(test_peer_few_groups)
{
	ck_assert(writer_with_groups(3, true));
	ck_assert(!writer_with_groups(3, false));
}
END_TEST

/* More groups than one SO_PEERGROUPS buffer held before (1024). */
START_TEST(test_peer_groups_over_1024)
{
	ck_assert_msg(writer_with_groups(1100, true),
		      "a peer with the admin group among 1100 is not a writer");
	ck_assert(!writer_with_groups(1100, false));
	ck_assert(!writer_with_groups(5000, false));
	ck_assert(writer_with_groups(5000, true));
}
END_TEST

/*
 * The kernel not saying: this executable's getsockopt() wins over libc's
 * for ctl_peer.c too, and when told to it fails SO_PEERGROUPS as a
 * kernel without it, or a failure, would.
 */
static bool peergroups_fail;

int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	if (peergroups_fail && level == SOL_SOCKET && name == SO_PEERGROUPS) {
		errno = ENOPROTOOPT;
		return -1;
	}
	return (int)syscall(SYS_getsockopt, fd, level, name, val, len);
}

/*
 * The attack: a process that dropped the admin group, whose user
 * /etc/group still lists in it (what the old fallback read), with
 * SO_PEERGROUPS failing.  Judged in a child with a private mount
 * namespace and that /etc/group: exit 0 read-only, 1 writer, 2 set-up
 * failed.
 */
static int judge_with_listed_group(void)
{
	char group[] = "/tmp/ctl-peer-group.XXXXXX";
	int fd = mkstemp(group);
	bool writer;

	if (fd < 0 || dprintf(fd, "root:x:0:\nnogroup:x:65534:\n"
			      "tmemadm:x:%u:nobody\n", ADMIN_GID) < 0 ||
	    unshare(CLONE_NEWNS) ||
	    /* types named: valgrind reads them */
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
	    mount(group, "/etc/group", "none", MS_BIND, NULL))
		return 2;
	close(fd);
	unlink(group);
	peergroups_fail = true;
	writer = writer_with_groups(3, false) || writer_with_groups(3, true);
	return writer ? 1 : 0;
}

START_TEST(test_peer_groups_unknown_fail_closed)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(judge_with_listed_group());
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 2, "set-up failed: %d", st);
	ck_assert_msg(WEXITSTATUS(st) == 0,
		      "a peer whose groups the kernel does not give is a writer");
}
END_TEST

static Suite *ctl_peer_suite(void)
{
	Suite *s = suite_create("ctl-peer");
	TCase *tc = tcase_create("peer");

	if (tmem_test_have_root("test_ctl_peer", "setgroups, setuid")) {
		tcase_add_test(tc, test_peer_few_groups);
		tcase_add_test(tc, test_peer_groups_over_1024);
		tcase_add_test(tc, test_peer_groups_unknown_fail_closed);
	}
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(ctl_peer_suite(), 0);
}
