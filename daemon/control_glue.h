/* SPDX-License-Identifier: MIT */
/*
 * Wires the control server (daemon/control/, tmemctl's side) into tmemd:
 * its fd into the main loop, the client registry behind its hooks, and
 * its stored admin settings into every new client's settings.  Runs on
 * the main thread only, like the server itself.
 */
#ifndef TMEMD_CONTROL_GLUE_H
#define TMEMD_CONTROL_GLUE_H

#include "client_registry.h"
#include "config.h"
#include "fallow.h"
#include "loop.h"

struct tmemd_ctl_glue;

struct tmemd_ctl_glue_config {
	const char *runtime_dir;   /* control.sock goes here */
	const char *state_dir;     /* NULL: the control server's default */
	const char *transport;     /* for "status" */
	const char *version;
	const char *admin_group;   /* NULL or "": root only */
	unsigned socket_mode;      /* 0: 0660 */
	unsigned max_conns_per_uid; /* 0: the server's default */
	const struct tmemd_config *daemon_cfg; /* the running config (file grants) */
	bool (*should_stop)(void *ctx); /* NULL, or asked while state.json is read */
	struct tmemd_fallow *fallow;    /* the elastic pool (NULL: none) */
};

/* Starts the server; logs and returns -errno on failure (-ECANCELED,
 * not logged: should_stop said stop). */
int tmemd_ctl_glue_start(const struct tmemd_ctl_glue_config *cfg,
			 struct tmemd_loop *loop, struct tmemd_clients *reg,
			 struct tmemd_ctl_glue **out);
/* The SIGUSR1 dump: the control server's "stats" document, written to
 * path atomically.  0 or -errno. */
int tmemd_ctl_glue_write_stats(struct tmemd_ctl_glue *g, const char *path);
/* For tmemd_reload(): the stored authorisations a reload must keep. */
bool tmemd_ctl_glue_auth_stored(void *g, const struct tmem_uuid *uuid, const char *client);
/* Records a reload's result (rc 0 or -errno) for tmemctl status. */
void tmemd_ctl_glue_note_reload(struct tmemd_ctl_glue *g, int rc, const char *message,
				const char *restart_pending);
/* Stops it (before clients, policy and store go).  Accepts NULL. */
void tmemd_ctl_glue_stop(struct tmemd_ctl_glue *g);
/* Migration between hosts started (NULL: none): tmemctl migrate-* and
 * the stats' "migrate" go to it.  Accepts g NULL. */
struct tmemd_migrate;
void tmemd_ctl_glue_set_migrate(struct tmemd_ctl_glue *g, struct tmemd_migrate *m);

#endif /* TMEMD_CONTROL_GLUE_H */
