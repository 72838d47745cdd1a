/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "control/control.h"
#include "control/ctl_proto.h"
#include "control_glue.h"
#include "log.h"

struct tmemd_ctl_glue {
	struct tmemd_control *ctl;
	struct tmemd_watch w;
	struct tmemd_loop *loop;
	struct tmemd_clients *reg;
	const struct tmemd_config *cfg;  /* main's; reloads change it in place */
};

struct each_ctx {
	tmemd_control_client_fn fn;
	void *arg;
	const char *spec;   /* with_client: canonical principal text */
	bool found;
	int rc;             /* with_client: fn's return */
};

static struct tmemd_control_client view(struct tmemd_client *c)
{
	return (struct tmemd_control_client){ .name = c->name, .label = c->label,
					      .domid = c->domid, .pc = c->pc };
}

static int each_adapter(struct tmemd_client *c, void *arg)
{
	struct each_ctx *e = arg;
	struct tmemd_control_client cc = view(c);

	return e->fn(&cc, e->arg);
}

/* The registry lock is held while fn runs, so the client stays. */
static int for_each_client(void *ctx, tmemd_control_client_fn fn, void *arg)
{
	struct tmemd_ctl_glue *g = ctx;
	struct each_ctx e = { .fn = fn, .arg = arg };

	return tmemd_clients_for_each(g->reg, each_adapter, &e);
}

static int match_adapter(struct tmemd_client *c, void *arg)
{
	struct each_ctx *e = arg;
	struct tmemd_control_client cc;

	if (strcmp(c->name, e->spec) != 0)
		return 0;
	cc = view(c);
	e->found = true;
	e->rc = e->fn(&cc, e->arg);
	return 1;
}

static int with_client(void *ctx, const char *spec,
		       tmemd_control_client_fn fn, void *arg)
{
	struct tmemd_ctl_glue *g = ctx;
	char key[TMEM_CLIENT_NAME_MAX];
	struct each_ctx e = { .fn = fn, .arg = arg, .spec = key };

	/* Registry names are canonical principals: "5" finds "domid:5". */
	if (!spec || ctl_principal_canon(spec, 0, key))
		return -ENOENT;
	tmemd_clients_for_each(g->reg, match_adapter, &e);
	return e.found ? e.rc : -ENOENT;
}

static bool file_grants(void *ctx, const struct tmem_uuid *uuid, const char *principal)
{
	struct tmemd_ctl_glue *g = ctx;

	return g->cfg && tmemd_config_grants(g->cfg, principal, uuid);
}

static void glue_audit(void *ctx, int priority, uid_t uid, const char *client, const char *msg)
{
	(void)ctx;
	tmemd_log_audit(priority, (uint32_t)uid, client, "control: %s", msg);
}

static void glue_log(void *ctx, int priority, const char *fmt, va_list ap)
{
	char line[400];

	(void)ctx;
	vsnprintf(line, sizeof(line), fmt, ap);
	tmemd_log(priority, "control: %s", line);
}

/* The control server's format string is the site: each of its lines
 * is limited on its own, and per peer uid. */
static void glue_log_peer(void *ctx, int priority, uid_t uid, const char *fmt, va_list ap)
{
	char line[400];

	(void)ctx;
	vsnprintf(line, sizeof(line), fmt, ap);
	tmemd_log_limited_at(priority, fmt, TMEMD_RL_UID(uid), "control: %s", line);
}

static void glue_refusals(void *ctx, struct tmemd_control_refusals *out)
{
	struct tmemd_ctl_glue *g = ctx;
	uint64_t counts[TMEMD_NR_REFUSAL_KINDS][TMEMD_NR_REASONS];

	_Static_assert(TMEMD_NR_REASONS <= TMEMD_CONTROL_MAX_REASONS, "room for every reason");
	tmemd_clients_refusals(g->reg, counts);
	out->nr = TMEMD_NR_REASONS;
	for (unsigned i = 0; i < TMEMD_NR_REASONS; i++) {
		out->reason[i] = tmemd_refusal_reason_name(i);
		out->handshakes[i] = counts[TMEMD_REFUSED_HANDSHAKE][i];
		out->requests[i] = counts[TMEMD_REFUSED_REQUEST][i];
	}
}

