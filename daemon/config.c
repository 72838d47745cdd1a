/* SPDX-License-Identifier: MIT */
/*
 * tmemd.conf parsing with libinih.  inih calls handler() once per
 * key = value; the first failing call's reason is kept and inih returns
 * its line number, which makes the "file:line: reason" message.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "tmem_names.h"
#include "io_util.h"
#include "size.h"
#include "tmem_names.h"

struct parse_ctx {
	struct tmemd_config *cfg;
	char reason[320];
};

void tmemd_config_init(struct tmemd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	/* The same values as tmem_policy_config_defaults(); kept here so
	 * the parser does not need policy/ linked in. */
	cfg->defaults.ephemeral_max = TMEM_NO_CAP;
	cfg->defaults.persistent_max = TMEM_NO_CAP;
	cfg->defaults.spill_max = TMEM_NO_CAP;
	cfg->defaults.weight = TMEM_DEFAULT_WEIGHT;
	cfg->defaults.compress = (struct tmem_compress){ TMEM_COMPRESS_LZ4, 0 };
	snprintf(cfg->transport, sizeof(cfg->transport), "auto");
	cfg->reattach_grace_sec = TMEMD_DEFAULT_REATTACH_GRACE;
	cfg->parked_max_age_sec = TMEMD_DEFAULT_PARKED_MAX_AGE;
}

void tmemd_config_free(struct tmemd_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->clients);
	cfg->clients = NULL;
	cfg->nr_clients = 0;
}

bool tmemd_config_grants(const struct tmemd_config *cfg, const char *name,
			 const struct tmem_uuid *u)
{
	const struct tmemd_client_conf *cc = tmemd_config_client(cfg, name);

	for (unsigned i = 0; cc && i < cc->nr_auth; i++)
		if (cc->auth[i].lo == u->lo && cc->auth[i].hi == u->hi)
			return true;
	return false;
}

int tmemd_check_client_name(const char *name)
{
	return tmem_local_name_valid(name) ? 0 : -EINVAL;
}

/* A cap: a size or "none"/"unlimited" (proto/tmem_size.h, as tmemctl). */
static enum tmem_size_result parse_cap(const char *v, uint64_t *pages)
{
	struct tmem_size sz;
	enum tmem_size_result r = tmem_size_parse(v, TMEM_SIZE_ALLOW_NONE, &sz);

	if (!r)
		*pages = sz.none ? TMEM_NO_CAP : sz.pages;
	return r;
}

static int parse_uint(const char *v, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	*out = strtoul(v, &end, 10);
	if (errno || *end || *out < min || *out > max)
		return -EINVAL;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true") ||
	    !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "off") || !strcmp(v, "no") ||
		 !strcmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

#define FAIL(ctx, ...)                                                     \
	do {                                                               \
		if (!(ctx)->reason[0])                                     \
			snprintf((ctx)->reason, sizeof((ctx)->reason),     \
				 __VA_ARGS__);                             \
		return 0;                                                  \
	} while (0)

/* [tmemd] control-* keys: who may use control.sock, and how much. */
static int control_key(struct parse_ctx *ctx, const char *key, const char *v)
{
	struct tmemd_config *cfg = ctx->cfg;
	unsigned long n;
	char *end;

	if (!strcmp(key, "control-admin-group")) {
		if (!*v || strlen(v) >= sizeof(cfg->control_admin_group))
			FAIL(ctx, "control-admin-group: want a group name, got '%s'", v);
		snprintf(cfg->control_admin_group, sizeof(cfg->control_admin_group), "%s", v);
	} else if (!strcmp(key, "control-socket-mode")) {
		n = strtoul(v, &end, 8);
		if (!*v || *end || n > 0777 || !(n & 0600))
			FAIL(ctx, "control-socket-mode: want an octal mode such as 0660, got '%s'", v);
		cfg->control_socket_mode = (unsigned)n;
	} else if (!strcmp(key, "control-max-per-uid")) {
		if (parse_uint(v, 1, 1024, &n))
			FAIL(ctx, "control-max-per-uid: want 1..1024, got '%s'", v);
		cfg->control_max_per_uid = (unsigned)n;
	} else {
		FAIL(ctx, "unknown key '%s' in [tmemd]", key);
	}
	return 1;
}

