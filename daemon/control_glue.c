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
#include "fallow_json.h"
#include "migrate/migrate.h"
#include "log.h"
#include "tmem_names.h"

/* A shared-pool authorisation the glue gave a client's key because it
 * is granted to another principal naming the client (sync_grants()). */
struct derived_grant {
	struct tmem_uuid uuid;
	char key[TMEM_CLIENT_NAME_MAX];
};

struct tmemd_ctl_glue {
	struct tmemd_control *ctl;
	struct tmemd_watch w;
	struct tmemd_loop *loop;
	struct tmemd_clients *reg;
	const struct tmemd_config *cfg;  /* main's; reloads change it in place */
	struct tmemd_fallow *fallow;
	struct derived_grant *derived;   /* TMEM_MAX_SHARED_AUTH of them */
	unsigned nr_derived;
	struct tmemd_migrate *migrate;   /* NULL: none configured */
};

struct each_ctx {
	struct tmemd_ctl_glue *g;
	tmemd_control_client_fn fn;
	void *arg;
	struct tmem_principal who;  /* with_client: whom spec names */
	const char *spec;   /* with_client: canonical principal text */
	bool found;
	int rc;             /* with_client: fn's return */
};

/* The strings a view's names point into. */
struct view_names {
	char bufs[2][TMEM_CLIENT_NAME_MAX];
	struct tmemd_client_names names;
};

/* The CTL_HAS_* settings tmemd.conf sets for a client called by names:
 * [defaults] away from the built-in values, or a [client] section. */
static unsigned file_has(const struct tmemd_config *cfg, const char *const *names)
{
	struct tmemd_config builtin;
	unsigned has = 0;

	tmemd_config_init(&builtin);
	has |= cfg->defaults.weight != builtin.defaults.weight ? CTL_HAS_WEIGHT : 0;
	has |= cfg->defaults.ephemeral_max != builtin.defaults.ephemeral_max ? CTL_HAS_EPH_MAX : 0;
	has |= cfg->defaults.persistent_max != builtin.defaults.persistent_max ?
	       CTL_HAS_PERS_MAX : 0;
	has |= cfg->defaults.spill_max != builtin.defaults.spill_max ? CTL_HAS_SPILL_MAX : 0;
	has |= memcmp(&cfg->defaults.compress, &builtin.defaults.compress,
		      sizeof(builtin.defaults.compress)) ? CTL_HAS_COMPRESS : 0;
	tmemd_config_free(&builtin);
	for (unsigned i = 0; names[i]; i++) {
		const struct tmemd_client_conf *cc = tmemd_config_client(cfg, names[i]);

		if (!cc)
			continue;
		has |= (cc->has_weight ? CTL_HAS_WEIGHT : 0) |
		       (cc->has_ephemeral_max ? CTL_HAS_EPH_MAX : 0) |
		       (cc->has_persistent_max ? CTL_HAS_PERS_MAX : 0) |
		       (cc->has_spill_max ? CTL_HAS_SPILL_MAX : 0) |
		       (cc->has_compress ? CTL_HAS_COMPRESS : 0);
	}
	return has;
}

static struct tmemd_control_client view(struct tmemd_ctl_glue *g, struct tmemd_client *c,
					struct view_names *vn)
{
	struct tmemd_control_client cc = { .name = c->name, .label = c->label,
					   .domid = c->domid, .pc = c->pc };

	tmemd_client_names(c, &vn->names, vn->bufs);
	cc.names = vn->names.by;
	tmemd_config_client_settings(g->cfg, NULL, &cc.file);
	for (unsigned i = 0; vn->names.by[i]; i++)
		tmemd_config_client_apply(g->cfg, vn->names.by[i], &cc.file);
	cc.file_has = file_has(g->cfg, vn->names.by);
	return cc;
}

static int each_adapter(struct tmemd_client *c, void *arg)
{
	struct each_ctx *e = arg;
	struct view_names vn;
	struct tmemd_control_client cc = view(e->g, c, &vn);

	return e->fn(&cc, e->arg);
}

