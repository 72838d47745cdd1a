/* SPDX-License-Identifier: MIT */
/* Starting and stopping migration, and what the rest of tmemd calls
 * (migrate.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "migrate/mig_files.h"
#include "migrate/mig_internal.h"

struct detached_find {
	const char *name;
	struct tmem_ident *ident;
	bool found;
};

static int find_detached(const char *name, const struct tmem_ident *ident, void *ctx)
{
	struct detached_find *f = ctx;

	if (!strcmp(name, f->name)) {
		*f->ident = *ident;
		f->found = true;
	}
	return 0;
}

bool mig_detached_ident(struct tmemd_migrate *m, const char *name, struct tmem_ident *out)
{
	struct detached_find f = { .name = name, .ident = out };

	store_for_each_detached(m->store, find_detached, &f);
	return f.found;
}

void mig_staged_ident(const struct tmem_ident *ident, struct tmem_ident *out)
{
	*out = *ident;
	out->b[0] ^= 0xff;
}

uint64_t mig_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void mig_hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

int mig_unhex(const char *s, uint8_t *b, size_t n)
{
	if (strlen(s) != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		b[i] = (uint8_t)v;
	}
	return 0;
}

/* "a:1, b:2" into m->peers. */
static int parse_peers(struct tmemd_migrate *m, const char *list)
{
	char buf[sizeof(((struct tmemd_config *)0)->migrate_peers)], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (m->nr_peers == MIG_MAX_PEERS || strlen(tok) >= sizeof(m->peers[0]))
			return -E2BIG;
		snprintf(m->peers[m->nr_peers++], sizeof(m->peers[0]), "%s", tok);
	}
	return 0;
}

static int start_listening(struct tmemd_migrate *m, const char *hostport)
{
	int rc = mig_listen(hostport, &m->port);

	if (rc < 0) {
		log_err("migrate-listen %s: %s", hostport, strerror(-rc));
		return rc;
	}
	m->listen_fd = rc;
	rc = -pthread_create(&m->thread, NULL, mig_source_thread, m);
	if (rc)
		return rc;
	m->thread_started = true;
	log_info("migrate: listening on %s (port %u) as %s", hostport, m->port,
		 m->peers[0][0] ? "source and destination" : "source");
	return 0;
}

static int setup(struct tmemd_migrate *m, const struct tmemd_config *cfg, const char *rt)
{
	struct mig_keys *keys = malloc(sizeof(*keys));
	char why[400] = "";
	int rc;

	if (!keys)
		return -ENOMEM;
	rc = mig_keys_load(cfg->migrate_key, keys, why, sizeof(why));
	if (!rc) {
		rc = mig_tls_create(keys, cfg->migrate_name, &m->tls);
		if (rc)
			snprintf(why, sizeof(why), "migrate-name %s has no key in %s",
				 cfg->migrate_name, cfg->migrate_key);
	}
	free(keys);
	if (!rc)
		rc = parse_peers(m, cfg->migrate_peers);
	if (rc) {
		log_err("migrate: %s", why[0] ? why : strerror(-rc));
		return rc;
	}
	snprintf(m->parked_dir, sizeof(m->parked_dir), "%s/migrate/parked", rt);
	snprintf(m->incoming_dir, sizeof(m->incoming_dir), "%s/migrate/incoming", rt);
	rc = mig_dir_make(m->parked_dir);
	if (!rc)
		rc = mig_dir_make(m->incoming_dir);
	if (rc)
		return rc;
	if (pipe2(m->stop_pipe, O_CLOEXEC))
		return -errno;
	mig_source_recover(m);
	mig_dest_recover(m);
	rc = -pthread_create(&m->settler, NULL, mig_settler_thread, m);
	if (rc)
		return rc;
	m->settler_started = true;
	return cfg->migrate_listen[0] ? start_listening(m, cfg->migrate_listen) : 0;
}

