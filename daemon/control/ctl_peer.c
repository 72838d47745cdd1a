/* SPDX-License-Identifier: MIT */
/*
 * Who is on the other end of a control connection.  SO_PEERCRED gives
 * the uid, gid and pid the peer had when it connected; SO_PEERGROUPS
 * (Linux 4.13) its supplementary groups at that moment, which is what
 * counts (a process that dropped its groups, e.g. with setpriv
 * --clear-groups, is not an admin even if /etc/group lists its user).
 * Only where SO_PEERGROUPS is missing do we fall back to the groups
 * /etc/group gives the uid (getgrouplist).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_internal.h"

#define CTL_MAX_GROUPS 1024

static bool in_list(const gid_t *groups, int n, gid_t gid)
{
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* 1 member, 0 not, -errno when SO_PEERGROUPS is unavailable. */
static int peergroups_has(int fd, gid_t gid)
{
	gid_t groups[CTL_MAX_GROUPS];
	socklen_t len = sizeof(groups);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0)
		return -errno;
	return in_list(groups, (int)(len / sizeof(gid_t)), gid);
}

static bool grouplist_has(uid_t uid, gid_t primary, gid_t gid)
{
	gid_t groups[CTL_MAX_GROUPS];
	int n = CTL_MAX_GROUPS;
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return false;
	if (getgrouplist(res->pw_name, primary, groups, &n) < 0)
		return false;
	return in_list(groups, n, gid);
}

int ctl_peer_identify(const struct tmemd_control *ctl, struct ctl_conn *conn)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int rc;

	if (getsockopt(conn->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return -errno;
	conn->uid = cred.uid;
	conn->pid = cred.pid;
	conn->writer = cred.uid == 0;
	if (conn->writer || !ctl->has_admin_gid)
		return 0;
	if (cred.gid == ctl->admin_gid) {
		conn->writer = true;
		return 0;
	}
	rc = peergroups_has(conn->fd, ctl->admin_gid);
	conn->writer = rc >= 0 ? rc == 1 : grouplist_has(cred.uid, cred.gid, ctl->admin_gid);
	return 0;
}