static void settings_hook(void *ctx, const char *name, int domid,
			  struct tmem_client_settings *s)
{
	struct tmemd_ctl_glue *g = ctx;

	tmemd_control_settings_for(g->ctl, name, domid, s);
}

static void on_control(struct tmemd_watch *w, uint32_t events)
{
	struct tmemd_ctl_glue *g = w->data;
	int rc = tmemd_control_handle_event(g->ctl, events);

	if (rc)
		log_err("control server failed: %s; tmemctl will not reach tmemd",
			strerror(-rc));
	if (rc)
		tmemd_loop_del(g->loop, &g->w);
}

int tmemd_ctl_glue_start(const struct tmemd_ctl_glue_config *cfg,
			 struct tmemd_loop *loop, struct tmemd_clients *reg,
			 struct tmemd_ctl_glue **out)
{
	struct tmemd_ctl_glue *g = calloc(1, sizeof(*g));
	char state_dir[PATH_MAX], err[512] = "";
	struct tmemd_control_config cc = {
		.runtime_dir = cfg->runtime_dir,
		.state_dir = cfg->state_dir,
		.transport = cfg->transport,
		.version = cfg->version,
		.admin_group = cfg->admin_group,
		.socket_mode = cfg->socket_mode,
		.max_conns_per_uid = cfg->max_conns_per_uid,
		.should_stop = cfg->should_stop,
	};
	struct tmemd_control_hooks hooks = {
		.store = tmemd_clients_store(reg),
		.policy = tmemd_clients_policy(reg),
		.for_each_client = for_each_client,
		.with_client = with_client,
		.log = glue_log,
		.log_peer = glue_log_peer,
		.refusals = glue_refusals,
		.file_grants = file_grants,
		.audit = glue_audit,
	};
	int rc;

	if (!g)
		return -ENOMEM;
	g->loop = loop;
	g->reg = reg;
	g->cfg = cfg->daemon_cfg;
	if (!cc.state_dir) {
		rc = tmemd_control_default_state_dir(state_dir, sizeof(state_dir));
		if (rc) {
			log_err("no state dir for the control server: %s", strerror(-rc));
			goto fail;
		}
		cc.state_dir = state_dir;
	}
	rc = tmemd_control_start(&cc, &hooks, g, &g->ctl, err, sizeof(err));
	if (rc == -ECANCELED)
		goto fail; /* stopping: main() says so */
	if (rc) {
		log_err("control server: %s", err[0] ? err : strerror(-rc));
		goto fail;
	}
	g->w = (struct tmemd_watch){ .fd = tmemd_control_fd(g->ctl),
				     .fn = on_control, .data = g };
	rc = tmemd_loop_add(loop, &g->w, EPOLLIN);
	if (rc) {
		log_err("control server: cannot watch it: %s", strerror(-rc));
		goto fail;
	}
	tmemd_clients_set_settings_hook(reg, settings_hook, g);
	*out = g;
	return 0;
fail:
	tmemd_control_stop(g->ctl);
	free(g);
	return rc;
}

int tmemd_ctl_glue_write_stats(struct tmemd_ctl_glue *g, const char *path)
{
	return tmemd_control_write_stats(g->ctl, path);
}

bool tmemd_ctl_glue_auth_stored(void *g, const struct tmem_uuid *uuid, const char *client)
{
	return tmemd_control_auth_stored(((struct tmemd_ctl_glue *)g)->ctl, uuid, client);
}

void tmemd_ctl_glue_note_reload(struct tmemd_ctl_glue *g, int rc, const char *message)
{
	tmemd_control_note_reload(g->ctl, rc, message);
}

void tmemd_ctl_glue_stop(struct tmemd_ctl_glue *g)
{
	if (!g)
		return;
	tmemd_clients_set_settings_hook(g->reg, NULL, NULL);
	tmemd_loop_del(g->loop, &g->w);
	tmemd_control_stop(g->ctl);
	free(g);
}
