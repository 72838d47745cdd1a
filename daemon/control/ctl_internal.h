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
	unsigned sock_mode;       /* control.sock's mode; stats.json gets it too */
	unsigned max_per_uid, max_conns;
	int epfd, lfd;
	int state_lock;           /* flock'd state dir fd, -1 before */
	struct tmemd_accept_pause pause; /* accept back-off on EMFILE */
	struct tmemd_log_limit refusals; /* "too many connections" lines */
	struct ctl_conn *conns;
	unsigned nr_conns;
	struct timespec started;  /* CLOCK_MONOTONIC */
	time_t started_wall;      /* the same moment, for "status" */
	struct ctl_state state;
	struct {                  /* the daemon's last config reload */
		bool done;
		int rc;           /* 0 or -errno */
		struct timespec when; /* CLOCK_MONOTONIC */
		char message[512];
		char restart_pending[256]; /* "arena, workers": keys not in force */
		char overridden[512];  /* "vm1 weight, vm2 compress": tmemctl over the file */
	} reload;
};

void ctl_log(struct tmemd_control *ctl, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A line peer uid can cause at will: through hooks.log_peer (which
 * rate-limits it), else hooks.log. */
void ctl_log_peer(struct tmemd_control *ctl, int prio, uid_t uid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ctl_peer.c: fills conn->uid/pid/writer from SO_PEERCRED/SO_PEERGROUPS;
 * a peer whose groups the kernel does not give is not a writer. */
int ctl_peer_identify(struct tmemd_control *ctl, struct ctl_conn *conn);

/* ctl_cmds.c: runs one parsed request.  0 and *result, or -errno + err. */
int ctl_cmd_run(struct tmemd_control *ctl, const struct ctl_request *req,
		json_t **result, struct ctl_err *err);

/* ctl_claim.c: an exclusive flock on the state dir (0 and *lock_fd, or
 * -EBUSY when another process holds it); whether a process listens on the
 * socket at path (1 yes, 0 no, -errno). */
int ctl_claim_state_dir(const char *dir, int *lock_fd);
int ctl_socket_in_use(const char *path);

/* ctl_stored.c: "list"'s stored array (--all), the parked clients
 * ("list --all", the stats document) and "forget". */
json_t *ctl_stored_json(struct tmemd_control *ctl);
/* Whether an attached client is named by spec (canonical principal). */
bool ctl_attached(struct tmemd_control *ctl, const char *spec);
json_t *ctl_parked_json(struct tmemd_control *ctl);
int ctl_cmd_migrate_check(struct tmemd_control *ctl, const struct ctl_request *req,
			  json_t **result, struct ctl_err *err);
int ctl_cmd_migrate_push(struct tmemd_control *ctl, const struct ctl_request *req,
			 json_t **result, struct ctl_err *err);
/* The "migrate" object of the stats document (ctl_migrate.c). */
json_t *ctl_migrate_stats_json(struct tmemd_control *ctl);
int ctl_cmd_forget(struct tmemd_control *ctl, const struct ctl_request *req,
		   json_t **result, struct ctl_err *err);

/* ctl_visible.c: what no tmemctl command made, shown anyway. */
/* The recovered clients not back yet: [{client, pages {ephemeral,
 * persistent}}]. */
json_t *ctl_recovered_json(struct tmemd_control *ctl);
/* Frees the recovered client key with its pages now (*pages: how many);
 * -ENOENT when none has that name. */
int ctl_drop_recovered(struct tmemd_control *ctl, const char *key, uint64_t *pages);
/* The shared-pool grants in force: [{uuid, client, from}], from being
 * "tmemd.conf", "tmemctl" or both. */
json_t *ctl_grants_json(struct tmemd_control *ctl);
/* The clients allowed to join uuid, whoever granted it. */
json_t *ctl_authorised_json(struct tmemd_control *ctl, const struct tmem_uuid *uuid);

/* ctl_audit.c: logs a state-changing request, its peer and its result
 * (rc 0, or -errno with err). */
void ctl_audit(struct tmemd_control *ctl, const struct ctl_conn *conn,
	       const struct ctl_request *req, int rc, const struct ctl_err *err);

/* The CTL_HAS_* settings stored under any of names (NULL-terminated). */
unsigned ctl_stored_has(const struct tmemd_control *ctl, const char *const *names);

/* ctl_reload.c: "status"'s last_reload object. */
json_t *ctl_reload_json(const struct tmemd_control *ctl);

/* ctl_restart.c: the "restart" object of stats and status. */
json_t *ctl_restart_json(struct tmemd_control *ctl);
/* ctl_stats.c: the documents of every client, or of the one only names (NULL: all). */
json_t *ctl_stats_document(struct tmemd_control *ctl, const char *only);
json_t *ctl_list_document(struct tmemd_control *ctl, const char *only);
/* The stats document's "pool" object; "status" sends the same one. */
json_t *ctl_pool_json(struct tmemd_control *ctl);
/* ctl_tier.c: the host tier's stats, the store's and a client's. */
json_t *ctl_tier_json(struct tmem_store *store);
json_t *ctl_tier_stats_json(const struct tmem_tier_stats *st);
json_t *ctl_client_tier_json(const struct tmem_client_info *info);
/* The elastic pool's figures (the memory_json hook's), or null. */
json_t *ctl_memory_json(struct tmemd_control *ctl);
/* The fields of one client that "list" and "stats" share. */
json_t *ctl_client_summary(struct tmemd_control *ctl,
			   const struct tmemd_control_client *cl);

#endif /* TMEMD_CTL_INTERNAL_H */
