/* SPDX-License-Identifier: MIT */
/*
 * The stats document ("stats") and the client list ("list").  pools/ and
 * policy/ fill their own counters; this file only turns them into JSON.
 * Every key is documented in man/tmemctl.8 (STATS DOCUMENT); a key added
 * here must be added there and to tests/control's key list.
 *
 * Counters are read without stopping the store, so one document may be
 * off by the operations in flight while it was built.
 */
#include <errno.h>
#include <string.h>

#include "ctl_internal.h"

static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *jcap(uint64_t cap)
{
	return cap == TMEM_NO_CAP ? json_null() : jint(cap);
}

static json_t *ops_json(const struct tmem_op_counters *o)
{
	return json_pack("{s:o, s:o, s:{s:o, s:o, s:o}, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "puts", jint(o->puts), "succ_puts", jint(o->succ_puts),
			 "failed_puts",
			 "quota", jint(o->failed_puts[TMEM_PUT_FAIL_QUOTA]),
			 "full", jint(o->failed_puts[TMEM_PUT_FAIL_FULL]),
			 "frozen", jint(o->failed_puts[TMEM_PUT_FAIL_FROZEN]),
			 "gets", jint(o->gets), "succ_gets", jint(o->succ_gets),
			 "failed_gets", jint(o->failed_gets),
			 "flush_pages", jint(o->flush_pages),
			 "flush_objects", jint(o->flush_objects),
			 "evictions", jint(o->evictions), "admin_flushes", jint(o->admin_flushes));
}

/* logical / stored bytes; null when nothing is stored in bytes (no
 * page, or only same-filled ones). */
static json_t *ratio_json(uint64_t num, uint64_t den)
{
	return den ? json_real((double)num / (double)den) : json_null();
}

/* What compression does for some pages; names as zram's mm_stat. */
static json_t *zstats_json(const struct tmem_zstats *z)
{
	uint64_t orig = z->pages * TMEM_PAGE_SIZE;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "pages", jint(z->pages),
			 "orig_data_size", jint(orig), "compr_data_size", jint(z->compr_data_size),
			 "same_pages", jint(z->same_pages), "huge_pages", jint(z->huge_pages),
			 "compression_ratio", ratio_json(orig, z->compr_data_size));
}

/* zramctl's DATA and COMPR of some pages: logical bytes (4096 a page)
 * and the bytes they take compressed. */
static json_t *bytes_json(const struct tmem_zstats *z)
{
	return json_pack("{s:o, s:o}", "logical_bytes", jint(z->pages * TMEM_PAGE_SIZE),
			 "compressed_bytes", jint(z->compr_data_size));
}

/*
 * The "data" object (issue 30): each size once, its unit in its name,
 * logical and compressed side by side, by kind and in all, and the
 * ratio.  kind[0] ephemeral, kind[1] persistent.
 */
static json_t *data_json(const struct tmem_zstats kind[2])
{
	struct tmem_zstats all = kind[0];

	all.pages += kind[1].pages;
	all.compr_data_size += kind[1].compr_data_size;
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "ephemeral", bytes_json(&kind[0]),
			 "persistent", bytes_json(&kind[1]),
			 "logical_bytes", jint(all.pages * TMEM_PAGE_SIZE),
			 "compressed_bytes", jint(all.compr_data_size),
			 "compression_ratio", ratio_json(all.pages * TMEM_PAGE_SIZE,
							 all.compr_data_size));
}

/* Ops by the kind of pool: ephemeral (cleancache) and persistent (frontswap). */
static json_t *ops_kind_json(const struct tmem_op_counters kind[2])
{
	return json_pack("{s:o, s:o}", "ephemeral", ops_json(&kind[0]),
			 "persistent", ops_json(&kind[1]));
}

static json_t *uuid_json(const struct tmem_pool_info *p)
{
	char text[TMEM_UUID_TEXT];

	if (!p->shared)
		return json_null();
	tmem_uuid_format(&p->uuid, text);
	return json_string(text);
}

