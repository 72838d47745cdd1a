/* SPDX-License-Identifier: MIT */
/*
 * tmemd: options and config, then the subsystems in dependency order
 * (store, policy, clients, workers, control server, transport), READY=1,
 * the main loop, and the same order backwards on SIGTERM/SIGINT.  Exit 0
 * after a clean stop, 1 on a startup or runtime failure, 2 on bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_registry.h"
#include "compactor.h"
#include "spiller.h"
#include "fallow.h"
#include "config.h"
#include "config_check.h"
#include "control_glue.h"
#include "log.h"
#include "loop.h"
#include "migrate/migrate.h"
#include "options.h"
#include "reload.h"
#include "restart.h"
#include "service.h"
#include "size.h"
#include "transport.h"
#include "workers.h"


struct tmemd {
	struct tmemd_config cfg;
	const char *config_path;      /* NULL: none, SIGHUP re-reads nothing */
	bool discard_arena;
	struct tmemd_restart restart;  /* owns the store and its arena */
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_clients *clients;
	struct tmemd_workers *workers;
	struct tmemd_loop *loop;
	const struct tmem_transport_ops *transport;
	void *transport_state;
	struct tmemd_ctl_glue *control;
	struct tmemd_service service;
	struct tmemd_compactor compactor;
	struct tmemd_spiller spiller;
	int spill_fd;             /* the host tier, -1: none; closed after the store */
	struct tmemd_fallow *fallow;
	struct tmemd_migrate *migrate; /* NULL: no migrate-key */
	char stats_path[300];
};

/*
 * A SIGTERM or SIGINT sent during the start: the loop that reads them
 * from its signalfd does not run yet, so they wait, blocked (loop.c).
 * The start asks here between its steps and inside the long ones (the
 * state file's reads, the arena's records), and stops cleanly: nothing
 * in the arena is changed by a start given up (pools/COMMIT.md).
 */
static bool stop_pending(void *ctx)
{
	sigset_t set;

	(void)ctx;
	return sigpending(&set) == 0 &&
	       (sigismember(&set, SIGTERM) == 1 || sigismember(&set, SIGINT) == 1);
}

/* -ECANCELED when a stop is pending, else 0. */
static int start_step_done(void)
{
	return stop_pending(NULL) ? -ECANCELED : 0;
}

static int merge_settings(struct tmemd_config *cfg, const struct tmemd_options *o)
{
	char err[512];
	int rc;

	if (o->config_path) {
		rc = tmemd_config_load_file(cfg, o->config_path, err, sizeof(err));
		if (rc) {
			log_err("%s", err);
			return rc;
		}
	}
	if (o->transport)
		snprintf(cfg->transport, sizeof(cfg->transport), "%s", o->transport);
	if (o->runtime_dir)
		snprintf(cfg->runtime_dir, sizeof(cfg->runtime_dir), "%s", o->runtime_dir);
	if (o->state_dir)
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", o->state_dir);
	if (o->memory_bytes)
		cfg->memory_bytes = o->memory_bytes;
	if (o->workers)
		cfg->workers = o->workers;
	if (o->arena_path)
		snprintf(cfg->arena_path, sizeof(cfg->arena_path), "%s", o->arena_path);
	/* Nothing outlives tmemd without a file or the fd store: saying
	 * nothing would let the admin believe something was thrown away. */
	if (o->discard_arena && !cfg->arena_path[0] && !getenv("NOTIFY_SOCKET")) {
		log_err("--discard-arena: there is no arena to discard (no --arena or arena = "
			"file, and not run by systemd, whose fd store would hold one)");
		return -EINVAL;
	}
	if (!cfg->memory_bytes)
		cfg->memory_bytes = TMEMD_DEFAULT_MEMORY;
	if (!cfg->workers) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		cfg->workers = n < 1 ? 1 : n > TMEMD_MAX_WORKERS ? TMEMD_MAX_WORKERS : (unsigned)n;
	}
	if (!cfg->runtime_dir[0]) {
		const char *xdg = getenv("XDG_RUNTIME_DIR");

		if (geteuid() != 0 && xdg && xdg[0] == '/' && strlen(xdg) < 200)
			snprintf(cfg->runtime_dir, sizeof(cfg->runtime_dir), "%s/tmemd", xdg);
		else
			snprintf(cfg->runtime_dir, sizeof(cfg->runtime_dir), "/run/tmemd");
	}
	/* What the start would refuse later, said now and in the words
	 * --check-config uses (issue 30). */
	rc = tmemd_config_check(cfg, err, sizeof(err));
	if (rc)
		log_err("%s", err);
	return rc;
}