/* A duration: N seconds, or N with an s, m or h suffix. */
static int parse_seconds(const char *v, unsigned max, unsigned *out)
{
	unsigned long n, mult = 1;
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	n = strtoul(v, &end, 10);
	if (*end == 'm')
		mult = 60;
	else if (*end == 'h')
		mult = 3600;
	if (*end == 's' || mult > 1)
		end++;
	if (*end || n > max / mult)
		return -EINVAL;
	*out = (unsigned)(n * mult);
	return 0;
}

/* [tmemd] keys about surviving a restart. */
static int restart_key(struct parse_ctx *ctx, const char *key, const char *v)
{
	struct tmemd_config *cfg = ctx->cfg;

	if (!strcmp(key, "arena")) {
		if (v[0] != '/' || strlen(v) > 250)
			FAIL(ctx, "arena: want an absolute path on tmpfs or hugetlbfs (max 250 bytes), got '%s'", v);
		snprintf(cfg->arena_path, sizeof(cfg->arena_path), "%s", v);
	} else if (!strcmp(key, "spill")) {
		if (v[0] != '/' || strlen(v) > 250)
			FAIL(ctx, "spill: want an absolute path of a file or block device (max 250 bytes), got '%s'", v);
		snprintf(cfg->spill_path, sizeof(cfg->spill_path), "%s", v);
	} else if (!strcmp(key, "spill-size")) {
		enum tmem_size_result r = tmemd_parse_size(v, false, &cfg->spill_bytes);

		if (r)
			FAIL(ctx, "spill-size: bad size '%s': %s (want " TMEM_SIZE_GRAMMAR ")", v,
			     tmem_size_strerror(r));
		if (cfg->spill_bytes < TMEMD_MIN_SPILL_BYTES || cfg->spill_bytes % TMEM_PAGE_SIZE)
			FAIL(ctx, "spill-size: want whole pages, at least 1M, got '%s'", v);
	} else if (!strcmp(key, "reattach-grace")) {
		if (parse_seconds(v, TMEMD_MAX_REATTACH_GRACE, &cfg->reattach_grace_sec))
			FAIL(ctx, "reattach-grace: want a duration such as 300, 90s, 5m or 1h (at most 24h), got '%s'", v);
	} else if (!strcmp(key, "parked-max-age")) {
		if (parse_seconds(v, TMEMD_MAX_PARKED_MAX_AGE, &cfg->parked_max_age_sec) ||
		    !cfg->parked_max_age_sec)
			FAIL(ctx, "parked-max-age: want a duration such as 3600, 90m or 24h (1s to 720h), got '%s'", v);
	} else {
		FAIL(ctx, "unknown key '%s' in [tmemd]", key);
	}
	return 1;
}

/* [tmemd] keys of the elastic pool (fallow.h). */
static int fallow_key(struct parse_ctx *ctx, const char *key, const char *v)
{
	struct tmemd_config *cfg = ctx->cfg;
	enum tmem_size_result r;

	if (!strcmp(key, "memory-reserve")) {
		r = tmemd_parse_size(v, true, &cfg->memory_reserve);
		if (r)
			FAIL(ctx, "memory-reserve: bad size '%s': %s (want " TMEM_SIZE_GRAMMAR
			     ", or N%% of RAM)", v, tmem_size_strerror(r));
	} else if (!strcmp(key, "xen-reserve")) {
		r = tmemd_parse_size(v, false, &cfg->xen_reserve);
		if (r)
			FAIL(ctx, "xen-reserve: bad size '%s': %s (want " TMEM_SIZE_GRAMMAR ")",
			     v, tmem_size_strerror(r));
	} else if (!strcmp(key, "memory-grow-delay")) {
		if (parse_seconds(v, TMEMD_MAX_GROW_DELAY, &cfg->grow_delay_sec) ||
		    !cfg->grow_delay_sec)
			FAIL(ctx, "memory-grow-delay: want a duration such as 30, 90s or 5m (1s to 1h), got '%s'", v);
	} else {
		FAIL(ctx, "unknown key '%s' in [tmemd]", key);
	}
	return 1;
}