/* Per-client walk over its pools: the pool list plus the compression of
 * its private pools by kind (shared pools are charged to no client: the
 * shared_pools list has them). */
struct pool_walk {
	json_t *pools;
	struct tmem_zstats z_kind[2];
	int rc;
};

static int pool_cb(const struct tmem_pool_info *p, void *arg)
{
	struct pool_walk *w = arg;
	struct tmem_zstats *z = &w->z_kind[p->persistent];

	if (!p->shared) {
		z->pages += p->z.pages;
		z->compr_data_size += p->z.compr_data_size;
		z->same_pages += p->z.same_pages;
		z->huge_pages += p->z.huge_pages;
	}
	return json_array_append_new(w->pools, json_pack(
		"{s:i, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o}}", "id", (int)p->id,
		"persistent", p->persistent, "shared", p->shared, "uuid", uuid_json(p),
		"sharers", jint(p->sharers), "pages", jint(p->pages),
		"objects", jint(p->objects), "compression", zstats_json(&p->z),
		"ops", ops_json(&p->ops),
		"tier", "pages", jint(p->tier_pages), "stored_bytes", jint(p->tier_bytes),
		"readbacks", jint(p->readbacks)));
}

/*
 * cleancache = the client's ephemeral pools, frontswap = its persistent
 * pools, in the names Linux's debugfs used (man/tmemctl.8 has the table).
 */
static json_t *cleancache_json(const struct tmem_op_counters *o)
{
	return json_pack("{s:o, s:o, s:o, s:o}", "succ_gets", jint(o->succ_gets),
			 "failed_gets", jint(o->failed_gets), "puts", jint(o->puts),
			 "flushes", jint(o->flush_pages + o->flush_objects));
}

static json_t *frontswap_json(const struct tmem_op_counters *o)
{
	uint64_t failed = 0;

	for (int i = 0; i < TMEM_PUT_FAIL_NR; i++)
		failed += o->failed_puts[i];
	return json_pack("{s:o, s:o, s:o, s:o}", "succ_stores", jint(o->succ_puts),
			 "failed_stores", jint(failed), "loads", jint(o->succ_gets),
			 "invalidates", jint(o->flush_pages + o->flush_objects));
}

unsigned ctl_stored_has(const struct tmemd_control *ctl, const char *const *names)
{
	unsigned has = 0;

	for (unsigned i = 0; names && names[i]; i++) {
		const struct ctl_settings *s = ctl_state_lookup(&ctl->state, names[i]);

		has |= s ? s->has & CTL_SETTINGS_MASK : 0;
	}
	return has;
}

/*
 * Where each setting in force comes from (issue 30): "tmemctl" (stored
 * with tmemctl set or freeze; it beats the file), "tmemd.conf", or
 * "default"; and what the file gives, what tmemctl unset goes back to.
 */
static int add_sources(struct tmemd_control *ctl, const struct tmemd_control_client *cl,
		       json_t *doc)
{
	unsigned stored = ctl_stored_has(ctl, cl->names);
	json_t *from = json_object();

	for (unsigned bit = 1; from && bit & CTL_SETTINGS_MASK; bit <<= 1)
		if (json_object_set_new(from, ctl_setting_name(bit), json_string(
			stored & bit ? "tmemctl" : cl->file_has & bit ? "tmemd.conf" : "default"))) {
			json_decref(from);
			return -ENOMEM;
		}
	if (!from || json_object_set_new(doc, "from", from) ||
	    json_object_set_new(doc, "file", json_pack(
		    "{s:i, s:o, s:o, s:o, s:o}", "weight", (int)cl->file.weight,
		    "ephemeral_max_pages", jcap(cl->file.ephemeral_max),
		    "persistent_max_pages", jcap(cl->file.persistent_max),
		    "spill_max_pages", jcap(cl->file.spill_max),
		    "compress", ctl_compress_json(&cl->file.compress))))
		return -ENOMEM;
	return 0;
}