/* The registry lock is held while fn runs, so the client stays. */
static int for_each_client(void *ctx, tmemd_control_client_fn fn, void *arg)
{
	struct tmemd_ctl_glue *g = ctx;
	struct each_ctx e = { .g = g, .fn = fn, .arg = arg };

	return tmemd_clients_for_each(g->reg, each_adapter, &e);
}

/*
 * Whether spec (parsed into who) names c: "uuid:U" the client keyed so,
 * "domid:N" the domain whose id is N now, a NAME the domain whose xl
 * name (label) is NAME or the local client NAME.  tmemd serves one
 * transport at a time, so a NAME never finds both.
 */
static bool names_client(const struct tmemd_client *c, const struct tmem_principal *who,
			 const char *spec)
{
	switch (who->kind) {
	case TMEM_PRINCIPAL_UUID:
		return !strcmp(c->name, spec);
	case TMEM_PRINCIPAL_XEN:
		return c->domid >= 0 && (unsigned)c->domid == who->domid;
	case TMEM_PRINCIPAL_LOCAL:
		return !strcmp(c->domid >= 0 ? c->label : c->name, spec);
	default:
		return false;
	}
}

static int match_adapter(struct tmemd_client *c, void *arg)
{
	struct each_ctx *e = arg;
	struct tmemd_control_client cc;
	struct view_names vn;

	if (!names_client(c, &e->who, e->spec))
		return 0;
	cc = view(e->g, c, &vn);
	e->found = true;
	e->rc = e->fn(&cc, e->arg);
	return 1;
}

static int with_client(void *ctx, const char *spec,
		       tmemd_control_client_fn fn, void *arg)
{
	struct tmemd_ctl_glue *g = ctx;
	char key[TMEM_CLIENT_NAME_MAX];
	struct each_ctx e = { .g = g, .fn = fn, .arg = arg, .spec = key };

	/* "5" finds what "domid:5" does. */
	if (!spec || ctl_principal_canon(spec, 0, key) ||
	    tmem_principal_parse(key, TMEM_PRINCIPAL_CANONICAL, &e.who))
		return -ENOENT;
	tmemd_clients_for_each(g->reg, match_adapter, &e);
	return e.found ? e.rc : -ENOENT;
}

static int reapply(void *ctx)
{
	return tmemd_clients_reapply(((struct tmemd_ctl_glue *)ctx)->reg);
}

/*
 * Shared-pool authorisations by name.  The store lets a client join a
 * shared pool when (uuid, its key) is authorised; an admin grants to
 * any principal (tmemd.conf's [client X] shared-auth, tmemctl
 * shared-auth X): a domain's xl name, its uuid:U, domid:N.  So for
 * every attached client the glue authorises its key for what each of
 * its other names is granted, and takes back what it gave once that no
 * longer holds (the grant was revoked, the client went, a domid moved
 * on) unless the key is granted itself.  Run when a client attaches
 * (before it is served), when tmemctl changes grants and after a
 * reload; a client that went keeps what was derived for it until the
 * next run, harmless, since its key joins nothing while it is away and
 * is checked again when it attaches.  A local client's only name is its
 * key, so it never gets a domain's grants.
 */
struct grant_walk {
	struct tmemd_ctl_glue *g;
	struct derived_grant *want;
	unsigned nr, lost;
};

static void want_grant(struct grant_walk *w, const struct tmem_uuid *u, const char *key)
{
	for (unsigned i = 0; i < w->nr; i++)
		if (w->want[i].uuid.lo == u->lo && w->want[i].uuid.hi == u->hi &&
		    !strcmp(w->want[i].key, key))
			return;
	if (w->nr == TMEM_MAX_SHARED_AUTH) {
		w->lost++;
		return;
	}
	w->want[w->nr].uuid = *u;
	snprintf(w->want[w->nr].key, sizeof(w->want[w->nr].key), "%s", key);
	w->nr++;
}

