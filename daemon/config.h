/* SPDX-License-Identifier: MIT */
/*
 * tmemd.conf: the daemon's settings, read with libinih.  man/tmemd.conf.5
 * documents every section and key:
 *
 *   [tmemd]      memory, workers, runtime-dir, state-dir, transport,
 *                xen-domains, control-admin-group, control-socket-mode,
 *                control-max-per-uid, arena, reattach-grace, parked-max-age,
 *                compress-threshold, migrate-key, migrate-name,
 *                migrate-listen, migrate-peers, spill, spill-size
 *   [defaults]   ephemeral-max, persistent-max, spill-max, weight, compress
 *   [client X]   the same keys as [defaults] for the client X, a
 *                principal (proto/tmem_names.h: uuid:U, domid:N or N for a
 *                Xen domain, else a name: a domain's xl name or a local
 *                client's), plus shared-auth =
 *                UUID (repeatable): X may join that shared pool.  Sections
 *                are kept under X's canonical text (tmemd_client_conf.name).
 *
 * An unknown section or key, or a bad value, stops startup; the error
 * says file:line: reason.
 */
#ifndef TMEMD_CONFIG_H
#define TMEMD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tmem_policy.h"
#include "tmem_proto.h"
#include "tmem_store.h"

#define TMEMD_MAX_WORKERS 64
#define TMEMD_MAX_CLIENT_CONF 256
/* The largest tmemd.conf tmemd reads (man tmemd.conf(5)): 256 client
 * sections with every key fit in far less. */
#define TMEMD_CONFIG_MAX_BYTES (1u << 20)
#define TMEMD_CONFIG_MAX_TEXT "1 MiB"
#define TMEMD_MAX_AUTH_PER_CLIENT 16
#define TMEMD_DEFAULT_MEMORY (128ull << 20)
/* memory = auto: the pool follows what the host can spare (fallow.h). */
#define TMEMD_MEMORY_AUTO UINT64_MAX
#define TMEMD_DEFAULT_GROW_DELAY 30u      /* seconds without pressure before growing */
#define TMEMD_MAX_GROW_DELAY 3600u
#define TMEMD_DEFAULT_XEN_RESERVE (128ull << 20)
#define TMEMD_DEFAULT_REATTACH_GRACE 300u  /* seconds */
#define TMEMD_MAX_REATTACH_GRACE 86400u
#define TMEMD_DEFAULT_PARKED_MAX_AGE 86400u  /* seconds: a day */
#define TMEMD_MAX_PARKED_MAX_AGE (30u * 86400u)
#define TMEMD_MIN_SPILL_BYTES (1ull << 20)

/* Which fields of a per-client section were given. */
struct tmemd_client_conf {
	char name[TMEM_CLIENT_NAME_MAX];  /* the principal, canonical text */
	bool has_ephemeral_max, has_persistent_max, has_weight, has_compress, has_spill_max;
	struct tmem_client_settings settings;
	struct tmem_uuid auth[TMEMD_MAX_AUTH_PER_CLIENT];
	unsigned nr_auth;
};

struct tmemd_config {
	uint64_t memory_bytes;   /* the ceiling; 0: TMEMD_DEFAULT_MEMORY; or TMEMD_MEMORY_AUTO */
	uint64_t memory_reserve; /* bytes left to the host; 0: 5% of RAM, at least 64M */
	uint64_t xen_reserve;    /* bytes left free in Xen; 0: TMEMD_DEFAULT_XEN_RESERVE */
	unsigned grow_delay_sec; /* 0: TMEMD_DEFAULT_GROW_DELAY */
	uint32_t compress_threshold; /* bytes; 0: the store's default (3 KiB) */
	unsigned workers;        /* 0: one per online CPU */
	char runtime_dir[256];   /* "": /run/tmemd or $XDG_RUNTIME_DIR/tmemd */
	char state_dir[256];     /* "": the control server's default */
	char transport[16];      /* "auto", "xen" or "local" */
	/* The control socket (daemon/control/control.h's config). */
	char control_admin_group[64]; /* "": root only */
	unsigned control_socket_mode; /* 0: 0660 */
	unsigned control_max_per_uid; /* 0: the control server's default */
	/* Per-uid limits of the local transport; 0: its default. */
	unsigned local_max_clients_per_uid;
	unsigned local_max_pools_per_uid;
	unsigned local_max_handshakes_per_uid;
	char xen_domains[512];   /* xen allow-list; "": every domU (xen/allow.h) */
	char arena_path[256];    /* "": the fd store under systemd, else memory */
	/* The host tier (issue 29): a file or block device; "": none. */
	char spill_path[256];
	uint64_t spill_bytes;    /* its size, header included; required with spill */
	unsigned reattach_grace_sec; /* how long recovered clients wait to be claimed */
	unsigned parked_max_age_sec; /* how long a suspended domain's pages wait */
	/* Migration between hosts (daemon/migrate/migrate.h); no key: none. */
	char migrate_key[256];   /* the key file */
	char migrate_name[64];   /* this host's name in it */
	char migrate_listen[128];/* "": do not serve peers */
	char migrate_peers[512]; /* HOST:PORT, comma-separated: where to pull from */
	struct tmem_client_settings defaults; /* caps in pages */
	struct tmemd_client_conf *clients;    /* heap array */
	unsigned nr_clients;
};

/* Built-in values: no caps, weight 100, auto transport. */
void tmemd_config_init(struct tmemd_config *cfg);
void tmemd_config_free(struct tmemd_config *cfg);

/*
 * Parse a file (path) or a string (text, with path used in messages) into
 * cfg, on top of what it holds.  Returns 0, or -EINVAL/-errno with
 * "path:line: reason" in err.
 */
int tmemd_config_load_file(struct tmemd_config *cfg, const char *path,
			   char *err, size_t errlen);
int tmemd_config_load_string(struct tmemd_config *cfg, const char *path,
			     const char *text, char *err, size_t errlen);

/* True when [client name] has shared-auth = uuid. */
bool tmemd_config_grants(const struct tmemd_config *cfg, const char *name,
			 const struct tmem_uuid *uuid);

/* The section for name, or NULL. */
const struct tmemd_client_conf *
tmemd_config_client(const struct tmemd_config *cfg, const char *name);

/* Settings for a client called name (NULL: none): defaults overlaid
 * with its section. */
void tmemd_config_client_settings(const struct tmemd_config *cfg,
				  const char *name,
				  struct tmem_client_settings *out);
/* Overlays the keys [client name] sets (none: out unchanged). */
void tmemd_config_client_apply(const struct tmemd_config *cfg, const char *name,
			       struct tmem_client_settings *out);

/* A local client's name: tmem_local_name_valid() (proto/tmem_names.h),
 * so never all digits nor "domid:..." (those are Xen domains).  0 or
 * -EINVAL. */
int tmemd_check_client_name(const char *name);

/* UUID text: tmem_uuid_parse()/tmem_uuid_format() in proto/tmem_names.h. */

#endif /* TMEMD_CONFIG_H */
