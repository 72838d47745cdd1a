/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "stats_json.h"

static json_t *cap_json(uint64_t pages)
{
	return pages == TMEM_NO_CAP ? json_null() : json_integer((json_int_t)pages);
}

static json_t *ops_json(const struct tmem_op_counters *o)
{
	return json_pack("{s:I,s:I,s:{s:I,s:I,s:I},s:I,s:I,s:I,s:I,s:I,s:I}",
			 "puts", (json_int_t)o->puts,
			 "succ_puts", (json_int_t)o->succ_puts,
			 "failed_puts",
			 "quota", (json_int_t)o->failed_puts[TMEM_PUT_FAIL_QUOTA],
			 "full", (json_int_t)o->failed_puts[TMEM_PUT_FAIL_FULL],
			 "frozen", (json_int_t)o->failed_puts[TMEM_PUT_FAIL_FROZEN],
			 "gets", (json_int_t)o->gets,
			 "succ_gets", (json_int_t)o->succ_gets,
			 "failed_gets", (json_int_t)o->failed_gets,
			 "flush_pages", (json_int_t)o->flush_pages,
			 "flush_objects", (json_int_t)o->flush_objects,
			 "evictions", (json_int_t)o->evictions);
}

static int add_pool(const struct tmem_pool_info *p, void *ctx)
{
	json_t *pools = ctx;
	json_t *uuid = json_null();
	char text[37];

	if (p->shared) {
		tmemd_format_uuid(&p->uuid, text);
		uuid = json_string(text);
	}
	return json_array_append_new(pools,
		json_pack("{s:i,s:b,s:b,s:o,s:I,s:I,s:I,s:o}",
			  "id", (int)p->id, "persistent", p->persistent,
			  "shared", p->shared, "uuid", uuid,
			  "sharers", (json_int_t)p->sharers,
			  "pages", (json_int_t)p->pages,
			  "objects", (json_int_t)p->objects,
			  "ops", ops_json(&p->ops))) ? -ENOMEM : 0;
}

static json_t *client_json(struct tmem_client *sc, const char *transport,
			   const struct tmem_client_settings *s)
{
	struct tmem_client_info ci;
	json_t *pools = json_array();
	json_t *settings = s ? json_pack("{s:I,s:o,s:o,s:b,s:b}",
					 "weight", (json_int_t)s->weight,
					 "ephemeral_max_pages", cap_json(s->ephemeral_max),
					 "persistent_max_pages", cap_json(s->persistent_max),
					 "compress", s->compress, "frozen", s->frozen)
			     : json_null();

	tmem_client_info(sc, &ci);
	if (pools)
		tmem_client_for_each_pool(sc, add_pool, pools);
	return json_pack("{s:I,s:s,s:s?,s:o,s:{s:I,s:I},s:o,s:I,s:o}",
			 "id", (json_int_t)ci.id, "name", ci.name,
			 "transport", transport, "settings", settings,
			 "pages", "ephemeral", (json_int_t)ci.pages.ephemeral,
			 "persistent", (json_int_t)ci.pages.persistent,
			 "ops", ops_json(&ci.ops),
			 "nr_pools", (json_int_t)ci.nr_pools, "pools", pools);
}

static int add_client(struct tmemd_client *c, void *ctx)
{
	struct tmem_client_settings s;

	tmem_policy_client_get(c->pc, &s);
	return json_array_append_new(ctx, client_json(c->sc, c->transport, &s))
		       ? -ENOMEM : 0;
}

json_t *tmemd_stats_json(struct tmemd_clients *reg)
{
	struct tmem_store *store = tmemd_clients_store(reg);
	struct tmem_store_info si;
	json_t *clients = json_array();

	tmem_store_info(store, &si);
	if (!clients || tmemd_clients_for_each(reg, add_client, clients)) {
		json_decref(clients);
		return NULL;
	}
	return json_pack("{s:i,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:o,s:o}",
		"version", TMEMD_STATS_VERSION,
		"pool",
		"total_pages", (json_int_t)si.arena.total_pages,
		"free_pages", (json_int_t)si.arena.free_pages,
		"used_pages", (json_int_t)(si.arena.total_pages - si.arena.free_pages),
		"ephemeral_pages", (json_int_t)si.arena.ephemeral,
		"persistent_pages", (json_int_t)si.arena.persistent,
		"evictions", (json_int_t)si.evictions,
		"nr_clients", (json_int_t)si.nr_clients,
		"metadata_bytes", (json_int_t)si.metadata_bytes,
		"clients", clients,
		"shared", client_json(tmem_store_shared_client(store), NULL, NULL));
}

int tmemd_stats_write(struct tmemd_clients *reg, const char *path)
{
	json_t *doc = tmemd_stats_json(reg);
	char tmp[4096];
	int fd, rc = 0;

	if (!doc)
		return -ENOMEM;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if (json_dumpfd(doc, fd, JSON_INDENT(2) | JSON_SORT_KEYS) ||
	    write(fd, "\n", 1) != 1 || fsync(fd))
		rc = errno ? -errno : -EIO;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
out:
	json_decref(doc);
	return rc;
}