static int grant_cb(struct tmemd_client *c, void *arg)
{
	struct grant_walk *w = arg;
	char bufs[2][TMEM_CLIENT_NAME_MAX];
	struct tmemd_client_names names;
	struct tmem_uuid stored[TMEM_MAX_SHARED_AUTH];

	tmemd_client_names(c, &names, bufs);
	for (unsigned i = 0; names.by[i]; i++) {
		const struct tmemd_client_conf *cc;
		unsigned n;

		if (!strcmp(names.by[i], names.key))
			continue;  /* granted to the key itself: in the store already */
		cc = w->g->cfg ? tmemd_config_client(w->g->cfg, names.by[i]) : NULL;
		for (unsigned j = 0; cc && j < cc->nr_auth; j++)
			want_grant(w, &cc->auth[j], names.key);
		n = tmemd_control_stored_auths(w->g->ctl, names.by[i], stored,
					       TMEM_MAX_SHARED_AUTH);
		for (unsigned j = 0; j < n && j < TMEM_MAX_SHARED_AUTH; j++)
			want_grant(w, &stored[j], names.key);
	}
	return 0;
}

static bool granted_directly(struct tmemd_ctl_glue *g, const struct derived_grant *d)
{
	return (g->cfg && tmemd_config_grants(g->cfg, d->key, &d->uuid)) ||
	       tmemd_control_auth_stored(g->ctl, &d->uuid, d->key);
}

static void sync_grants(struct tmemd_ctl_glue *g)
{
	struct tmem_store *store = tmemd_clients_store(g->reg);
	struct grant_walk w = { .g = g };
	unsigned failed = 0;

	w.want = calloc(TMEM_MAX_SHARED_AUTH, sizeof(*w.want));
	if (!w.want) {
		log_err("shared-pool authorisations by name: out of memory");
		return;
	}
	tmemd_clients_for_each(g->reg, grant_cb, &w);
	/* Revoke what no longer holds first: it makes room for the rest. */
	for (unsigned i = 0; i < g->nr_derived; i++) {
		const struct derived_grant *d = &g->derived[i];
		bool keep = false;

		for (unsigned j = 0; j < w.nr && !keep; j++)
			keep = w.want[j].uuid.lo == d->uuid.lo && w.want[j].uuid.hi == d->uuid.hi &&
			       !strcmp(w.want[j].key, d->key);
		if (!keep && !granted_directly(g, d))
			store_shared_auth(store, &d->uuid, d->key, false);
	}
	for (unsigned i = 0; i < w.nr; i++)
		if (store_shared_auth(store, &w.want[i].uuid, w.want[i].key, true))
			failed++;
	if (failed || w.lost)
		log_warn("shared-pool authorisations by name: %u could not be given to the "
			 "clients they name: more than tmemd holds (%u)", failed + w.lost,
			 (unsigned)TMEM_MAX_SHARED_AUTH);
	free(g->derived);
	g->derived = w.want;
	g->nr_derived = w.nr;
}

static void grants_changed(void *ctx)
{
	sync_grants(ctx);
}

static void on_attach(void *ctx, struct tmemd_client *c)
{
	struct tmemd_ctl_glue *g = ctx;

	/* A local client has no other name and nothing derived to go stale. */
	if (c->domid >= 0 || g->nr_derived)
		sync_grants(g);
}

/* Parked clients, for list --all, the stats and forget. */
struct parked_ctx {
	tmemd_control_parked_fn fn;
	void *arg;
	const char *spec;       /* forget_parked */
	struct tmem_principal who;
	struct tmemd_parked found;
	bool hit;
};

static int parked_adapter(const struct tmemd_parked *p, void *arg)
{
	struct parked_ctx *pc = arg;
	struct tmemd_control_parked cp = { .key = p->key, .label = p->label,
					   .parked_at = p->parked_at, .pages = p->pages,
					   .pools = p->pools };

	return pc->fn(&cp, pc->arg);
}

