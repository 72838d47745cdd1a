/* SPDX-License-Identifier: MIT */
/* The state file: load, validate, merge and save atomically.  See ctl_state.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_state.h"
#include "io_util.h"

void ctl_state_free(struct ctl_state *st)
{
	if (!st)
		return;
	free(st->clients);
	free(st->auths);
	memset(st, 0, sizeof(*st));
}

/* Makes room for one more element of size sz in *arr. */
static int grow(void **arr, size_t *cap, size_t nr, size_t sz, size_t max)
{
	size_t ncap;
	void *p;

	if (nr < *cap)
		return 0;
	if (nr >= max)
		return -ENOSPC;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap > max)
		ncap = max;
	p = realloc(*arr, ncap * sz);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

const struct ctl_settings *ctl_state_lookup(const struct ctl_state *st,
					    const char *name)
{
	for (size_t i = 0; i < st->nr_clients; i++)
		if (strcmp(st->clients[i].name, name) == 0)
			return &st->clients[i].s;
	return NULL;
}

void ctl_settings_apply(const struct ctl_settings *s,
			struct tmem_client_settings *out)
{
	if (s->has & CTL_HAS_WEIGHT)
		out->weight = s->v.weight;
	if (s->has & CTL_HAS_EPH_MAX)
		out->ephemeral_max = s->v.ephemeral_max;
	if (s->has & CTL_HAS_PERS_MAX)
		out->persistent_max = s->v.persistent_max;
	if (s->has & CTL_HAS_SPILL_MAX)
		out->spill_max = s->v.spill_max;
	if (s->has & CTL_HAS_COMPRESS)
		out->compress = s->v.compress;
	if (s->has & CTL_HAS_FROZEN)
		out->frozen = s->v.frozen;
}

int ctl_state_update(struct ctl_state *st, const char *name,
		     const struct ctl_settings *delta)
{
	struct ctl_settings *s = (struct ctl_settings *)ctl_state_lookup(st, name);
	struct ctl_state_client *c;
	int rc;

	if (!ctl_name_valid(name))
		return -EINVAL;
	if (!s) {
		rc = grow((void **)&st->clients, &st->cap_clients, st->nr_clients,
			  sizeof(*st->clients), CTL_STATE_MAX_CLIENTS);
		if (rc)
			return rc;
		c = &st->clients[st->nr_clients++];
		memset(c, 0, sizeof(*c));
		strcpy(c->name, name);
		s = &c->s;
	}
	ctl_settings_apply(delta, &s->v);
	s->has |= delta->has & CTL_SETTINGS_MASK;
	return 0;
}

int ctl_state_auth(struct ctl_state *st, const struct tmem_uuid *uuid,
		   const char *principal, bool allow)
{
	struct ctl_state_auth *a;
	int rc;

	if (!ctl_name_valid(principal))
		return -EINVAL;
	for (size_t i = 0; i < st->nr_auths; i++) {
		a = &st->auths[i];
		if (a->uuid.lo != uuid->lo || a->uuid.hi != uuid->hi ||
		    strcmp(a->principal, principal) != 0)
			continue;
		if (!allow)
			st->auths[i] = st->auths[--st->nr_auths];
		return 0;
	}
	if (!allow)
		return 0;
	rc = grow((void **)&st->auths, &st->cap_auths, st->nr_auths,
		  sizeof(*st->auths), CTL_STATE_MAX_AUTHS);
	if (rc)
		return rc;
	a = &st->auths[st->nr_auths++];
	a->uuid = *uuid;
	strcpy(a->principal, principal);
	return 0;
}

void ctl_state_restore(struct ctl_state *st, const char *name,
		       const struct ctl_settings *old)
{
	for (size_t i = 0; i < st->nr_clients; i++) {
		if (strcmp(st->clients[i].name, name))
			continue;
		if (old)
			st->clients[i].s = *old;
		else
			st->clients[i] = st->clients[--st->nr_clients];
		return;
	}
}

unsigned ctl_state_unset(struct ctl_state *st, const char *name, unsigned mask)
{
	for (size_t i = 0; i < st->nr_clients; i++) {
		struct ctl_settings *s = &st->clients[i].s;
		unsigned had;

		if (strcmp(st->clients[i].name, name))
			continue;
		had = s->has & mask;
		s->has &= ~mask;
		if (!(s->has & CTL_SETTINGS_MASK))
			st->clients[i] = st->clients[--st->nr_clients];
		return had;
	}
	return 0;
}