static int apply_shared_auth(struct tmemd *d)
{
	for (unsigned i = 0; i < d->cfg.nr_clients; i++) {
		const struct tmemd_client_conf *cc = &d->cfg.clients[i];

		for (unsigned j = 0; j < cc->nr_auth; j++) {
			int rc = store_shared_auth(d->store, &cc->auth[j], cc->name, true);

			if (rc) {
				log_err("shared-auth for %s: %s", cc->name, strerror(-rc));
				return rc;
			}
		}
	}
	return 0;
}

/*
 * The arena is address space, not memory: frames are touched when a put
 * first needs them and given back when they stay free (fallow.h).  With
 * memory = auto it spans four times the RAM at start, room for a dom0
 * that balloons up (dom0_mem=...,max:...; fallow.c grows it); a size is
 * the ceiling, and
 * tmemctl pool-size may grow it up to the host's RAM.
 */
static void arena_geometry(const struct tmemd_config *cfg, struct tmem_store_config *sc)
{
	uint64_t ram = tmemd_host_ram_bytes();

	if (cfg->memory_bytes == TMEMD_MEMORY_AUTO) {
		sc->arena_bytes = ram;
		sc->max_arena_bytes = 4 * ram;
		return;
	}
	sc->arena_bytes = cfg->memory_bytes;
	sc->max_arena_bytes = ram > cfg->memory_bytes ? ram : cfg->memory_bytes;
}

/* The elastic pool's settings from the config, defaults filled in. */
static void fallow_config(const struct tmemd_config *cfg, struct tmemd_fallow_config *fc)
{
	uint64_t ram = tmemd_host_ram_bytes();

	*fc = (struct tmemd_fallow_config){
		.autosize = cfg->memory_bytes == TMEMD_MEMORY_AUTO,
		.arena_max = 4 * ram,
		.arena_path = cfg->arena_path[0] ? cfg->arena_path : NULL,
		.ceiling = cfg->memory_bytes == TMEMD_MEMORY_AUTO ? ram : cfg->memory_bytes,
		.reserve = cfg->memory_reserve,
		.xen_reserve = cfg->xen_reserve ? cfg->xen_reserve : TMEMD_DEFAULT_XEN_RESERVE,
		.grow_delay_sec = cfg->grow_delay_sec ? cfg->grow_delay_sec
						      : TMEMD_DEFAULT_GROW_DELAY,
	};
	if (!fc->reserve) {
		fc->reserve = ram / 20;
		if (fc->reserve < (64ull << 20))
			fc->reserve = 64ull << 20;
	}
}

static void spiller_kick(void *ctx)
{
	tmemd_spiller_kick(ctx);
}

static int start_fallow(struct tmemd *d)
{
	struct tmemd_fallow_config fc;
	int rc;

	fallow_config(&d->cfg, &fc);
	if (tmemd_spiller_running(&d->spiller)) {
		fc.over_target = spiller_kick;
		fc.over_ctx = &d->spiller;
	}
	rc = tmemd_fallow_start(&fc, d->store, d->policy, d->loop, &d->fallow);
	if (rc)
		log_err("cannot start the elastic pool: %s", strerror(-rc));
	return rc;
}

static int start_core(struct tmemd *d)
{
	struct tmem_store_config sc = {
		.compress_threshold = d->cfg.compress_threshold,
		.warm_frames = TMEM_WARM_FRAMES,
		.should_stop = stop_pending,
	};
	struct tmem_policy_config pc;
	int rc;

	arena_geometry(&d->cfg, &sc);
	if (d->cfg.spill_path[0]) {
		char why[400];

		d->spill_fd = tmemd_spill_open(d->cfg.spill_path, d->discard_arena, why, sizeof(why));
		if (d->spill_fd < 0) {
			log_err("host tier: %s", why);
			return d->spill_fd;
		}
		sc.tier_fd = d->spill_fd;
		sc.tier_bytes = d->cfg.spill_bytes;
	}

	rc = tmemd_restart_open_store(&d->restart, &sc, d->cfg.arena_path, d->discard_arena);
	if (rc)
		return rc;
	d->store = d->restart.store;
	tmem_policy_config_defaults(&pc);
	pc.defaults = d->cfg.defaults;
	rc = tmem_policy_create(d->store, &pc, &d->policy);
	if (rc) {
		log_err("cannot create the policy: %s", strerror(-rc));
		return rc;
	}
	rc = apply_shared_auth(d);
	if (rc)
		return rc;
	rc = tmemd_clients_create(d->store, d->policy, &d->cfg, &d->clients);
	if (rc) {
		log_err("cannot create the client registry: %s", strerror(-rc));
		return rc;
	}
	d->restart.spare = tmemd_clients_is_parked;
	d->restart.spare_ctx = d->clients;
	rc = tmemd_workers_create(d->cfg.workers, &d->workers);
	if (rc) {
		log_err("cannot start workers: %s", strerror(-rc));
		return rc;
	}
	rc = tmemd_compactor_start(&d->compactor, d->store);
	if (rc)
		log_warn("no background compaction: %s", strerror(-rc));
	rc = tmemd_spiller_start(&d->spiller, d->store, d->policy);
	if (rc) {
		log_err("cannot start the host tier's spiller: %s", strerror(-rc));
		return rc;
	}
	rc = start_fallow(d);
	if (rc)
		return rc;
	return start_step_done();
}