/* [tmemd] local-* keys: what one uid may hold on guest.sock. */
static int local_key(struct parse_ctx *ctx, const char *key, const char *v)
{
	static const struct {
		const char *key;
		unsigned long max;
		size_t off;
	} keys[] = {
		{ "local-max-clients-per-uid", 1024,
		  offsetof(struct tmemd_config, local_max_clients_per_uid) },
		{ "local-max-pools-per-uid", 16384,
		  offsetof(struct tmemd_config, local_max_pools_per_uid) },
		{ "local-max-handshakes-per-uid", 1024,
		  offsetof(struct tmemd_config, local_max_handshakes_per_uid) },
	};
	unsigned long n;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(key, keys[i].key))
			continue;
		if (parse_uint(v, 1, keys[i].max, &n))
			FAIL(ctx, "%s: want 1..%lu, got '%s'", key, keys[i].max, v);
		*(unsigned *)((char *)ctx->cfg + keys[i].off) = (unsigned)n;
		return 1;
	}
	FAIL(ctx, "unknown key '%s' in [tmemd]", key);
}

/* [tmemd] migrate-* keys (daemon/migrate/migrate.h). */
static int migrate_key(struct parse_ctx *ctx, const char *key, const char *v)
{
	static const struct {
		const char *key;
		size_t off, size;
	} keys[] = {
		{ "migrate-key", offsetof(struct tmemd_config, migrate_key), 256 },
		{ "migrate-name", offsetof(struct tmemd_config, migrate_name), 64 },
		{ "migrate-listen", offsetof(struct tmemd_config, migrate_listen), 128 },
		{ "migrate-peers", offsetof(struct tmemd_config, migrate_peers), 512 },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(key, keys[i].key))
			continue;
		if (!*v || strlen(v) >= keys[i].size)
			FAIL(ctx, "%s: want a value under %zu bytes, got '%s'", key, keys[i].size, v);
		if (i == 0 && v[0] != '/')
			FAIL(ctx, "migrate-key: want an absolute path, got '%s'", v);
		if (i == 1 && !tmem_name_valid(v))
			FAIL(ctx, "migrate-name: want " TMEM_NAME_RULE ", got '%s'", v);
		if (i >= 2 && !strchr(v, ':'))
			FAIL(ctx, "%s: want HOST:PORT, got '%s'", key, v);
		snprintf((char *)ctx->cfg + keys[i].off, keys[i].size, "%s", v);
		return 1;
	}
	FAIL(ctx, "unknown key '%s' in [tmemd]", key);
}

