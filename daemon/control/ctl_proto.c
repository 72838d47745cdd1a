/* SPDX-License-Identifier: MIT */
/*
 * Request parsing and validation.  Each command names its arguments in a
 * table of fields (key, type, where it goes, required or not); one
 * generic walker checks every key of "args" against that table, so an
 * unknown key, a wrong type or a value out of range is always an error
 * and never silently ignored.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "ctl_proto.h"
#include "tmem_names.h"

enum ctl_field_type {
	F_NAME,    /* a principal (CLIENT), canonicalised into char[TMEM_CLIENT_NAME_MAX] */
	F_WEIGHT,  /* integer 1..TMEM_MAX_WEIGHT, into uint32_t */
	F_CAP,     /* integer >= 0 or null (no cap), into uint64_t */
	F_BOOL,    /* true/false, into bool */
	F_UUID,    /* UUID string, into struct tmem_uuid */
	F_PAGES,   /* integer >= 1, into uint64_t */
	F_COMPRESS, /* "off", "lz4", "zstd[:LEVEL]", into struct tmem_compress */
	/* The same, or (state files written before compression) a boolean:
	 * true was "on", now lz4. */
	F_COMPRESS_OLD,
	/* An array of settings names (weight, ephemeral_max_pages,
	 * persistent_max_pages, compress, frozen, spill_max_pages), into an unsigned mask of
	 * their CTL_HAS_* bits. */
	F_KEYS,
	F_PEER,    /* "HOST:PORT", printable, into char[TMEMD_CONTROL_PEER_MAX] */
};

struct ctl_field {
	const char *key;
	enum ctl_field_type type;
	size_t offset;
	unsigned has;
	bool required;
};

#define RQ(member) offsetof(struct ctl_request, member)
#define ST(member) offsetof(struct ctl_settings, member)

static const struct ctl_field client_args[] = {
	{ "client", F_NAME, RQ(client), CTL_HAS_CLIENT, true },
	{ NULL },
};
static const struct ctl_field set_args[] = {
	{ "client", F_NAME, RQ(client), CTL_HAS_CLIENT, true },
	{ "weight", F_WEIGHT, RQ(s.v.weight), CTL_HAS_WEIGHT, false },
	{ "ephemeral_max_pages", F_CAP, RQ(s.v.ephemeral_max), CTL_HAS_EPH_MAX, false },
	{ "persistent_max_pages", F_CAP, RQ(s.v.persistent_max), CTL_HAS_PERS_MAX, false },
	{ "spill_max_pages", F_CAP, RQ(s.v.spill_max), CTL_HAS_SPILL_MAX, false },
	{ "compress", F_COMPRESS, RQ(s.v.compress), CTL_HAS_COMPRESS, false },
	{ "live", F_BOOL, RQ(live), CTL_HAS_LIVE, false },
	{ NULL },
};
/* "unset": what tmemctl stored goes; tmemd.conf's values come back. */
static const struct ctl_field unset_args[] = {
	{ "client", F_NAME, RQ(client), CTL_HAS_CLIENT, true },
	{ "keys", F_KEYS, RQ(keys), CTL_HAS_KEYS, true },
	{ NULL },
};
static const struct ctl_field auth_args[] = {
	{ "uuid", F_UUID, RQ(uuid), CTL_HAS_UUID, true },
	{ "client", F_NAME, RQ(client), CTL_HAS_CLIENT, true },
	{ "revoke", F_BOOL, RQ(revoke), CTL_HAS_REVOKE, false },
	{ NULL },
};
static const struct ctl_field pool_size_args[] = {
	{ "pages", F_PAGES, RQ(pages), CTL_HAS_PAGES, true },
	{ NULL },
};
static const struct ctl_field migrate_args[] = {
	{ "client", F_NAME, RQ(client), CTL_HAS_CLIENT, true },
	{ "peer", F_PEER, RQ(peer), CTL_HAS_PEER, true },
	{ NULL },
};
static const struct ctl_field no_args[] = { { NULL } };
/* "list" and "stats" of one client (CLIENT as "xl tmem-list DOM" took). */
static const struct ctl_field list_args[] = {
	{ "client", F_NAME, RQ(client), CTL_HAS_CLIENT, false },
	{ "all", F_BOOL, RQ(all), CTL_HAS_ALL, false },
	{ NULL },
};
static const struct ctl_field stats_args[] = {
	{ "client", F_NAME, RQ(client), CTL_HAS_CLIENT, false },
	{ NULL },
};