static int migrate_park(void *ctx, struct tmemd_client *c)
{
	return tmemd_migrate_park(ctx, c);
}

/* Migration between hosts, if tmemd.conf gives a migrate-key: before
 * the transport, so the first guest that attaches can pull its pages. */
static int start_migrate(struct tmemd *d)
{
	static const struct tmemd_migrate_hooks hooks = {
		.pull = tmemd_migrate_pull,
		.park = migrate_park,
		.claimed = tmemd_migrate_claimed,
		.held = tmemd_migrate_held,
	};
	int rc = tmemd_migrate_start(&d->cfg, d->clients, d->cfg.runtime_dir, &d->migrate);

	if (rc || !d->migrate)
		return rc;
	tmemd_clients_set_migrate(d->clients, &hooks, d->migrate);
	tmemd_ctl_glue_set_migrate(d->control, d->migrate);
	d->restart.spare = tmemd_migrate_spare;
	d->restart.spare_ctx = d->migrate;
	return 0;
}

/* The runtime dir, then the control server, then the guests' transport:
 * admin settings must be loaded before the first guest attaches. */
static int start_services(struct tmemd *d)
{
	struct tmemd_env env = {
		.loop = d->loop,
		.clients = d->clients,
		.workers = d->workers,
		.runtime_dir = d->cfg.runtime_dir,
		.cfg = &d->cfg,
		.fallow = d->fallow,
	};
	struct tmemd_ctl_glue_config cc = {
		.runtime_dir = d->cfg.runtime_dir,
		.state_dir = d->cfg.state_dir[0] ? d->cfg.state_dir : NULL,
		.version = TMEMD_VERSION,
		.admin_group = d->cfg.control_admin_group,
		.socket_mode = d->cfg.control_socket_mode,
		.max_conns_per_uid = d->cfg.control_max_per_uid,
		.daemon_cfg = &d->cfg,
		.should_stop = stop_pending,
		.fallow = d->fallow,
	};
	const char *why = NULL;
	int rc;

	if (mkdir(d->cfg.runtime_dir, 0755) && errno != EEXIST) {
		rc = -errno;
		log_err("cannot create runtime dir %s: %s", d->cfg.runtime_dir, strerror(-rc));
		return rc;
	}
	d->transport = tmemd_transport_find(d->cfg.transport, &why);
	if (!d->transport) {
		log_err("transport %s: %s", d->cfg.transport, why);
		return -ENOTSUP;
	}
	snprintf(d->stats_path, sizeof(d->stats_path), "%s/stats.json",
		 d->cfg.runtime_dir);
	cc.transport = d->transport->name;
	rc = tmemd_ctl_glue_start(&cc, d->loop, d->clients, &d->control);
	if (!rc)
		rc = start_step_done();
	if (rc)
		return rc;
	rc = start_migrate(d);
	if (rc)
		return rc;
	rc = d->transport->start(&env, &d->transport_state);
	if (!rc)
		rc = start_step_done();
	if (rc)
		return rc;
	return tmemd_restart_arm_grace(&d->restart, d->loop, d->cfg.reattach_grace_sec);
}

static void reload(struct tmemd *d)
{
	const struct tmemd_reload_keep keep = {
		.auth_stored = tmemd_ctl_glue_auth_stored, .ctx = d->control,
	};
	char err[512] = "", msg[600], pending[256] = "";
	int rc;

	tmemd_service_reloading(&d->service);
	rc = tmemd_reload(&d->cfg, d->config_path, d->clients, &keep, pending, sizeof(pending),
			  err, sizeof(err));
	if (!rc) {
		struct tmemd_fallow_config fc;

		/* memory-reserve, memory-grow-delay, xen-reserve apply now. */
		fallow_config(&d->cfg, &fc);
		tmemd_fallow_reconfigure(d->fallow, &fc);
	}
	if (rc)
		snprintf(msg, sizeof(msg), "%s; keeping the settings in force",
			 err[0] ? err : strerror(-rc));
	else if (pending[0])
		snprintf(msg, sizeof(msg), "reloaded %s; needs a restart to apply: %s",
			 d->config_path ? d->config_path : "(no config file)", pending);
	else
		snprintf(msg, sizeof(msg), "reloaded %s",
			 d->config_path ? d->config_path : "(no config file)");
	if (rc)
		log_err("reload: %s", msg);
	else
		log_info("%s", msg);
	tmemd_ctl_glue_note_reload(d->control, rc, msg, rc ? NULL : pending);
	tmemd_service_ready(&d->service);
}