static int tmemd_key(struct parse_ctx *ctx, const char *key, const char *v)
{
	struct tmemd_config *cfg = ctx->cfg;
	enum tmem_size_result r;
	unsigned long n;

	if (!strcmp(key, "memory")) {
		r = tmemd_parse_memory(v, &cfg->memory_bytes);
		if (r)
			FAIL(ctx, "memory: bad size '%s': %s (want " TMEM_SIZE_GRAMMAR
			     ", N%% of RAM or auto; at least 64K)", v, tmem_size_strerror(r));
	} else if (!strncmp(key, "memory-", 7) || !strcmp(key, "xen-reserve")) {
		return fallow_key(ctx, key, v);
	} else if (!strcmp(key, "compress-threshold")) {
		if (parse_uint(v, 256, TMEM_PAGE_SIZE - 8, &n))
			FAIL(ctx, "compress-threshold: want 256..%d bytes, got '%s'",
			     TMEM_PAGE_SIZE - 8, v);
		cfg->compress_threshold = (uint32_t)n;
	} else if (!strcmp(key, "workers")) {
		if (parse_uint(v, 1, TMEMD_MAX_WORKERS, &n))
			FAIL(ctx, "workers: want 1..%d, got '%s'", TMEMD_MAX_WORKERS, v);
		cfg->workers = (unsigned)n;
	} else if (!strcmp(key, "runtime-dir")) {
		if (v[0] != '/' || strlen(v) >= sizeof(cfg->runtime_dir) - 16)
			FAIL(ctx, "runtime-dir: want an absolute path under %zu bytes", sizeof(cfg->runtime_dir) - 16);
		snprintf(cfg->runtime_dir, sizeof(cfg->runtime_dir), "%s", v);
	} else if (!strcmp(key, "state-dir")) {
		if (v[0] != '/' || strlen(v) >= sizeof(cfg->state_dir) - 16)
			FAIL(ctx, "state-dir: want an absolute path under %zu bytes", sizeof(cfg->state_dir) - 16);
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", v);
	} else if (!strcmp(key, "transport")) {
		if (strcmp(v, "auto") && strcmp(v, "xen") && strcmp(v, "local"))
			FAIL(ctx, "transport: want auto, xen or local, got '%s'", v);
		snprintf(cfg->transport, sizeof(cfg->transport), "%s", v);
	} else if (!strcmp(key, "xen-domains")) {
		/* Checked by the xen transport, which owns the syntax. */
		if (strlen(v) >= sizeof(cfg->xen_domains))
			FAIL(ctx, "xen-domains: longer than %zu bytes", sizeof(cfg->xen_domains) - 1);
		snprintf(cfg->xen_domains, sizeof(cfg->xen_domains), "%s", v);
	} else if (!strncmp(key, "control-", 8)) {
		return control_key(ctx, key, v);
	} else if (!strncmp(key, "local-", 6)) {
		return local_key(ctx, key, v);
	} else if (!strncmp(key, "migrate-", 8)) {
		return migrate_key(ctx, key, v);
	} else {
		return restart_key(ctx, key, v);
	}
	return 1;
}

static unsigned auth_count(const struct tmemd_config *cfg)
{
	unsigned n = 0;

	for (unsigned i = 0; i < cfg->nr_clients; i++)
		n += cfg->clients[i].nr_auth;
	return n;
}