/* The settings as stored in the state file (frozen included). */
static const struct ctl_field settings_fields[] = {
	{ "weight", F_WEIGHT, ST(v.weight), CTL_HAS_WEIGHT, false },
	{ "ephemeral_max_pages", F_CAP, ST(v.ephemeral_max), CTL_HAS_EPH_MAX, false },
	{ "persistent_max_pages", F_CAP, ST(v.persistent_max), CTL_HAS_PERS_MAX, false },
	{ "compress", F_COMPRESS_OLD, ST(v.compress), CTL_HAS_COMPRESS, false },
	{ "frozen", F_BOOL, ST(v.frozen), CTL_HAS_FROZEN, false },
	{ "spill_max_pages", F_CAP, ST(v.spill_max), CTL_HAS_SPILL_MAX, false },
	{ NULL },
};

static const struct {
	const char *name;
	bool writes;
	const struct ctl_field *args;
} commands[CTL_CMD_NR] = {
	[CTL_STATUS] = { .name = "status", .writes = false, .args = no_args },
	[CTL_STATS] = { .name = "stats", .writes = false, .args = stats_args },
	[CTL_LIST] = { .name = "list", .writes = false, .args = list_args },
	[CTL_SET] = { .name = "set", .writes = true, .args = set_args },
	[CTL_FREEZE] = { .name = "freeze", .writes = true, .args = client_args },
	[CTL_THAW] = { .name = "thaw", .writes = true, .args = client_args },
	[CTL_FLUSH] = { .name = "flush", .writes = true, .args = client_args },
	[CTL_SHARED_AUTH] = { .name = "shared-auth", .writes = true, .args = auth_args },
	[CTL_POOL_SIZE] = { .name = "pool-size", .writes = true, .args = pool_size_args },
	[CTL_RELEASE] = { .name = "release", .writes = true, .args = pool_size_args },
	[CTL_FORGET] = { .name = "forget", .writes = true, .args = client_args },
	[CTL_UNSET] = { .name = "unset", .writes = true, .args = unset_args },
	/* A check reveals what the peer holds: admins only, like a push. */
	[CTL_MIGRATE_CHECK] = { .name = "migrate-check", .writes = true, .args = migrate_args },
	[CTL_MIGRATE_PUSH] = { .name = "migrate-push", .writes = true, .args = migrate_args },
};

int ctl_err_set(struct ctl_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	err->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -errnum;
}

/* Appends s at dst + *len, truncating; dst stays NUL-terminated.  Not
 * snprintf("%s"): GCC at -O0 flags the possible truncation, which here
 * is intended. */
static void append(char *dst, size_t size, size_t *len, const char *s)
{
	size_t k = strnlen(s, size);

	if (*len + 1 >= size)
		return;
	if (k > size - 1 - *len)
		k = size - 1 - *len;
	memcpy(dst + *len, s, k);
	*len += k;
	dst[*len] = '\0';
}

int ctl_err_prefix(struct ctl_err *err, const char *fmt, ...)
{
	char old[sizeof(err->msg)];
	size_t n;
	va_list ap;

	memcpy(old, err->msg, sizeof(old));
	va_start(ap, fmt);
	n = (size_t)vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (n < sizeof(err->msg)) {
		append(err->msg, sizeof(err->msg), &n, ": ");
		append(err->msg, sizeof(err->msg), &n, old);
	}
	return -err->errnum;
}

const char *ctl_cmd_name(enum ctl_cmd cmd)
{
	return (unsigned)cmd < CTL_CMD_NR ? commands[cmd].name : "?";
}

const char *ctl_setting_name(unsigned bit)
{
	for (const struct ctl_field *f = settings_fields; f->key; f++)
		if (f->has == bit)
			return f->key;
	return NULL;
}