int ctl_state_forget(struct ctl_state *st, const char *name)
{
	bool found = false;

	for (size_t i = 0; i < st->nr_clients; i++) {
		if (strcmp(st->clients[i].name, name) == 0) {
			st->clients[i] = st->clients[--st->nr_clients];
			found = true;
			break;
		}
	}
	for (size_t i = 0; i < st->nr_auths;) {
		if (strcmp(st->auths[i].principal, name) != 0) {
			i++;
			continue;
		}
		st->auths[i] = st->auths[--st->nr_auths];
		found = true;
	}
	return found ? 0 : -ENOENT;
}

/*
 * A key or principal of the file: canonical principal text only, so no
 * two spellings name one client.  Version 1 files hold the same forms
 * (tmemctl stored "domid:N" for a domain it was given by id), but their
 * names could also be a Xen domain's xenstore name, which no longer
 * names it: counted in legacy_names, for the daemon to say so.
 */
static int check_principal(struct ctl_state *st, int version, const char *text,
			   struct ctl_err *err)
{
	struct tmem_principal p;
	int rc = tmem_principal_parse(text, TMEM_PRINCIPAL_CANONICAL, &p);

	if (rc)
		return ctl_err_set(err, EINVAL, "bad client \"%.64s\": %s", text,
				   tmem_principal_strerror(rc));
	if (version == 1 && p.kind == TMEM_PRINCIPAL_LOCAL)
		st->legacy_names++;
	return 0;
}

static int load_clients(struct ctl_state *st, int version, json_t *clients,
			struct ctl_err *err)
{
	const char *name;
	json_t *v;
	int rc;

	if (!json_is_object(clients))
		return ctl_err_set(err, EINVAL, "\"clients\" is not an object");
	json_object_foreach(clients, name, v) {
		struct ctl_settings s;

		rc = check_principal(st, version, name, err);
		if (rc)
			return rc;
		rc = ctl_settings_parse(v, true, &s, err);
		if (rc)
			return ctl_err_prefix(err, "client \"%s\"", name);
		rc = ctl_state_update(st, name, &s);
		if (rc)
			return ctl_err_set(err, -rc, "client \"%s\": %s", name, strerror(-rc));
	}
	return 0;
}

static int load_auths(struct ctl_state *st, int version, json_t *auths,
		      struct ctl_err *err)
{
	size_t i;
	json_t *v;
	int rc;

	if (!json_is_array(auths))
		return ctl_err_set(err, EINVAL, "\"shared_auth\" is not an array");
	json_array_foreach(auths, i, v) {
		const char *uuid = NULL, *client = NULL;
		struct tmem_uuid u;
		json_error_t jerr;

		if (json_unpack_ex(v, &jerr, JSON_STRICT, "{s:s, s:s}", "uuid", &uuid,
				   "client", &client))
			return ctl_err_set(err, EINVAL, "shared_auth[%zu]: %s", i, jerr.text);
		if (tmem_uuid_parse(uuid, &u))
			return ctl_err_set(err, EINVAL, "shared_auth[%zu]: bad uuid", i);
		rc = check_principal(st, version, client, err);
		if (rc)
			return ctl_err_prefix(err, "shared_auth[%zu]", i);
		rc = ctl_state_auth(st, &u, client, true);
		if (rc)
			return ctl_err_set(err, -rc, "shared_auth[%zu]: %s", i,
					   rc == -ENOSPC ? "more authorisations than tmemd holds ("
					   CTL_AUTH_LIMIT_TEXT ")" : strerror(-rc));
	}
	return 0;
}

static int load_doc(struct ctl_state *st, json_t *root, struct ctl_err *err)
{
	json_t *ver, *clients = NULL, *auths = NULL;
	json_error_t jerr;
	int rc, version;

	if (json_unpack_ex(root, &jerr, JSON_STRICT, "{s:o, s?o, s?o}", "version", &ver,
			   "clients", &clients, "shared_auth", &auths))
		return ctl_err_set(err, EINVAL, "%s", jerr.text);
	/* Version 1 (before principals) reads the same way; saving writes 2. */
	if (!json_is_integer(ver) || json_integer_value(ver) < CTL_STATE_VERSION_OLDEST ||
	    json_integer_value(ver) > CTL_STATE_VERSION)
		return ctl_err_set(err, EINVAL, "unsupported version (expected %d..%d)",
				   CTL_STATE_VERSION_OLDEST, CTL_STATE_VERSION);
	version = (int)json_integer_value(ver);
	rc = clients ? load_clients(st, version, clients, err) : 0;
	if (rc == 0 && auths)
		rc = load_auths(st, version, auths, err);
	return rc;
}

