/* SPDX-License-Identifier: MIT */
/*
 * The control protocol's data side: requests parsed and validated into a
 * plain struct, replies built as JSON text, UUIDs in text form.  No I/O,
 * so the unit tests and the fuzz target drive it directly.
 *
 * A request is one JSON object on one line (newline-terminated):
 *   {"version":1,"cmd":"set","args":{"client":"domid:5","weight":200}}
 * The reply is one line too:
 *   {"version":1,"result":{...}}
 *   {"version":1,"error":{"errno":22,"message":"..."}}
 * Checks, in order: length, JSON syntax, an object, version (first),
 * top-level keys, the command name, then each argument's key, type and
 * range.  man/tmemctl.8 lists the commands and their arguments.
 */
#ifndef TMEMD_CTL_PROTO_H
#define TMEMD_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "tmem_names.h"
#include "tmem_proto.h"
#include "tmem_store.h"
#include "tmem_policy.h"

/* A migration peer's "HOST:PORT" (control.h's hooks take it). */
#define TMEMD_CONTROL_PEER_MAX 128

enum ctl_cmd {
	CTL_STATUS,
	CTL_STATS,
	CTL_LIST,
	CTL_SET,
	CTL_FREEZE,
	CTL_THAW,
	CTL_FLUSH,
	CTL_SHARED_AUTH,
	CTL_POOL_SIZE,
	CTL_FORGET,
	CTL_RELEASE,
	CTL_UNSET,
	CTL_MIGRATE_CHECK,
	CTL_MIGRATE_PUSH,
	CTL_CMD_NR,
};

/* Bits of ctl_settings.has and ctl_request.has. */
enum {
	CTL_HAS_WEIGHT = 1u << 0,
	CTL_HAS_EPH_MAX = 1u << 1,
	CTL_HAS_PERS_MAX = 1u << 2,
	CTL_HAS_COMPRESS = 1u << 3,
	CTL_HAS_FROZEN = 1u << 4,
	CTL_HAS_SPILL_MAX = 1u << 5,
	CTL_SETTINGS_MASK = (1u << 6) - 1,
	CTL_HAS_CLIENT = 1u << 6,
	CTL_HAS_UUID = 1u << 7,
	CTL_HAS_REVOKE = 1u << 8,
	CTL_HAS_PAGES = 1u << 9,
	CTL_HAS_ALL = 1u << 10,
	CTL_HAS_KEYS = 1u << 11,
	CTL_HAS_LIVE = 1u << 12,
	CTL_HAS_PEER = 1u << 13,
};

/* Some of a client's settings: only the fields named in has are set. */
struct ctl_settings {
	unsigned has;
	struct tmem_client_settings v; /* caps in pages, TMEM_NO_CAP = none */
};

struct ctl_request {
	enum ctl_cmd cmd;
	unsigned has;
	char client[TMEM_CLIENT_NAME_MAX];
	struct ctl_settings s;     /* for "set" */
	struct tmem_uuid uuid;     /* for "shared-auth" */
	bool revoke;
	uint64_t pages;            /* for "pool-size" */
	bool all;                  /* for "list": stored settings too */
	unsigned keys;             /* for "unset": CTL_HAS_* settings to remove */
	bool live;                 /* for "set": apply now, store nothing (-a) */
	char peer[TMEMD_CONTROL_PEER_MAX]; /* for "migrate-*": HOST:PORT */
};

/* An error to send back: an errno value and a one-line message. */
struct ctl_err {
	int errnum;
	char msg[256];
};

/* Sets err and returns -errnum. */
int ctl_err_set(struct ctl_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepends "PREFIX: " to err's message; returns -err->errnum. */
int ctl_err_prefix(struct ctl_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

const char *ctl_cmd_name(enum ctl_cmd cmd);
/* A setting's name as requests and state.json spell it ("weight",
 * "ephemeral_max_pages", ...) by its CTL_HAS_* bit; NULL for another bit. */
const char *ctl_setting_name(unsigned bit);
/* True for commands that change state (need uid 0 or the admin group). */
bool ctl_cmd_writes(enum ctl_cmd cmd);

/* Parses one request of len bytes (no NUL needed).  0 or -errno + err. */
int ctl_request_parse(const char *buf, size_t len, struct ctl_request *req,
		      struct ctl_err *err);

/*
 * Parses the settings keys (weight, ephemeral_max_pages,
 * persistent_max_pages, spill_max_pages, compress, and frozen when
 * allow_frozen) of obj
 * into s; any other key is an error.  Shared by requests and the state file.
 */
int ctl_settings_parse(json_t *obj, bool allow_frozen, struct ctl_settings *s,
		       struct ctl_err *err);
/* Adds the fields set in s to obj (caps of TMEM_NO_CAP as null). */
int ctl_settings_dump(const struct ctl_settings *s, json_t *obj);
/* A compression setting as JSON: "off", "lz4", "zstd:3". */
json_t *ctl_compress_json(const struct tmem_compress *cz);

/*
 * CLIENT: a principal (proto/tmem_names.h), as tmemd.conf and tmemctl
 * take it.  Requests carry it canonicalised ("5" arrives as "domid:5").
 * ctl_name_valid: s is canonical principal text.  ctl_principal_canon:
 * text (flags as tmem_principal_parse()) into its canonical text; 0 or a
 * TMEM_PRINCIPAL_E* reason (tmem_principal_strerror()).
 */
bool ctl_name_valid(const char *s);
int ctl_principal_canon(const char *text, unsigned flags, char out[TMEM_CLIENT_NAME_MAX]);

/* Reply lines (newline-terminated, malloc'd, NUL-terminated); NULL on ENOMEM.
 * ctl_reply_result steals result. */
char *ctl_reply_result(json_t *result);
char *ctl_reply_error(const struct ctl_err *err);

#endif /* TMEMD_CTL_PROTO_H */
