/* SPDX-License-Identifier: MIT */
/*
 * Who is on the other end of a control connection.  SO_PEERCRED gives
 * the uid, gid and pid the peer had when it connected; SO_PEERGROUPS
 * (Linux 4.13) its supplementary groups at that moment, which is what
 * counts (a process that dropped its groups, e.g. with setpriv
 * --clear-groups, is not an admin even if /etc/group lists its user).
 * When the kernel does not say, the peer is read-only: falling back to
 * /etc/group would make such a process a writer again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "ctl_internal.h"

static bool in_list(const gid_t *groups, size_t n, gid_t gid)
{
	for (size_t i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/*
 * 1 member, 0 not, -errno when the kernel does not say.  The buffer is
 * sized to the answer: a peer in more groups than the first try holds
 * gets ERANGE and the size it needs.
 */
static int peergroups_has(int fd, gid_t gid)
{
	gid_t first[64], *groups = first;
	socklen_t len = sizeof(first);
	int rc;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0) {
		if (errno != ERANGE || len <= sizeof(first))
			return -errno;
		groups = malloc(len);
		if (!groups)
			return -ENOMEM;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0) {
			rc = -errno;
			goto out;
		}
	}
	rc = in_list(groups, len / sizeof(gid_t), gid);
out:
	if (groups != first)
		free(groups);
	return rc;
}

int ctl_peer_identify(struct tmemd_control *ctl, struct ctl_conn *conn)
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
	conn->writer = rc == 1;
	if (rc < 0)
		ctl_log_peer(ctl, LOG_WARNING, cred.uid,
			     "control: uid %u: its groups are unknown (%s); read-only",
			(unsigned)cred.uid, strerror(-rc));
	return 0;
}