bool ctl_cmd_writes(enum ctl_cmd cmd)
{
	return (unsigned)cmd < CTL_CMD_NR && commands[cmd].writes;
}

bool ctl_name_valid(const char *s)
{
	struct tmem_principal p;

	return tmem_principal_parse(s, TMEM_PRINCIPAL_CANONICAL, &p) == 0;
}

int ctl_principal_canon(const char *text, unsigned flags, char out[TMEM_CLIENT_NAME_MAX])
{
	struct tmem_principal p;
	int rc = tmem_principal_parse(text, flags, &p);

	if (rc == 0)
		tmem_principal_format(&p, out);
	return rc;
}

static int parse_uint(json_t *v, const char *key, uint64_t min, uint64_t max,
		      uint64_t *out, struct ctl_err *err)
{
	json_int_t i;

	if (!json_is_integer(v))
		return ctl_err_set(err, EINVAL, "%s: expected an integer", key);
	i = json_integer_value(v);
	if (i < 0 || (uint64_t)i < min || (uint64_t)i > max)
		return ctl_err_set(err, ERANGE, "%s: %lld is out of range %llu..%llu",
				   key, (long long)i, (unsigned long long)min,
				   (unsigned long long)max);
	*out = (uint64_t)i;
	return 0;
}

/* ["weight", "compress", ...]: each a settings key, at least one. */
static int parse_keys(const char *key, json_t *v, unsigned *mask, struct ctl_err *err)
{
	json_t *k;
	size_t i;

	if (!json_is_array(v) || !json_array_size(v))
		return ctl_err_set(err, EINVAL, "%s: expected an array of settings names", key);
	*mask = 0;
	json_array_foreach(v, i, k) {
		const struct ctl_field *f = settings_fields;

		while (f->key && (!json_is_string(k) || strcmp(f->key, json_string_value(k))))
			f++;
		if (!f->key)
			return ctl_err_set(err, EINVAL, "%s: not a setting: want weight, "
					   "ephemeral_max_pages, persistent_max_pages, compress "
					   "or frozen", key);
		*mask |= f->has;
	}
	return 0;
}

