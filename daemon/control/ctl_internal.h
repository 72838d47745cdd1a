/* SPDX-License-Identifier: MIT */
/*
 * The control server's own state, shared by its files: ctl_server.c
 * (sockets, connections), ctl_peer.c (credentials), ctl_cmds.c (command
 * handlers) and ctl_stats.c (the stats document).  Single-threaded: only
 * the daemon's loop thread touches it, so there are no locks.
 */
#ifndef TMEMD_CTL_INTERNAL_H
#define TMEMD_CTL_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "accept_pause.h"
#include "control.h"
#include "ctl_proto.h"
#include "ctl_state.h"

/* One accepted connection. */
struct ctl_conn {
	int fd;
	uid_t uid;
	pid_t pid;
	bool writer;          /* uid 0 or in the admin group */
	char *in;             /* TMEMD_CONTROL_MAX_MSG bytes, allocated lazily */
	size_t in_len;
	char *out;            /* the pending reply, malloc'd */
	size_t out_len, out_off;
	bool close_after_write; /* set after an unrecoverable request */
	struct ctl_conn *next;
};

struct tmemd_control {
	struct tmemd_control_hooks hooks;
	void *ctx;
	char runtime_dir[PATH_MAX];
	char state_dir[PATH_MAX];
	char sock_path[PATH_MAX];
	char state_path[PATH_MAX];
	char transport[32];
	char version[32];
	bool has_admin_gid;
	gid_t admin_gid;
	unsigned max_per_uid, max_conns;
	int epfd, lfd;
	struct tmemd_accept_pause pause; /* accept back-off on EMFILE */
	struct tmemd_log_limit refusals; /* "too many connections" lines */
	struct ctl_conn *conns;
	unsigned nr_conns;
	struct timespec started;  /* CLOCK_MONOTONIC */
	struct ctl_state state;
};

void ctl_log(struct tmemd_control *ctl, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ctl_peer.c: fills conn->uid/pid/writer from SO_PEERCRED/SO_PEERGROUPS;
 * a peer whose groups the kernel does not give is not a writer. */
int ctl_peer_identify(struct tmemd_control *ctl, struct ctl_conn *conn);

/* ctl_cmds.c: runs one parsed request.  0 and *result, or -errno + err. */
int ctl_cmd_run(struct tmemd_control *ctl, const struct ctl_request *req,
		json_t **result, struct ctl_err *err);

/* ctl_stats.c */
json_t *ctl_stats_document(struct tmemd_control *ctl);
json_t *ctl_list_document(struct tmemd_control *ctl);
/* The fields of one client that "list" and "stats" share. */
json_t *ctl_client_summary(struct tmemd_control *ctl,
			   const struct tmemd_control_client *cl);

#endif /* TMEMD_CTL_INTERNAL_H */