static bool on_signal(int signo, void *data)
{
	struct tmemd *d = data;
	int rc;

	switch (signo) {
	case SIGUSR1:
		rc = tmemd_ctl_glue_write_stats(d->control, d->stats_path);
		if (rc)
			log_warn("%s: %s", d->stats_path, strerror(-rc));
		else
			log_info("stats written to %s", d->stats_path);
		return false;
	case SIGHUP:
		reload(d);
		return false;
	default:
		log_info("%s: stopping", strsignal(signo));
		return true;
	}
}

static void stop_all(struct tmemd *d)
{
	/* A stop is not the clients leaving: their pages stay for the next
	 * start (when the arena outlives tmemd; else they go with it). */
	if (d->clients)
		tmemd_clients_keep_on_stop(d->clients);
	if (d->transport)
		d->transport->stop(d->transport_state);
	tmemd_ctl_glue_set_migrate(d->control, NULL);
	tmemd_migrate_stop(d->migrate);
	tmemd_ctl_glue_stop(d->control);
	tmemd_fallow_stop(d->fallow);
	tmemd_compactor_stop(&d->compactor);
	tmemd_spiller_stop(&d->spiller);
	tmemd_clients_destroy(d->clients);
	tmemd_workers_destroy(d->workers);
	tmem_policy_destroy(d->policy);
	tmemd_restart_close(&d->restart, d->loop);
	if (d->spill_fd >= 0)
		close(d->spill_fd);
	tmemd_loop_destroy(d->loop);
	tmemd_config_free(&d->cfg);
}

/* tmemd --check-config -c FILE: what a start or a reload would say about
 * FILE, without starting (systemctl reload runs it first). */
static int check_config(struct tmemd_config *cfg, const struct tmemd_options *o)
{
	int rc = merge_settings(cfg, o);

	if (!rc)
		printf("%s: OK\n", o->config_path);
	tmemd_config_free(cfg);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct tmemd_options opts;
	struct tmemd d = { .spill_fd = -1 };
	int rc;

	switch (tmemd_options_parse(argc, argv, &opts)) {
	case TMEMD_OPTS_EXIT_OK:
		return 0;
	case TMEMD_OPTS_EXIT_USAGE:
		return 2;
	default:
		break;
	}
	tmemd_log_open();
	if (opts.verbose)
		tmemd_log_level = TMEMD_LOG_DEBUG;
	d.config_path = opts.config_path;
	d.discard_arena = opts.discard_arena;
	d.restart.grace.fd = -1;
	d.restart.arena.fd = -1;
	tmemd_config_init(&d.cfg);
	if (opts.check_config)
		return check_config(&d.cfg, &opts);
	/* The loop blocks the signals first, so every thread inherits the
	 * mask, and a SIGTERM during the start waits for stop_pending(). */
	rc = tmemd_loop_create(on_signal, &d, &d.loop);
	if (!rc)
		rc = merge_settings(&d.cfg, &opts);
	if (!rc)
		rc = start_step_done();
	if (!rc)
		rc = start_core(&d);
	if (!rc)
		rc = start_services(&d);
	if (!rc) {
		struct tmemd_fallow_stats fs;

		tmemd_fallow_stats(d.fallow, &fs);
		log_info("ready: pool ceiling %llu MiB%s, target %llu MiB, %u workers, transport %s, runtime %s",
			 (unsigned long long)(fs.ceiling >> 20),
			 d.cfg.memory_bytes == TMEMD_MEMORY_AUTO ? " (auto)" : "",
			 (unsigned long long)(fs.target >> 20),
			 d.cfg.workers, d.transport->name, d.cfg.runtime_dir);
		tmemd_service_init(&d.service, d.store, d.loop);
		tmemd_service_ready(&d.service);
		rc = tmemd_loop_run(d.loop);
		if (rc)
			log_err("main loop: %s", strerror(-rc));
		tmemd_service_stopping(&d.service);
	}
	if (rc == -ECANCELED) {
		log_info("stopped during the start (SIGTERM or SIGINT)");
		rc = 0;
	}
	stop_all(&d);
	return rc ? 1 : 0;
}
