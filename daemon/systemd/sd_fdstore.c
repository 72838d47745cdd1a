/* SPDX-License-Identifier: MIT */
/*
 * systemd's file descriptor store, for the arena memfd that must outlive
 * tmemd (FDSTORE=1 and FDNAME= on the way in, LISTEN_FDS and
 * LISTEN_FDNAMES on the next start).  libsystemd does the protocol.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "systemd/sd.h"

int tmemd_sd_fdstore_take(const char *name)
{
	char **names = NULL;
	int n = sd_listen_fds_with_names(1, &names), found = -ENOENT;

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;

		/* Not inherited by anything tmemd starts. */
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		if (found < 0 && names && names[i] && strcmp(names[i], name) == 0)
			found = fd;
	}
	if (names)
		for (int i = 0; i < n; i++)
			free(names[i]);
	free(names);
	return found;
}

int tmemd_sd_fdstore_put(int fd, const char *name)
{
	char msg[128];
	int rc;

	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
	rc = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
	return rc > 0 ? 1 : rc;
}