/* A peer address: HOST:PORT, printable with no blanks, and short. */
static bool peer_ok(const char *v)
{
	size_t n = strlen(v);

	if (!n || n >= TMEMD_CONTROL_PEER_MAX || !strchr(v, ':'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (v[i] <= ' ' || v[i] > '~')
			return false;
	return true;
}

static int parse_field(const struct ctl_field *f, json_t *v, void *base,
		       struct ctl_err *err)
{
	char *dst = (char *)base + f->offset;
	uint64_t u;
	int rc;

	switch (f->type) {
	case F_NAME:
		if (!json_is_string(v))
			return ctl_err_set(err, EINVAL, "%s: expected a string: "
					   TMEM_PRINCIPAL_RULE, f->key);
		rc = ctl_principal_canon(json_string_value(v), 0, dst);
		if (rc)
			return ctl_err_set(err, EINVAL, "%s: bad client \"%.64s\": %s", f->key,
					   json_string_value(v), tmem_principal_strerror(rc));
		return 0;
	case F_WEIGHT:
		rc = parse_uint(v, f->key, 1, TMEM_MAX_WEIGHT, &u, err);
		if (rc == 0)
			*(uint32_t *)(void *)dst = (uint32_t)u;
		return rc;
	case F_CAP:
		if (json_is_null(v)) {
			*(uint64_t *)(void *)dst = TMEM_NO_CAP;
			return 0;
		}
		return parse_uint(v, f->key, 0, TMEM_NO_CAP - 1,
				  (uint64_t *)(void *)dst, err);
	case F_PAGES:
		return parse_uint(v, f->key, 1, TMEM_NO_CAP - 1,
				  (uint64_t *)(void *)dst, err);
	case F_BOOL:
		if (!json_is_boolean(v))
			return ctl_err_set(err, EINVAL, "%s: expected true or false", f->key);
		*(bool *)(void *)dst = json_is_true(v);
		return 0;
	case F_COMPRESS_OLD:
		if (json_is_boolean(v)) {
			*(struct tmem_compress *)(void *)dst = (struct tmem_compress){
				json_is_true(v) ? TMEM_COMPRESS_LZ4 : TMEM_COMPRESS_OFF, 0 };
			return 0;
		}
		/* fall through */
	case F_COMPRESS:
		if (json_is_boolean(v))
			return ctl_err_set(err, EINVAL, "%s: on/off is gone: want " TMEM_COMPRESS_VALUES,
					   f->key);
		if (!json_is_string(v) ||
		    store_compress_parse(json_string_value(v), (struct tmem_compress *)(void *)dst))
			return ctl_err_set(err, EINVAL, "%s: want " TMEM_COMPRESS_VALUES, f->key);
		return 0;
	case F_KEYS:
		return parse_keys(f->key, v, (unsigned *)(void *)dst, err);
	case F_PEER:
		if (!json_is_string(v) || !peer_ok(json_string_value(v)))
			return ctl_err_set(err, EINVAL, "%s: expected HOST:PORT (printable, under %d "
					   "bytes)", f->key, TMEMD_CONTROL_PEER_MAX);
		snprintf(dst, TMEMD_CONTROL_PEER_MAX, "%s", json_string_value(v));
		return 0;
	case F_UUID:
		if (!json_is_string(v) ||
		    tmem_uuid_parse(json_string_value(v), (struct tmem_uuid *)(void *)dst))
			return ctl_err_set(err, EINVAL,
					   "%s: expected a UUID like 01234567-89ab-cdef-0123-456789abcdef",
					   f->key);
		return 0;
	}
	return ctl_err_set(err, EINVAL, "%s: bad field type", f->key);
}

/* Checks every key of obj against fields; fills base and *has. */
static int parse_fields(json_t *obj, const struct ctl_field *fields,
			void *base, unsigned *has, struct ctl_err *err)
{
	const char *key;
	json_t *v;
	int rc;

	if (!json_is_object(obj))
		return ctl_err_set(err, EINVAL, "expected a JSON object");
	json_object_foreach(obj, key, v) {
		const struct ctl_field *f = fields;

		while (f->key && strcmp(f->key, key) != 0)
			f++;
		if (!f->key)
			return ctl_err_set(err, EINVAL, "unknown key \"%.64s\"", key);
		rc = parse_field(f, v, base, err);
		if (rc)
			return rc;
		*has |= f->has;
	}
	for (const struct ctl_field *f = fields; f->key; f++)
		if (f->required && !(*has & f->has))
			return ctl_err_set(err, EINVAL, "missing key \"%s\"", f->key);
	return 0;
}

int ctl_settings_parse(json_t *obj, bool allow_frozen, struct ctl_settings *s,
		       struct ctl_err *err)
{
	memset(s, 0, sizeof(*s));
	if (!allow_frozen && json_is_object(obj) && json_object_get(obj, "frozen"))
		return ctl_err_set(err, EINVAL, "unknown key \"frozen\"");
	return parse_fields(obj, settings_fields, s, &s->has, err);
}

static int dump_cap(json_t *obj, const char *key, uint64_t cap)
{
	return json_object_set_new(obj, key, cap == TMEM_NO_CAP ? json_null() :
				   json_integer((json_int_t)cap));
}

json_t *ctl_compress_json(const struct tmem_compress *cz)
{
	char buf[TMEM_COMPRESS_TEXT_MAX];

	return json_string(store_compress_format(cz, buf, sizeof(buf)));
}

int ctl_settings_dump(const struct ctl_settings *s, json_t *obj)
{
	int rc = 0;

	if (s->has & CTL_HAS_WEIGHT)
		rc |= json_object_set_new(obj, "weight", json_integer(s->v.weight));
	if (s->has & CTL_HAS_EPH_MAX)
		rc |= dump_cap(obj, "ephemeral_max_pages", s->v.ephemeral_max);
	if (s->has & CTL_HAS_PERS_MAX)
		rc |= dump_cap(obj, "persistent_max_pages", s->v.persistent_max);
	if (s->has & CTL_HAS_SPILL_MAX)
		rc |= dump_cap(obj, "spill_max_pages", s->v.spill_max);
	if (s->has & CTL_HAS_COMPRESS)
		rc |= json_object_set_new(obj, "compress", ctl_compress_json(&s->v.compress));
	if (s->has & CTL_HAS_FROZEN)
		rc |= json_object_set_new(obj, "frozen", json_boolean(s->v.frozen));
	return rc ? -ENOMEM : 0;
}

static int parse_envelope(json_t *root, struct ctl_request *req,
			  struct ctl_err *err)
{
	json_t *ver = json_object_get(root, "version");
	json_t *cmd = json_object_get(root, "cmd");
	json_t *args = json_object_get(root, "args");
	const char *key;
	json_t *v;
	int c;

	if (!json_is_integer(ver))
		return ctl_err_set(err, EPROTO, "\"version\" is missing or not an integer");
	if (json_integer_value(ver) != TMEMD_CONTROL_PROTO_VERSION)
		return ctl_err_set(err, EPROTONOSUPPORT,
				   "protocol version %lld is not supported (tmemd speaks %d)",
				   (long long)json_integer_value(ver),
				   TMEMD_CONTROL_PROTO_VERSION);
	json_object_foreach(root, key, v)
		if (strcmp(key, "version") && strcmp(key, "cmd") && strcmp(key, "args"))
			return ctl_err_set(err, EINVAL, "unknown key \"%.64s\"", key);
	if (!json_is_string(cmd))
		return ctl_err_set(err, EINVAL, "\"cmd\" is missing or not a string");
	for (c = 0; c < CTL_CMD_NR; c++)
		if (strcmp(commands[c].name, json_string_value(cmd)) == 0)
			break;
	if (c == CTL_CMD_NR)
		return ctl_err_set(err, EOPNOTSUPP, "unknown command \"%.64s\"",
				   json_string_value(cmd));
	req->cmd = (enum ctl_cmd)c;
	if (args)
		json_incref(args);
	else if (!(args = json_object()))
		return ctl_err_set(err, ENOMEM, "out of memory");
	c = parse_fields(args, commands[req->cmd].args, req, &req->has, err);
	json_decref(args);
	if (c == 0 && req->cmd == CTL_SET && !(req->has & CTL_SETTINGS_MASK))
		return ctl_err_set(err, EINVAL, "set: nothing to set");
	req->s.has = req->has & CTL_SETTINGS_MASK;
	return c;
}

int ctl_request_parse(const char *buf, size_t len, struct ctl_request *req,
		      struct ctl_err *err)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(req, 0, sizeof(*req));
	if (len > TMEMD_CONTROL_MAX_MSG)
		return ctl_err_set(err, EMSGSIZE, "request longer than %d bytes",
				   TMEMD_CONTROL_MAX_MSG);
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return ctl_err_set(err, EBADMSG, "malformed JSON at column %d: %s",
				   jerr.column, jerr.text);
	if (!json_is_object(root))
		rc = ctl_err_set(err, EBADMSG, "a request must be a JSON object");
	else
		rc = parse_envelope(root, req, err);
	json_decref(root);
	return rc;
}

static char *dump_line(json_t *doc)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	char *line = NULL;

	if (text && asprintf(&line, "%s\n", text) < 0)
		line = NULL;
	free(text);
	json_decref(doc);
	return line;
}

char *ctl_reply_result(json_t *result)
{
	if (!result)
		return NULL;
	return dump_line(json_pack("{s:i, s:o}", "version",
				   TMEMD_CONTROL_PROTO_VERSION, "result", result));
}

/*
 * A message can quote a peer's bytes (jansson's error text shows the
 * bytes near a syntax error) or cut a UTF-8 character in two (%.64s, a
 * full msg buffer), and json_pack refuses a string that is not valid
 * UTF-8: the peer would get no answer at all.  Messages are English, so
 * anything but printable ASCII becomes '?'.
 */
static void printable_ascii(char *dst, const char *src, size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = '\0';
}

char *ctl_reply_error(const struct ctl_err *err)
{
	char msg[sizeof(err->msg)];

	printable_ascii(msg, err->msg, sizeof(msg));
	return dump_line(json_pack("{s:i, s:{s:i, s:s}}", "version",
				   TMEMD_CONTROL_PROTO_VERSION, "error", "errno",
				   err->errnum, "message", msg));
}