static int for_each_parked(void *ctx, tmemd_control_parked_fn fn, void *arg)
{
	struct parked_ctx pc = { .fn = fn, .arg = arg };

	return tmemd_clients_for_each_parked(((struct tmemd_ctl_glue *)ctx)->reg,
					     parked_adapter, &pc);
}

static void park_stats(void *ctx, struct tmemd_control_park_stats *out)
{
	struct tmemd_park_stats ps;

	tmemd_clients_park_stats(((struct tmemd_ctl_glue *)ctx)->reg, &ps);
	*out = (struct tmemd_control_park_stats){
		.pools_parked = ps.pools_parked, .pools_claimed = ps.pools_claimed,
		.pools_expired = ps.pools_expired, .pages_parked = ps.pages_parked,
		.pages_claimed = ps.pages_claimed, .pages_expired = ps.pages_expired,
		.parked = ps.parked,
	};
}

/* A parked client is named by its key, or by the xl name it had. */
static int find_parked(const struct tmemd_parked *p, void *arg)
{
	struct parked_ctx *pc = arg;

	if (strcmp(p->key, pc->spec) &&
	    (pc->who.kind != TMEM_PRINCIPAL_LOCAL || strcmp(p->label, pc->spec)))
		return 0;
	pc->found = *p;
	pc->hit = true;
	return 1;
}

static int forget_parked(void *ctx, const char *spec, char key[TMEM_CLIENT_NAME_MAX],
			 uint64_t *pages)
{
	struct tmemd_ctl_glue *g = ctx;
	struct parked_ctx pc = { .spec = spec };

	if (tmem_principal_parse(spec, TMEM_PRINCIPAL_CANONICAL, &pc.who))
		return -ENOENT;
	tmemd_clients_for_each_parked(g->reg, find_parked, &pc);
	if (!pc.hit || tmemd_clients_forget_parked(g->reg, pc.found.key))
		return -ENOENT;
	store_drop_detached(tmemd_clients_store(g->reg), pc.found.key);
	snprintf(key, TMEM_CLIENT_NAME_MAX, "%s", pc.found.key);
	*pages = pc.found.pages;
	log_notice("parked client %s (%s) forgotten: %llu persistent pages freed",
		   pc.found.key, pc.found.label, (unsigned long long)pc.found.pages);
	return 0;
}

static int copy_key(const struct tmemd_control_client *c, void *arg)
{
	snprintf(arg, TMEM_CLIENT_NAME_MAX, "%s", c->name);
	return 0;
}

/* The key client is stored under: an attached client's by any of its
 * names (a domain's xl name, domid:N), a parked one's by its key or the
 * xl name it had; else client itself. */
static void migrate_key(struct tmemd_ctl_glue *g, const char *client,
			char key[TMEM_CLIENT_NAME_MAX])
{
	struct parked_ctx pc = { .spec = client };

	snprintf(key, TMEM_CLIENT_NAME_MAX, "%s", client);
	if (!with_client(g, client, copy_key, key))
		return;
	if (!tmem_principal_parse(client, TMEM_PRINCIPAL_CANONICAL, &pc.who)) {
		tmemd_clients_for_each_parked(g->reg, find_parked, &pc);
		if (pc.hit)
			snprintf(key, TMEM_CLIENT_NAME_MAX, "%s", pc.found.key);
	}
}

/* Migration between hosts: daemon/migrate/migrate.h does the work. */
static int glue_migrate_check(void *ctx, const char *client, const char *peer,
			      struct tmemd_control_migrate_check *out, char *why, size_t len)
{
	struct tmemd_migrate_check c;
	char key[TMEM_CLIENT_NAME_MAX];
	int rc;

	migrate_key(ctx, client, key);
	rc = tmemd_migrate_check(((struct tmemd_ctl_glue *)ctx)->migrate, key, peer, &c, why,
				 len);