/* Keys shared by [defaults] and [client NAME]; cc is NULL for defaults. */
static int settings_key(struct parse_ctx *ctx, struct tmemd_client_conf *cc,
			const char *section, const char *key, const char *v)
{
	struct tmem_client_settings *s = cc ? &cc->settings : &ctx->cfg->defaults;
	enum tmem_size_result r;
	unsigned long n;
	bool b;

	if (!strcmp(key, "ephemeral-max")) {
		r = parse_cap(v, &s->ephemeral_max);
		if (r)
			FAIL(ctx, "%s: bad size '%s': %s (want " TMEM_SIZE_GRAMMAR ", or none)",
			     key, v, tmem_size_strerror(r));
		if (cc)
			cc->has_ephemeral_max = true;
	} else if (!strcmp(key, "persistent-max")) {
		r = parse_cap(v, &s->persistent_max);
		if (r)
			FAIL(ctx, "%s: bad size '%s': %s (want " TMEM_SIZE_GRAMMAR ", or none)",
			     key, v, tmem_size_strerror(r));
		if (cc)
			cc->has_persistent_max = true;
	} else if (!strcmp(key, "spill-max")) {
		r = parse_cap(v, &s->spill_max);
		if (r)
			FAIL(ctx, "%s: bad size '%s': %s (want " TMEM_SIZE_GRAMMAR ", or none)",
			     key, v, tmem_size_strerror(r));
		if (cc)
			cc->has_spill_max = true;
	} else if (!strcmp(key, "weight")) {
		if (parse_uint(v, 1, TMEM_MAX_WEIGHT, &n))
			FAIL(ctx, "weight: want 1..%d, got '%s'", TMEM_MAX_WEIGHT, v);
		s->weight = (uint32_t)n;
		if (cc)
			cc->has_weight = true;
	} else if (!strcmp(key, "compress")) {
		if (store_compress_parse(v, &s->compress) == 0)
			; /* off, lz4, zstd[:LEVEL] */
		else if (parse_bool(v, &b) == 0)
			FAIL(ctx, "compress: '%s' is the old on/off form: want " TMEM_COMPRESS_VALUES, v);
		else
			FAIL(ctx, "compress: want " TMEM_COMPRESS_VALUES ", got '%s'", v);
		if (cc)
			cc->has_compress = true;
	} else if (cc && !strcmp(key, "shared-auth")) {
		if (cc->nr_auth == TMEMD_MAX_AUTH_PER_CLIENT)
			FAIL(ctx, "shared-auth: at most %d per client", TMEMD_MAX_AUTH_PER_CLIENT);
		if (auth_count(ctx->cfg) >= TMEM_MAX_SHARED_AUTH)
			FAIL(ctx, "shared-auth: at most %d in all (what tmemd holds, "
			     "tmemctl's included)", TMEM_MAX_SHARED_AUTH);
		if (tmem_uuid_parse(v, &cc->auth[cc->nr_auth]))
			FAIL(ctx, "shared-auth: bad UUID '%s'", v);
		cc->nr_auth++;
	} else {
		FAIL(ctx, "unknown key '%s' in [%s]", key, section);
	}
	return 1;
}

static struct tmemd_client_conf *client_section(struct parse_ctx *ctx,
						const char *name)
{
	struct tmemd_config *cfg = ctx->cfg;
	struct tmemd_client_conf *cc;

	for (unsigned i = 0; i < cfg->nr_clients; i++)
		if (!strcmp(cfg->clients[i].name, name))
			return &cfg->clients[i];
	if (cfg->nr_clients == TMEMD_MAX_CLIENT_CONF)
		return NULL;
	cc = realloc(cfg->clients, (cfg->nr_clients + 1) * sizeof(*cc));
	if (!cc)
		return NULL;
	cfg->clients = cc;
	cc = &cfg->clients[cfg->nr_clients++];
	memset(cc, 0, sizeof(*cc));
	snprintf(cc->name, sizeof(cc->name), "%s", name);
	return cc;
}

static int handler(void *user, const char *section, const char *key,
		   const char *value)
{
	struct parse_ctx *ctx = user;
	struct tmemd_client_conf *cc;

	if (!strcmp(section, "tmemd"))
		return tmemd_key(ctx, key, value);
	if (!strcmp(section, "defaults"))
		return settings_key(ctx, NULL, section, key, value);
	if (!strncmp(section, "client ", 7)) {
		struct tmem_principal who;
		char name[TMEM_PRINCIPAL_TEXT_MAX];
		int r = tmem_principal_parse(section + 7, 0, &who);

		/* Keyed by the canonical text: [client 5] and [client domid:5]
		 * are one section, for Xen domain 5 only. */
		if (r)
			FAIL(ctx, "[%s]: bad client: %s", section, tmem_principal_strerror(r));
		tmem_principal_format(&who, name);
		cc = client_section(ctx, name);
		if (!cc)
			FAIL(ctx, "[%s]: too many client sections (max %d)", section, TMEMD_MAX_CLIENT_CONF);
		return settings_key(ctx, cc, section, key, value);
	}
	FAIL(ctx, "unknown section [%s]", section);
}

/*
 * inih reads a line into a buffer of ini_max_line bytes (the library's,
 * 200 in Debian's) and parses what did not fit as the next line, which
 * gives a "syntax error" on a line the file does not have: a longer line
 * is refused here first, by its number.  0 or -EINVAL with err.
 */