json_t *ctl_client_summary(struct tmemd_control *ctl,
			   const struct tmemd_control_client *cl)
{
	json_t *doc;
	struct tmem_client *c = tmem_pclient_store_client(cl->pc);
	struct tmem_client_settings s;
	struct tmem_page_counts pages;

	tmem_policy_client_get(cl->pc, &s);
	store_client_page_counts(c, &pages);
	doc = json_pack("{s:i, s:s, s:s, s:o, s:i, s:b, s:o, s:{s:o, s:o, s:o}, s:{s:o, s:o}}",
			 "id", (int)store_client_id(c), "client", cl->name, "name", cl->label,
			 "domid", cl->domid < 0 ? json_null() : json_integer(cl->domid),
			 "weight", (int)s.weight, "frozen", s.frozen,
			 "compress", ctl_compress_json(&s.compress),
			 "caps", "ephemeral_max_pages", jcap(s.ephemeral_max),
			 "persistent_max_pages", jcap(s.persistent_max),
			 "spill_max_pages", jcap(s.spill_max),
			 "pages", "ephemeral", jint(pages.ephemeral),
			 "persistent", jint(pages.persistent));
	if (doc && cl->names && add_sources(ctl, cl, doc)) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

static json_t *client_stats(struct tmemd_control *ctl,
			    const struct tmemd_control_client *cl)
{
	struct tmem_client *c = tmem_pclient_store_client(cl->pc);
	struct pool_walk w = { .pools = json_array() };
	struct tmem_client_info info;
	json_t *doc = ctl_client_summary(ctl, cl);

	store_client_info(c, &info);
	w.rc = store_client_for_each_pool(c, pool_cb, &w);
	if (!doc || !w.pools || w.rc ||
	    json_object_set_new(doc, "ops", ops_json(&info.ops)) ||
	    json_object_set_new(doc, "compression", zstats_json(&info.z)) ||
	    json_object_set_new(doc, "data", data_json(w.z_kind)) ||
	    json_object_set_new(doc, "ops_by_kind", ops_kind_json(info.ops_kind)) ||
	    json_object_set_new(doc, "cleancache", cleancache_json(&info.ops_kind[0])) ||
	    json_object_set_new(doc, "frontswap", frontswap_json(&info.ops_kind[1])) ||
	    json_object_set_new(doc, "tier", ctl_client_tier_json(&info)) ||
	    json_object_set(doc, "pools", w.pools)) {
		json_decref(doc);
		doc = NULL;
	}
	json_decref(w.pools);
	return doc;
}

struct client_walk {
	struct tmemd_control *ctl;
	json_t *arr;
	bool full;
};

static int client_cb(const struct tmemd_control_client *cl, void *arg)
{
	struct client_walk *w = arg;
	json_t *doc = w->full ? client_stats(w->ctl, cl) : ctl_client_summary(w->ctl, cl);

	return doc ? json_array_append_new(w->arr, doc) : -ENOMEM;
}

/* fn on every client, or only on the one spec names (NULL: all). */
static int walk(struct tmemd_control *ctl, const char *only, tmemd_control_client_fn fn,
		void *arg)
{
	if (only)
		return ctl->hooks.with_client(ctl->ctx, only, fn, arg);
	return ctl->hooks.for_each_client(ctl->ctx, fn, arg);
}

static json_t *clients_json(struct tmemd_control *ctl, bool full, const char *only)
{
	struct client_walk w = { .ctl = ctl, .arr = json_array(), .full = full };

	if (w.arr && walk(ctl, only, client_cb, &w) != 0) {
		json_decref(w.arr);
		return NULL;
	}
	return w.arr;
}

/*
 * Shared pools are found through their sharers: pools/ keeps them apart
 * from every client's private slots, so walk each client's pools and
 * take each shared UUID once.  A shared pool with no sharer left is gone.
 */
struct shared_walk {
	struct tmemd_control *ctl;
	json_t *arr;
	struct tmem_uuid seen[TMEM_MAX_SHARED_POOLS];
	unsigned nr_seen;
};

static int shared_pool_cb(const struct tmem_pool_info *p, void *arg)
{
	struct shared_walk *w = arg;

	if (!p->shared)
		return 0;
	for (unsigned i = 0; i < w->nr_seen; i++)
		if (w->seen[i].lo == p->uuid.lo && w->seen[i].hi == p->uuid.hi)
			return 0;
	if (w->nr_seen < TMEM_MAX_SHARED_POOLS)
		w->seen[w->nr_seen++] = p->uuid;
	return json_array_append_new(w->arr, json_pack(
		"{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "uuid", uuid_json(p),
		"sharers", jint(p->sharers),
		"authorised", ctl_authorised_json(w->ctl, &p->uuid),
		"pages", jint(p->pages), "objects", jint(p->objects),
		"logical_bytes", jint(p->z.pages * TMEM_PAGE_SIZE),
		"compressed_bytes", jint(p->z.compr_data_size)));
}

static int shared_client_cb(const struct tmemd_control_client *cl, void *arg)
{
	return store_client_for_each_pool(tmem_pclient_store_client(cl->pc),
					  shared_pool_cb, arg);
}

static json_t *shared_json(struct tmemd_control *ctl, const char *only)
{
	struct shared_walk w = { .ctl = ctl, .arr = json_array() };

	if (w.arr && walk(ctl, only, shared_client_cb, &w) != 0) {
		json_decref(w.arr);
		return NULL;
	}
	return w.arr;
}

/*
 * What the host could take back at once, in frames: the free frames that
 * still hold memory (the others went back already) and those the
 * ephemeral pages hold.  Compressed, pages share frames, so the latter
 * is the used frames' share by page count (exact with compression off,
 * where a page is a frame).
 */
static uint64_t freeable_frames(const struct tmem_store_info *si)
{
	const struct tmem_arena_counts *a = &si->arena;
	uint64_t resident = si->mem_resident / TMEM_PAGE_SIZE, pages = a->ephemeral + a->persistent;
	uint64_t idle = resident > a->used_pages ? resident - a->used_pages : 0;

	if (!pages)
		return idle;
	return idle + (uint64_t)((double)a->used_pages * (double)a->ephemeral / (double)pages);
}

json_t *ctl_pool_json(struct tmemd_control *ctl)
{
	struct tmem_store_info si;
	const struct tmem_arena_counts *a = &si.arena;
	json_t *doc;

	store_info(ctl->hooks.store, &si);
	/* Pages are logical; total, used and free pages are 4 KiB frames
	 * of the arena (physical).  zero_pages counts same-filled pages
	 * (zero ones included), as zram's same_pages; stored_bytes is
	 * compr_data_size.  freeable, as xl tmem-freeable: what the host
	 * could take back, the free frames and the ephemeral pages. */
	doc = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			"page_size", (int)TMEM_PAGE_SIZE,
			"total_pages", jint(a->total_pages),
			"used_pages", jint(a->used_pages),
			"free_pages", jint(a->free_pages),
			"ephemeral_pages", jint(a->ephemeral),
			"persistent_pages", jint(a->persistent),
			"zero_pages", jint(si.z.same_pages),
			"stored_bytes", jint(si.z.compr_data_size),
			"metadata_bytes", jint(si.metadata_bytes),
			"evictions", jint(si.evictions),
			"freeable_pages", jint(freeable_frames(&si)));
	if (doc && (json_object_set_new(doc, "compression", zstats_json(&si.z)) ||
		    json_object_set_new(doc, "tier", ctl_tier_json(ctl->hooks.store)) ||
		    json_object_set_new(doc, "data", data_json(si.z_kind)) ||
		    json_object_set_new(doc, "ops", ops_kind_json(si.ops_kind)) ||
		    json_object_set_new(doc, "allocator", json_pack(
			    "{s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			    "mem_used_total", jint(si.mem_used_total),
			    "overhead_bytes", jint(si.zs_overhead),
			    "fragmentation_bytes", jint(si.zs_fragmentation),
			    "compactions", jint(si.compactions),
			    "pages_compacted", jint(si.pages_compacted),
			    "decode_errors", jint(si.decode_errors),
			    "effective_ratio", ratio_json(si.z.pages * TMEM_PAGE_SIZE,
							  si.mem_used_total))))) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

/* Parking (xl save, restore, migrate): the counters since start, and
 * who is parked now. */
static json_t *parked_json(struct tmemd_control *ctl)
{
	struct tmemd_control_park_stats p = { 0 };

	if (ctl->hooks.park_stats)
		ctl->hooks.park_stats(ctl->ctx, &p);
	return json_pack("{s:i, s:{s:o, s:o, s:o}, s:{s:o, s:o, s:o}, s:o}",
			 "clients", (int)p.parked,
			 "pools", "parked", jint(p.pools_parked), "claimed", jint(p.pools_claimed),
			 "expired", jint(p.pools_expired),
			 "pages", "parked", jint(p.pages_parked), "claimed", jint(p.pages_claimed),
			 "expired", jint(p.pages_expired),
			 "list", ctl_parked_json(ctl));
}

/* One kind of refusal: {"total": N, "EPROTO": N, ...}, every reason. */
static json_t *refusal_counts_json(const struct tmemd_control_refusals *r,
				   const uint64_t *counts)
{
	json_t *o = json_object();
	uint64_t total = 0;

	for (unsigned i = 0; o && i < r->nr; i++) {
		total += counts[i];
		if (json_object_set_new(o, r->reason[i], jint(counts[i]))) {
			json_decref(o);
			return NULL;
		}
	}
	if (o && json_object_set_new(o, "total", jint(total))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Exact counts, whatever the rate-limited log shows (man/tmemctl.8). */
static json_t *refusals_json(struct tmemd_control *ctl)
{
	struct tmemd_control_refusals r = { .nr = 0 };

	if (ctl->hooks.refusals)
		ctl->hooks.refusals(ctl->ctx, &r);
	return json_pack("{s:o, s:o}", "handshakes", refusal_counts_json(&r, r.handshakes),
			 "requests", refusal_counts_json(&r, r.requests));
}

json_t *ctl_memory_json(struct tmemd_control *ctl)
{
	json_t *m = ctl->hooks.memory_json ? ctl->hooks.memory_json(ctl->ctx) : NULL;

	return m ? m : json_null();
}

json_t *ctl_stats_document(struct tmemd_control *ctl, const char *only)
{
	return json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "version",
			 TMEMD_CONTROL_PROTO_VERSION, "pool", ctl_pool_json(ctl),
			 "memory", ctl_memory_json(ctl),
			 "clients", clients_json(ctl, true, only),
			 "shared_pools", shared_json(ctl, only), "parked", parked_json(ctl),
			 "recovered", ctl_recovered_json(ctl),
			 "restart", ctl_restart_json(ctl), "refusals", refusals_json(ctl),
			 "migrate", ctl_migrate_stats_json(ctl));
}

json_t *ctl_list_document(struct tmemd_control *ctl, const char *only)
{
	return json_pack("{s:i, s:o}", "version", TMEMD_CONTROL_PROTO_VERSION,
			 "clients", clients_json(ctl, false, only));
}

int tmemd_control_write_stats(struct tmemd_control *ctl, const char *path)
{
	json_t *doc = ctl_stats_document(ctl, NULL);
	int rc;

	if (!doc)
		return -ENOMEM;
	/* Whoever may read stats through control.sock may read them here,
	 * and nobody else: the socket's mode (without x bits) and group. */
	rc = ctl_write_json_atomic(path, doc, ctl->sock_mode & 0666,
				   ctl->has_admin_gid ? ctl->admin_gid : (gid_t)-1);
	json_decref(doc);
	return rc;
}