	*out = (struct tmemd_control_migrate_check){
		.reachable = c.reachable, .authenticated = c.authenticated, .room = c.room,
		.pages = c.pages, .stored_pages = c.stored_pages,
		.peer_free_pages = c.peer_free_pages,
	};
	return rc;
}

static int glue_migrate_push(void *ctx, const char *client, const char *peer, uint64_t *pages,
			     char *why, size_t len)
{
	char key[TMEM_CLIENT_NAME_MAX];

	migrate_key(ctx, client, key);
	return tmemd_migrate_push(((struct tmemd_ctl_glue *)ctx)->migrate, key, peer, pages,
				  why, len);
}

static void glue_migrate_stats(void *ctx, struct tmemd_control_migrate_stats *out)
{
	struct tmemd_migrate *m = ((struct tmemd_ctl_glue *)ctx)->migrate;
	struct tmemd_migrate_stats s;

	tmemd_migrate_get_stats(m, &s);
	*out = (struct tmemd_control_migrate_stats){
		.enabled = m != NULL, .transfers_out = s.transfers_out,
		.transfers_in = s.transfers_in, .pages_sent = s.pages_sent,
		.bytes_sent = s.bytes_sent, .pages_received = s.pages_received,
		.bytes_received = s.bytes_received, .send_ns = s.send_ns,
		.transfer_ns = s.transfer_ns, .refused = s.refused,
		.failed_pulls = s.failed_pulls,
		.unreachable = s.unreachable,
	};
}

void tmemd_ctl_glue_set_migrate(struct tmemd_ctl_glue *g, struct tmemd_migrate *m)
{
	if (g)
		g->migrate = m;
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

static void settings_hook(void *ctx, const struct tmemd_client_names *names,
			  struct tmem_client_settings *s)
{
	struct tmemd_ctl_glue *g = ctx;

	tmemd_control_settings_for(g->ctl, names->by, s);
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

static json_t *glue_memory_json(void *ctx)
{
	struct tmemd_ctl_glue *g = ctx;

	return tmemd_fallow_json(g->fallow);
}

static int glue_release(void *ctx, uint64_t bytes, uint64_t *released)
{
	struct tmemd_ctl_glue *g = ctx;

	if (!g->fallow)
		return -EOPNOTSUPP;
	return tmemd_fallow_release(g->fallow, bytes, released);
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
		.reapply = reapply,
		.grants_changed = grants_changed,
		.for_each_parked = for_each_parked,
		.park_stats = park_stats,
		.forget_parked = forget_parked,
		.log = glue_log,
		.log_peer = glue_log_peer,
		.refusals = glue_refusals,
		.file_grants = file_grants,
		.audit = glue_audit,
		.memory_json = glue_memory_json,
		.release = glue_release,
		.migrate_check = glue_migrate_check,
		.migrate_push = glue_migrate_push,
		.migrate_stats = glue_migrate_stats,
	};
	int rc;

	if (!g)
		return -ENOMEM;
	g->loop = loop;
	g->reg = reg;
	g->cfg = cfg->daemon_cfg;
	g->fallow = cfg->fallow;
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
	tmemd_clients_set_attach_hook(reg, on_attach, g);
	sync_grants(g);
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

void tmemd_ctl_glue_note_reload(struct tmemd_ctl_glue *g, int rc, const char *message,
				const char *restart_pending)
{
	tmemd_control_note_reload(g->ctl, rc, message, restart_pending);
	sync_grants(g);  /* the file's grants by name may have changed */
}

void tmemd_ctl_glue_stop(struct tmemd_ctl_glue *g)
{
	if (!g)
		return;
	tmemd_clients_set_settings_hook(g->reg, NULL, NULL);
	tmemd_clients_set_attach_hook(g->reg, NULL, NULL);
	tmemd_loop_del(g->loop, &g->w);
	tmemd_control_stop(g->ctl);
	free(g->derived);
	free(g);
}