static int check_line_lengths(const char *text, const char *path, char *err, size_t errlen)
{
	/* Room for "\r\n" and the NUL (ini.h). */
	const size_t max = ini_max_line > 3 ? (size_t)ini_max_line - 3 : 0;
	unsigned line = 1;

	for (const char *p = text; *p; line++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len && p[len - 1] == '\r')
			len--;
		if (len > max) {
			snprintf(err, errlen, "%s:%u: line longer than %zu bytes", path, line, max);
			return -EINVAL;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

static int finish(struct parse_ctx *ctx, int rc, const char *path, char *err,
		  size_t errlen)
{
	if (rc == 0)
		return 0;
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 rc == -1 ? strerror(errno) : "out of memory");
		return rc == -1 && errno ? -errno : -ENOMEM;
	}
	snprintf(err, errlen, "%s:%d: %s", path, rc,
		 ctx->reason[0] ? ctx->reason : "syntax error");
	return -EINVAL;
}

int tmemd_config_load_file(struct tmemd_config *cfg, const char *path,
			   char *err, size_t errlen)
{
	struct parse_ctx ctx = { .cfg = cfg };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len;
	char *text;
	int rc;

	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-rc));
		return rc;
	}
	/* Read whole, in large reads, and parsed from memory: ini_parse()
	 * would read a file of any size line by line. */
	rc = io_read_capped(fd, TMEMD_CONFIG_MAX_BYTES, &text, &len, NULL, NULL);
	close(fd);
	if (rc == -EFBIG) {
		snprintf(err, errlen, "%s: over the %s cap, so not a tmemd.conf; fix the "
			 "path or the file (man tmemd.conf(5))", path, TMEMD_CONFIG_MAX_TEXT);
		return rc;
	}
	if (rc) {
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-rc));
		return rc;
	}
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "%s: holds a NUL byte at offset %zu, so it is damaged "
			 "or not text; fix it (man tmemd.conf(5))", path,
			 (size_t)((char *)memchr(text, '\0', len) - text));
		free(text);
		return -EINVAL;
	}
	rc = check_line_lengths(text, path, err, errlen);
	if (rc == 0)
		rc = finish(&ctx, ini_parse_string(text, handler, &ctx), path, err, errlen);
	free(text);
	return rc;
}

int tmemd_config_load_string(struct tmemd_config *cfg, const char *path,
			     const char *text, char *err, size_t errlen)
{
	struct parse_ctx ctx = { .cfg = cfg };
	int rc = check_line_lengths(text, path, err, errlen);

	if (rc)
		return rc;
	return finish(&ctx, ini_parse_string(text, handler, &ctx), path, err,
		      errlen);
}

const struct tmemd_client_conf *
tmemd_config_client(const struct tmemd_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->nr_clients; i++)
		if (!strcmp(cfg->clients[i].name, name))
			return &cfg->clients[i];
	return NULL;
}

void tmemd_config_client_apply(const struct tmemd_config *cfg, const char *name,
			       struct tmem_client_settings *out)
{
	const struct tmemd_client_conf *cc = name ? tmemd_config_client(cfg, name) : NULL;

	if (!cc)
		return;
	if (cc->has_ephemeral_max)
		out->ephemeral_max = cc->settings.ephemeral_max;
	if (cc->has_persistent_max)
		out->persistent_max = cc->settings.persistent_max;
	if (cc->has_spill_max)
		out->spill_max = cc->settings.spill_max;
	if (cc->has_weight)
		out->weight = cc->settings.weight;
	if (cc->has_compress)
		out->compress = cc->settings.compress;
}

void tmemd_config_client_settings(const struct tmemd_config *cfg,
				  const char *name,
				  struct tmem_client_settings *out)
{
	*out = cfg->defaults;
	tmemd_config_client_apply(cfg, name, out);
}