int tmemd_migrate_start(const struct tmemd_config *cfg, struct tmemd_clients *reg,
			const char *runtime_dir, struct tmemd_migrate **out)
{
	struct tmemd_migrate *m;
	int rc;

	*out = NULL;
	if (!cfg->migrate_key[0])
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->reg = reg;
	m->store = tmemd_clients_store(reg);
	m->listen_fd = m->stop_pipe[0] = m->stop_pipe[1] = -1;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->pull_lock, NULL);
	rc = setup(m, cfg, runtime_dir);
	if (rc) {
		tmemd_migrate_stop(m);
		return rc;
	}
	*out = m;
	return 0;
}

void tmemd_migrate_stop(struct tmemd_migrate *m)
{
	if (!m)
		return;
	/* Both threads poll the pipe; nobody reads it. */
	if ((m->thread_started || m->settler_started) && write(m->stop_pipe[1], "x", 1) != 1)
		log_err("migrate: cannot stop its threads");
	if (m->thread_started)
		pthread_join(m->thread, NULL);
	if (m->settler_started)
		pthread_join(m->settler, NULL);
	for (int i = 0; i < 2; i++)
		if (m->stop_pipe[i] >= 0)
			close(m->stop_pipe[i]);
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	mig_tls_destroy(m->tls);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->pull_lock);
	free(m);
}

int tmemd_migrate_park(struct tmemd_migrate *m, struct tmemd_client *c)
{
	struct tmemd_parked p;
	char text[160];
	struct timespec ts;
	int rc;

	if (!m) {
		tmemd_client_remove(c);
		return -EOPNOTSUPP;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(p.key, sizeof(p.key), "%s", c->name);
	/* The marker first: killed before the park, it names a client a
	 * restart finds detached, and keeps it parked. */
	snprintf(text, sizeof(text), "%lld %s\n", (long long)ts.tv_sec,
		 c->label[0] ? c->label : "-");
	rc = mig_file_write(m->parked_dir, p.key, text);
	if (rc) {
		tmemd_client_remove(c);
		return rc;
	}
	rc = tmemd_client_park(c, (uint64_t)ts.tv_sec, &p);
	if (rc)
		mig_file_remove(m->parked_dir, p.key);
	else
		log_info("migrate: %s parked: %llu persistent pages in %u pools, for a peer to "
			 "take", p.key, (unsigned long long)p.pages, p.pools);
	return rc;
}

int mig_park_detached(struct tmemd_migrate *m, const char *name, const struct tmem_ident *ident)
{
	struct timespec ts;
	char text[64];
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(text, sizeof(text), "%lld -\n", (long long)ts.tv_sec);
	rc = mig_file_write(m->parked_dir, name, text);
	if (!rc)
		rc = tmemd_clients_note_parked(m->reg, name, "", ident, (uint64_t)ts.tv_sec);
	return rc;
}

void tmemd_migrate_claimed(void *ctx, const char *name)
{
	struct tmemd_migrate *m = ctx;

	/* A domain's claim took it off the list already (daemon/xen/park.c). */
	tmemd_clients_forget_parked(m->reg, name);
	mig_file_remove(m->parked_dir, name);
}

bool tmemd_migrate_held(void *ctx, const char *name)
{
	struct tmemd_migrate *m = ctx;
	bool lent = false;

	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < m->nr_lent && !lent; i++)
		lent = !strcmp(m->lent[i].name, name);
	pthread_mutex_unlock(&m->lock);
	return lent;
}

bool tmemd_migrate_spare(void *ctx, const char *name)
{
	struct tmemd_migrate *m = ctx;

	return tmemd_clients_is_parked(m->reg, name) || tmemd_migrate_held(m, name);
}

void tmemd_migrate_get_stats(struct tmemd_migrate *m, struct tmemd_migrate_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	*out = m->stats;
	pthread_mutex_unlock(&m->lock);
}

uint16_t tmemd_migrate_port(const struct tmemd_migrate *m)
{
	return m ? m->port : 0;
}