int ctl_state_load_stoppable(struct ctl_state *st, const char *path,
			     bool (*stop)(void *), void *stop_ctx, struct ctl_err *err)
{
	json_error_t jerr;
	json_t *root;
	size_t len;
	char *text;
	int rc;

	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return ctl_err_set(err, errno, "state file %s: %s", path, strerror(errno));
	/* The whole file in a few large reads, then parsed from memory:
	 * json_loadfd() would read(2) it one byte at a time. */
	rc = io_read_capped(fd, CTL_STATE_MAX_BYTES, &text, &len, stop, stop_ctx);
	close(fd);
	if (rc == -EFBIG)
		return ctl_err_set(err, EFBIG, "state file %s: over the %s cap, so damaged "
				   "or not tmemd's; move it aside (to start without the stored "
				   "settings) or restore a backup", path, CTL_STATE_MAX_TEXT);
	if (rc)
		return ctl_err_set(err, -rc, "state file %s: %s", path,
				   rc == -ECANCELED ? "reading it was cancelled" : strerror(-rc));
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!root)
		return ctl_err_set(err, EINVAL, "state file %s: line %d: %s", path,
				   jerr.line, jerr.text);
	rc = load_doc(st, root, err);
	json_decref(root);
	if (rc) {
		ctl_err_prefix(err, "state file %s", path);
		ctl_state_free(st);
	}
	return rc;
}

int ctl_state_load(struct ctl_state *st, const char *path, struct ctl_err *err)
{
	return ctl_state_load_stoppable(st, path, NULL, NULL, err);
}

static json_t *state_doc(const struct ctl_state *st)
{
	json_t *root = json_pack("{s:i, s:{}, s:[]}", "version", CTL_STATE_VERSION,
				 "clients", "shared_auth");
	json_t *clients = json_object_get(root, "clients");
	json_t *auths = json_object_get(root, "shared_auth");
	char uuid[TMEM_UUID_TEXT];
	int rc = root ? 0 : -1;

	for (size_t i = 0; rc == 0 && i < st->nr_clients; i++) {
		json_t *c = json_object();

		rc = json_object_set_new(clients, st->clients[i].name, c);
		if (rc == 0)
			rc = ctl_settings_dump(&st->clients[i].s, c);
	}
	for (size_t i = 0; rc == 0 && i < st->nr_auths; i++) {
		tmem_uuid_format(&st->auths[i].uuid, uuid);
		rc = json_array_append_new(auths, json_pack("{s:s, s:s}", "uuid", uuid,
							    "client", st->auths[i].principal));
	}
	if (rc) {
		json_decref(root);
		return NULL;
	}
	return root;
}

static int fsync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, rc = 0;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path + (slash == path)), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd))
		rc = -errno;
	close(fd);
	return rc;
}

int ctl_write_json_atomic(const char *path, json_t *doc, mode_t mode, gid_t gid)
{
	char tmp[PATH_MAX];
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	int fd = -1, rc;

	if (!text)
		return -ENOMEM;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp)) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = fchmod(fd, mode) ? -errno : 0;
	if (rc == 0 && gid != (gid_t)-1 && fchown(fd, (uid_t)-1, gid))
		rc = -errno;
	if (rc == 0)
		rc = io_write_all(fd, text, strlen(text), false);
	if (rc == 0)
		rc = io_write_all(fd, "\n", 1, false);
	if (rc == 0 && fsync(fd))
		rc = -errno;
	if (rc == 0 && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		goto out;
	}
	rc = fsync_dir_of(path);
out:
	if (fd >= 0)
		close(fd);
	free(text);
	return rc;
}

int ctl_state_save(const struct ctl_state *st, const char *path,
		   struct ctl_err *err)
{
	json_t *doc = state_doc(st);
	int rc;

	if (!doc)
		return ctl_err_set(err, ENOMEM, "out of memory");
	rc = ctl_write_json_atomic(path, doc, 0600, (gid_t)-1);
	json_decref(doc);
	if (rc)
		ctl_err_set(err, -rc, "state file %s: %s", path, strerror(-rc));
	return rc;
}
