/* SPDX-License-Identifier: MIT */
/*
 * Integration tests of the control plane: the real tmemctl against a
 * real tmemd (local transport), its guests real libtmem connections.
 * Every subcommand and flag, the stats schema key by key, quotas taking
 * effect and surviving a restart, read-only peers, and hostile requests.
 *
 * Local clients have no Xen domain id (stats show "domid": null), so a
 * client is named here where a Xen guest could also be given by domid;
 * a setting stored for a domid is still accepted and kept.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/test_main.h"
#include "integ_util.h"

#define UUID1 "00112233-4455-6677-8899-aabbccddeeff"

static struct host H;

static void setup(void)
{
	host_init(&H);
}

/* A tmemd still running must exit cleanly (status 0). */
static void teardown(void)
{
	host_teardown(&H);
}

static void start(void)
{
	ck_assert_msg(host_start(&H, NULL) == 0, "host did not start");
}

/* ---- the stats schema: every key man/tmemctl.8 documents, with its type --- */

enum kind { INT, BOOL, STR, OBJ, ARR, INT_OR_NULL, STR_OR_NULL, REAL, REAL_OR_NULL,
	    OBJ_OR_NULL };

struct key {
	const char *name;
	enum kind kind;
	const struct key *sub;   /* OBJ: its keys; ARR: each element's keys (NULL: strings) */
};

#define K(n, k) { .name = n, .kind = k }
#define KS(n, k, s) { .name = n, .kind = k, .sub = s }

static const struct key failed_puts_keys[] = {
	K("quota", INT), K("full", INT), K("frozen", INT), { NULL },
};
static const struct key ops_keys[] = {
	K("puts", INT), K("succ_puts", INT), KS("failed_puts", OBJ, failed_puts_keys),
	K("gets", INT), K("succ_gets", INT), K("failed_gets", INT),
	K("flush_pages", INT), K("flush_objects", INT), K("evictions", INT),
	K("admin_flushes", INT), { NULL },
};
/* Issue 30: logical and compressed side by side, by kind. */
static const struct key bytes_keys[] = {
	K("logical_bytes", INT), K("compressed_bytes", INT), { NULL },
};
static const struct key data_keys[] = {
	KS("ephemeral", OBJ, bytes_keys), KS("persistent", OBJ, bytes_keys),
	K("logical_bytes", INT), K("compressed_bytes", INT),
	K("compression_ratio", REAL_OR_NULL), { NULL },
};
static const struct key ops_kind_keys[] = {
	KS("ephemeral", OBJ, ops_keys), KS("persistent", OBJ, ops_keys), { NULL },
};
static const struct key compression_keys[] = {
	K("pages", INT), K("orig_data_size", INT), K("compr_data_size", INT),
	K("same_pages", INT), K("huge_pages", INT), K("compression_ratio", REAL_OR_NULL),
	{ NULL },
};
static const struct key allocator_keys[] = {
	K("mem_used_total", INT), K("overhead_bytes", INT), K("fragmentation_bytes", INT),
	K("compactions", INT), K("pages_compacted", INT), K("decode_errors", INT),
	K("effective_ratio", REAL_OR_NULL), { NULL },
};
/* Issue 29: the host tier, a client's and a pool's. */
static const struct key pool_tier_keys[] = {
	K("pages", INT), K("stored_bytes", INT), K("readbacks", INT), { NULL },
};
static const struct key client_tier_keys[] = {
	K("pages", INT), K("stored_bytes", INT), K("spilled_pages", INT), K("readbacks", INT),
	K("readback_p50_ns", INT), K("readback_p99_ns", INT), K("readback_p50_seconds", REAL),
	K("readback_p99_seconds", REAL), K("free_bytes", INT), { NULL },
};
static const struct key tier_keys[] = {
	K("pages", INT), K("stored_bytes", INT), K("spilled_pages", INT), K("readbacks", INT),
	K("readback_p50_ns", INT), K("readback_p99_ns", INT), K("readback_p50_seconds", REAL),
	K("readback_p99_seconds", REAL), K("configured", BOOL), K("capacity_bytes", INT),
	K("used_bytes", INT), K("free_bytes", INT), K("spilled_bytes", INT), K("writes", INT),
	K("write_errors", INT), K("aborted_pages", INT), K("read_errors", INT),
	K("spill_nsec", INT), K("last_errno", INT), { NULL },
};
static const struct key pool_entry_keys[] = {
	K("id", INT), K("persistent", BOOL), K("shared", BOOL), K("uuid", STR_OR_NULL),
	K("sharers", INT), K("pages", INT), K("objects", INT),
	KS("compression", OBJ, compression_keys), KS("ops", OBJ, ops_keys),
	KS("tier", OBJ, pool_tier_keys), { NULL },
};
static const struct key caps_keys[] = {
	K("ephemeral_max_pages", INT_OR_NULL), K("persistent_max_pages", INT_OR_NULL),
	K("spill_max_pages", INT_OR_NULL), { NULL },
};
static const struct key pages_keys[] = {
	K("ephemeral", INT), K("persistent", INT), { NULL },
};
static const struct key cleancache_keys[] = {
	K("succ_gets", INT), K("failed_gets", INT), K("puts", INT), K("flushes", INT),
	{ NULL },
};
static const struct key frontswap_keys[] = {
	K("succ_stores", INT), K("failed_stores", INT), K("loads", INT),
	K("invalidates", INT), { NULL },
};
/* Issue 30: where each setting comes from, and the file's values. */
static const struct key from_keys[] = {
	K("weight", STR), K("ephemeral_max_pages", STR), K("persistent_max_pages", STR),
	K("compress", STR), K("frozen", STR), K("spill_max_pages", STR), { NULL },
};
static const struct key file_keys[] = {
	K("weight", INT), K("ephemeral_max_pages", INT_OR_NULL),
	K("persistent_max_pages", INT_OR_NULL), K("spill_max_pages", INT_OR_NULL),
	K("compress", STR), { NULL },
};
static const struct key client_keys[] = {
	K("id", INT), K("client", STR), K("name", STR), K("domid", INT_OR_NULL), K("weight", INT),
	K("frozen", BOOL), K("compress", STR), KS("caps", OBJ, caps_keys),
	KS("pages", OBJ, pages_keys), KS("from", OBJ, from_keys), KS("file", OBJ, file_keys),
	KS("ops", OBJ, ops_keys),
	KS("compression", OBJ, compression_keys), KS("data", OBJ, data_keys),
	KS("ops_by_kind", OBJ, ops_kind_keys),
	KS("cleancache", OBJ, cleancache_keys), KS("frontswap", OBJ, frontswap_keys),
	KS("tier", OBJ, client_tier_keys), KS("pools", ARR, pool_entry_keys), { NULL },
};
static const struct key shared_keys[] = {
	K("uuid", STR), K("sharers", INT), K("authorised", ARR),
	K("pages", INT), K("objects", INT), K("logical_bytes", INT), K("compressed_bytes", INT),
	{ NULL },
};
static const struct key pool_keys[] = {
	K("page_size", INT), K("total_pages", INT), K("used_pages", INT),
	K("free_pages", INT), K("ephemeral_pages", INT), K("persistent_pages", INT),
	K("zero_pages", INT), K("stored_bytes", INT), K("metadata_bytes", INT),
	K("evictions", INT), K("freeable_pages", INT),
	KS("compression", OBJ, compression_keys), KS("data", OBJ, data_keys),
	KS("ops", OBJ, ops_kind_keys), KS("allocator", OBJ, allocator_keys),
	KS("tier", OBJ, tier_keys), { NULL },
};
static const struct key restart_keys[] = {
	K("survives_restart", BOOL), K("recovered", BOOL), K("starts", INT),
	K("recovered_at_usec", INT), K("recovery_seconds", REAL), K("pages_recovered", INT),
	K("persistent_pages_recovered", INT), K("ephemeral_pages_recovered", INT),
	K("pages_dropped", INT), K("clients_recovered", INT), K("pools_recovered", INT),
	K("clients_reattached", INT), K("clients_expired", INT), K("clients_detached", INT),
	{ NULL },
};
/* Issue 25: domains parked by xl save/migrate. */
static const struct key park_event_keys[] = {
	K("parked", INT), K("claimed", INT), K("expired", INT), { NULL },
};
static const struct key parked_entry_keys[] = {
	K("client", STR), K("name", STR), K("pages", INT), K("pools", INT),
	K("parked_at_seconds", INT), K("age_seconds", INT), { NULL },
};
static const struct key parked_keys[] = {
	K("clients", INT), KS("pools", OBJ, park_event_keys), KS("pages", OBJ, park_event_keys),
	KS("list", ARR, parked_entry_keys), { NULL },
};
/* Every reason, always (tmemctl(8), refusals). */
static const struct key reason_keys[] = {
	K("total", INT), K("EPROTO", INT), K("EINVAL", INT), K("EPERM", INT), K("EEXIST", INT),
	K("EUSERS", INT), K("ENOMEM", INT), K("ENOSPC", INT), K("ENOSYS", INT), K("ERANGE", INT),
	K("ENOENT", INT), K("EBUSY", INT), K("timeout", INT), K("limit", INT), K("other", INT),
	{ NULL },
};
static const struct key refusal_keys[] = {
	KS("handshakes", OBJ, reason_keys), KS("requests", OBJ, reason_keys), { NULL },
};
/* The elastic pool (daemon/fallow_json.c); null without one, as here. */
static const struct key host_mem_keys[] = {
	K("available_bytes", INT), K("cgroup_limited", BOOL), K("psi", BOOL),
	K("stall_percent", REAL), K("pressure", BOOL), { NULL },
};
static const struct key cause_keys[] = { K("events", INT), K("pages", INT), { NULL } };
static const struct key reclaim_keys[] = {
	KS("pressure", OBJ, cause_keys), KS("low_free", OBJ, cause_keys),
	KS("toolstack", OBJ, cause_keys), KS("admin", OBJ, cause_keys), { NULL },
};
static const struct key xen_mem_keys[] = {
	K("free_bytes", INT), K("dom0_bytes", INT), K("dom0_target_bytes", INT),
	K("dom0_max_bytes", INT), K("ballooned_bytes", INT), { NULL },
};
static const struct key memory_keys[] = {
	K("ceiling_bytes", INT), K("target_bytes", INT), K("used_bytes", INT),
	K("peak_bytes", INT), K("resident_bytes", INT), K("released_bytes", INT),
	K("warmed_bytes", INT), K("cold_take_bytes", INT),
	KS("host", OBJ, host_mem_keys), K("target_changes", INT),
	K("refusing_persistent", BOOL), K("spilling", BOOL), KS("reclaim", OBJ, reclaim_keys),
	KS("xen", OBJ_OR_NULL, xen_mem_keys), { NULL },
};
/* Issue 30: recovered clients not back yet. */
static const struct key recovered_keys[] = {
	K("client", STR), KS("pages", OBJ, pages_keys), { NULL },
};
/* Issue 27: migration between hosts. */
static const struct key migrate_dir_keys[] = {
	K("pages", INT), K("bytes", INT), K("transfer_seconds", REAL), { NULL },
};
static const struct key migrate_xfer_keys[] = { K("out", INT), K("in", INT), { NULL } };
static const struct key migrate_keys[] = {
	K("enabled", BOOL), KS("transfers", OBJ, migrate_xfer_keys),
	KS("sent", OBJ, migrate_dir_keys), KS("received", OBJ, migrate_dir_keys),
	K("refused", INT), K("failed_pulls", INT), K("peers_unreachable", INT), { NULL },
};
static const struct key stats_keys[] = {
	K("version", INT), KS("pool", OBJ, pool_keys), KS("memory", OBJ_OR_NULL, memory_keys), KS("clients", ARR, client_keys),
	KS("shared_pools", ARR, shared_keys), KS("parked", OBJ, parked_keys),
	KS("recovered", ARR, recovered_keys),
	KS("restart", OBJ, restart_keys), KS("refusals", OBJ, refusal_keys),
	KS("migrate", OBJ, migrate_keys), { NULL },
};

static void check_value(json_t *v, const struct key *k, const char *where);

/* obj has exactly the keys in keys, each of the right type. */
static void check_object(json_t *obj, const struct key *keys, const char *where)
{
	size_t n = 0;

	ck_assert_msg(json_is_object(obj), "%s: not an object", where);
	for (const struct key *k = keys; k->name; k++, n++) {
		json_t *v = json_object_get(obj, k->name);

		ck_assert_msg(v != NULL, "%s: missing key %s", where, k->name);
		check_value(v, k, where);
	}
	ck_assert_msg(json_object_size(obj) == n, "%s: %zu keys, %zu documented", where,
		      json_object_size(obj), n);
}

static void check_value(json_t *v, const struct key *k, const char *where)
{
	size_t i;
	json_t *e;

	switch (k->kind) {
	case INT:
		ck_assert_msg(json_is_integer(v) && json_integer_value(v) >= 0, "%s.%s: int",
			      where, k->name);
		break;
	case BOOL:
		ck_assert_msg(json_is_boolean(v), "%s.%s: bool", where, k->name);
		break;
	case STR:
		ck_assert_msg(json_is_string(v), "%s.%s: string", where, k->name);
		break;
	case INT_OR_NULL:
		ck_assert_msg(json_is_integer(v) || json_is_null(v), "%s.%s", where, k->name);
		break;
	case REAL:
		ck_assert_msg(json_is_real(v) && json_real_value(v) >= 0, "%s.%s: real",
			      where, k->name);
		break;
	case STR_OR_NULL:
		ck_assert_msg(json_is_string(v) || json_is_null(v), "%s.%s", where, k->name);
		break;
	case REAL_OR_NULL:
		ck_assert_msg(json_is_null(v) || (json_is_real(v) && json_real_value(v) >= 0),
			      "%s.%s: real or null", where, k->name);
		break;
	case OBJ:
		check_object(v, k->sub, k->name);
		break;
	case OBJ_OR_NULL:
		if (!json_is_null(v))
			check_object(v, k->sub, k->name);
		break;
	case ARR:
		ck_assert_msg(json_is_array(v), "%s.%s: array", where, k->name);
		json_array_foreach(v, i, e) {
			if (k->sub)
				check_object(e, k->sub, k->name);
			else
				ck_assert(json_is_string(e));
		}
		break;
	}
}

/* The client called name in a stats or list document. */
static json_t *client_of(json_t *doc, const char *name)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(doc, "clients"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "name")), name))
			return c;
	ck_abort_msg("no client %s", name);
	return NULL;
}

static long long num(json_t *obj, const char *a, const char *b)
{
	json_t *v = json_object_get(obj, a);

	if (b)
		v = json_object_get(v, b);
	ck_assert_msg(json_is_integer(v), "%s.%s is not an integer", a, b ? b : "");
	return json_integer_value(v);
}

static void expect_exit(struct run r, int status, const char *in_err)
{
	ck_assert_msg(r.status == status, "exit %d, wanted %d; stderr: %s", r.status,
		      status, r.err);
	if (in_err)
		ck_assert_msg(strstr(r.err, in_err) || strstr(r.out, in_err),
			      "output lacks \"%s\": %s%s", in_err, r.out, r.err);
	run_free(&r);
}

/* Two clients with pages in every kind of pool, a shared pool joined. */
static void populate(void)
{
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "add app"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 eph"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 pers"), 1);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 10"), 10);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 1 1 4"), 4);
	ck_assert_int_eq(host_cmd(&H, "gets vm1 0 1 3"), 3);
	ck_assert_int_eq(host_cmd(&H, "gets vm1 0 1 3"), 0);   /* exclusive gets */
	ck_assert_int_eq(host_cmd(&H, "gets vm1 1 1 2"), 2);
	ck_assert_int_eq(host_cmd(&H, "flush vm1 1 1 1"), 1);
}

START_TEST(test_stats_schema)
{
	json_t *doc, *vm1, *app;

	start();
	populate();
	expect_exit(ctl(&H, "shared-auth", UUID1, "vm1", NULL), 0, NULL);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 shared " UUID1), 2);
	doc = ctl_json(&H, "stats", NULL);
	check_object(doc, stats_keys, "stats");
	ck_assert_int_eq(num(doc, "version", NULL), 1);
	/* The harness's pages are same-filled (memset): with the default
	 * compress = lz4 each is kept as its word, with no frame. */
	ck_assert_int_eq(num(doc, "pool", "zero_pages"), 10 - 3 + 3);
	ck_assert_int_eq(num(doc, "pool", "persistent_pages"), 3);
	ck_assert_int_eq(num(doc, "pool", "stored_bytes"), 0);
	ck_assert_int_eq(num(doc, "pool", "used_pages"), 0);
	ck_assert_int_eq(num(json_object_get(doc, "pool"), "compression", "same_pages"), 10);
	ck_assert_int_eq(num(json_object_get(doc, "pool"), "compression", "orig_data_size"),
			 10 * 4096);
	vm1 = client_of(doc, "vm1");
	app = client_of(doc, "app");
	ck_assert(json_is_null(json_object_get(app, "domid")));
	ck_assert(json_is_null(json_object_get(vm1, "domid")));
	ck_assert_int_eq(num(vm1, "pages", "ephemeral"), 7);
	ck_assert_int_eq(num(vm1, "ops", "puts"), 14);
	/* cleancache = the ephemeral pools, frontswap = the persistent ones. */
	ck_assert_int_eq(num(vm1, "cleancache", "puts"), 10);
	ck_assert_int_eq(num(vm1, "cleancache", "succ_gets"), 3);
	ck_assert_int_eq(num(vm1, "cleancache", "failed_gets"), 3);
	ck_assert_int_eq(num(vm1, "frontswap", "succ_stores"), 4);
	ck_assert_int_eq(num(vm1, "frontswap", "loads"), 2);
	ck_assert_int_eq(num(vm1, "frontswap", "invalidates"), 1);
	ck_assert_uint_eq(json_array_size(json_object_get(vm1, "pools")), 3);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "shared_pools")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
		json_object_get(doc, "shared_pools"), 0), "uuid")), UUID1);
	json_decref(doc);
}
END_TEST

START_TEST(test_human_and_json_outputs)
{
	struct run r;
	json_t *doc;

	start();
	populate();
	r = ctl(&H, "status", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "clients: 2, parked: 0\n"));  /* issue 25 */
	run_free(&r);
	doc = ctl_json(&H, "status", NULL);
	ck_assert_int_eq(num(doc, "clients", NULL), 2);
	ck_assert_int_eq(num(doc, "parked_clients", NULL), 0);
	ck_assert_int_eq(num(doc, "pool", "used_pages"), 0); /* 10 same-filled pages */
	ck_assert_int_eq(num(doc, "daemon", "pid"), H.pid);
	json_decref(doc);
	r = ctl(&H, "list", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "vm1"));
	ck_assert_ptr_nonnull(strstr(r.out, "local"));
	run_free(&r);
	doc = ctl_json(&H, "list", NULL);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "clients")), 2);
	json_decref(doc);
	r = ctl(&H, "stats", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "SUCC_PUTS"));
	run_free(&r);
	/* --json after the subcommand works too, and prints one document. */
	r = ctl(&H, "stats", "--json", NULL);
	ck_assert_int_eq(r.status, 0);
	doc = json_loads(r.out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	json_decref(doc);
	run_free(&r);
}
END_TEST

START_TEST(test_prometheus_promtool)
{
	char path[160], cmd[256];
	struct run r;
	FILE *f;

	start();
	populate();
	r = ctl(&H, "stats", "--prometheus", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "tmem_client_logical_bytes{client=\"vm1\",domid=\"\","
				     "kind=\"persistent\"} 12288\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "\ntmem_build_info{version=\"0.1\","));
	ck_assert_ptr_nonnull(strstr(r.out, "\ntmem_start_time_seconds "));
	ck_assert_ptr_nonnull(strstr(r.out, "\ntmem_refused_handshakes_total{reason=\"EPROTO\"} "));
	ck_assert_ptr_nonnull(strstr(r.out, "\ntmem_bad_requests_total{reason=\"ENOSYS\"} "));
	ck_assert_ptr_null(strstr(r.out, "reason=\"total\""));
	ck_assert_ptr_null(strstr(r.out, "_pages"));
	snprintf(path, sizeof(path), "%s/metrics.prom", H.dir);
	f = fopen(path, "w");
	fputs(r.out, f);
	fclose(f);
	run_free(&r);
	ck_assert_msg(system("command -v promtool >/dev/null") == 0,
		      "promtool missing (Debian package prometheus, in mk/deps.list)");
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	ck_assert_int_eq(system(cmd), 0);
	expect_exit(ctl(&H, "stats", "--prometheus", "--json", NULL), 2, "exclude");
}
END_TEST

START_TEST(test_quota_takes_effect_and_survives_restart)
{
	json_t *doc, *vm1;

	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 pers"), 0);
	expect_exit(ctl(&H, "set", "vm1", "--persistent-max", "8K", NULL), 0, NULL);
	doc = ctl_json(&H, "stats", NULL);
	ck_assert_int_eq(num(client_of(doc, "vm1"), "caps", "persistent_max_pages"), 2);
	json_decref(doc);
	/* The next puts: two fit under the cap, the rest are refused as quota. */
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 5"), 2);
	doc = ctl_json(&H, "stats", NULL);
	vm1 = client_of(doc, "vm1");
	ck_assert_int_eq(num(vm1, "pages", "persistent"), 2);
	ck_assert_int_eq(num(json_object_get(vm1, "ops"), "failed_puts", "quota"), 3);
	ck_assert_int_eq(num(vm1, "frontswap", "failed_stores"), 3);
	json_decref(doc);

	host_stop(&H);
	ck_assert_int_eq(H.exit_status, 0);
	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	doc = ctl_json(&H, "list", NULL);
	ck_assert_int_eq(num(client_of(doc, "vm1"), "caps", "persistent_max_pages"), 2);
	json_decref(doc);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 pers"), 0);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 5"), 2);
}
END_TEST

START_TEST(test_ephemeral_cap)
{
	json_t *doc;

	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 eph"), 0);
	expect_exit(ctl(&H, "set", "vm1", "--ephemeral-max", "3p", NULL), 0, NULL);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 10"), 10);
	doc = ctl_json(&H, "stats", NULL);
	ck_assert_int_le(num(client_of(doc, "vm1"), "pages", "ephemeral"), 3);
	json_decref(doc);
}
END_TEST

START_TEST(test_set_every_flag)
{
	json_t *doc, *c;

	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	expect_exit(ctl(&H, "set", "vm1", "--weight", "300", "--ephemeral-max", "1M",
			"--persistent-max", "none", "--compress", "zstd:5", NULL), 0, "applied");
	doc = ctl_json(&H, "list", NULL);
	c = client_of(doc, "vm1");
	ck_assert_int_eq(num(c, "weight", NULL), 300);
	ck_assert_int_eq(num(c, "caps", "ephemeral_max_pages"), 256);
	ck_assert(json_is_null(json_object_get(json_object_get(c, "caps"),
					       "persistent_max_pages")));
	ck_assert_str_eq(json_string_value(json_object_get(c, "compress")), "zstd:5");
	json_decref(doc);
	expect_exit(ctl(&H, "set", "vm1", "--compress", "off", "--ephemeral-max", "unlimited",
			NULL), 0, NULL);
	doc = ctl_json(&H, "set", "vm1", "--weight", "7", NULL);
	ck_assert(json_is_true(json_object_get(doc, "connected")));
	json_decref(doc);
	doc = ctl_json(&H, "list", NULL);
	c = client_of(doc, "vm1");
	ck_assert_str_eq(json_string_value(json_object_get(c, "compress")), "off");
	ck_assert_int_eq(num(c, "weight", NULL), 7);
	ck_assert(json_is_null(json_object_get(json_object_get(c, "caps"),
					       "ephemeral_max_pages")));
	json_decref(doc);
}
END_TEST

START_TEST(test_usage_errors)
{
	expect_exit(ctl(&H, NULL), 2, NULL);
	expect_exit(ctl(&H, "frobnicate", NULL), 2, "unknown command");
	expect_exit(ctl(&H, "set", "vm1", NULL), 2, "nothing to set");
	expect_exit(ctl(&H, "set", NULL), 2, NULL);
	expect_exit(ctl(&H, "set", "vm1", "--weight", "0", NULL), 2, "--weight");
	expect_exit(ctl(&H, "set", "vm1", "--weight", "x", NULL), 2, "--weight");
	expect_exit(ctl(&H, "set", "vm1", "--compress", "maybe", NULL), 2, "--compress");
	/* The old boolean form is gone, with the new values named. */
	expect_exit(ctl(&H, "set", "vm1", "--compress", "on", NULL), 2, "off, lz4, zstd");
	expect_exit(ctl(&H, "set", "vm1", "--ephemeral-max", "1000", NULL), 2, "bad size");
	expect_exit(ctl(&H, "set", "vm1", "--colour", "red", NULL), 2, NULL);
	expect_exit(ctl(&H, "freeze", NULL), 2, NULL);
	expect_exit(ctl(&H, "flush", "a", "b", NULL), 2, NULL);
	expect_exit(ctl(&H, "shared-auth", UUID1, NULL), 2, NULL);
	expect_exit(ctl(&H, "pool-size", "12Q", NULL), 2, "bad size");
	expect_exit(ctl(&H, "pool-size", "0", NULL), 2, "bad size");
	expect_exit(ctl(&H, "release", "12Q", NULL), 2, "bad size");
	expect_exit(ctl(&H, "release", "0", NULL), 2, "bad size");
	expect_exit(ctl(&H, "release", NULL), 2, NULL);
	expect_exit(ctl(&H, "top", "--iterations", "0", NULL), 2, "iterations");
	expect_exit(ctl(&H, "status", "extra", NULL), 2, NULL);
}
END_TEST

START_TEST(test_help_version_socket_selection)
{
	const char *help[] = { tmemctl_bin(), "--help", NULL };
	const char *version[] = { tmemctl_bin(), "--version", NULL };
	const char *sub_help[] = { tmemctl_bin(), "stats", "--help", NULL };
	const char *status[] = { tmemctl_bin(), "status", NULL };
	const char *nosock[] = { tmemctl_bin(), "--socket", "/nonexistent/control.sock",
				 "status", NULL };
	struct run r;

	r = run_argv(help, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "shared-auth"));
	run_free(&r);
	r = run_argv(version, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "tmemctl"));
	run_free(&r);
	r = run_argv(sub_help, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "--prometheus"));
	run_free(&r);
	expect_exit(run_argv(nosock, NULL), 1, "is tmemd running?");
	start();
	/* TMEMCTL_SOCKET picks the socket when --socket is not given. */
	expect_exit(run_argv(status, H.sock), 0, NULL);
}
END_TEST

/*
 * set stores for a name before its client exists; issue 25: a domid is
 * no one's once its domain is gone, so "set 12" with no domain 12 is
 * refused, naming the forms that last, and the live commands (freeze,
 * thaw, flush) refuse a name no attached client has instead of
 * answering "done" and doing nothing.
 */
START_TEST(test_settings_before_connect)
{
	json_t *doc;
	char *text;

	start();
	expect_exit(ctl(&H, "set", "vm9", "--weight", "77", NULL), 0, "when it connects");
	expect_exit(ctl(&H, "set", "12", "--weight", "55", NULL), 1,
		    "no Xen domain 12 is attached; a domain that is not running is named by "
		    "its xl name or uuid:U");
	expect_exit(ctl(&H, "set", "other", "--weight", "55", NULL), 0, NULL);
	expect_exit(ctl(&H, "freeze", "vm9", NULL), 1, "no attached client \"vm9\"");
	expect_exit(ctl(&H, "thaw", "vm9", NULL), 1, "no attached client \"vm9\"");
	expect_exit(ctl(&H, "flush", "vm9", NULL), 1, "no attached client \"vm9\"");
	expect_exit(ctl(&H, "stats", "vm9", NULL), 1, "no attached client \"vm9\"");
	expect_exit(ctl(&H, "list", "vm9", NULL), 1, "no attached client \"vm9\"");
	ck_assert_int_eq(host_cmd(&H, "add vm9"), 0);
	ck_assert_int_eq(host_cmd(&H, "add other"), 0);
	doc = ctl_json(&H, "list", NULL);
	ck_assert_int_eq(num(client_of(doc, "vm9"), "weight", NULL), 77);
	ck_assert(json_is_false(json_object_get(client_of(doc, "vm9"), "frozen")));
	ck_assert_int_eq(num(client_of(doc, "other"), "weight", NULL), 55);
	json_decref(doc);
	doc = ctl_json(&H, "list", "--all", NULL);
	text = json_dumps(doc, 0);
	ck_assert_ptr_null(strstr(text, "domid:12"));
	free(text);
	json_decref(doc);
}
END_TEST

START_TEST(test_freeze_thaw)
{
	json_t *doc, *c;

	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 eph"), 0);
	expect_exit(ctl(&H, "freeze", "vm1", NULL), 0, NULL);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 4"), 0);
	doc = ctl_json(&H, "stats", NULL);
	c = client_of(doc, "vm1");
	ck_assert(json_is_true(json_object_get(c, "frozen")));
	ck_assert_int_eq(num(json_object_get(c, "ops"), "failed_puts", "frozen"), 4);
	json_decref(doc);
	/* Frozen survives a restart too. */
	host_stop(&H);
	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 eph"), 0);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 4"), 0);
	expect_exit(ctl(&H, "thaw", "vm1", NULL), 0, NULL);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 4"), 4);
	doc = ctl_json(&H, "thaw", "vm1", NULL);
	ck_assert(json_is_true(json_object_get(doc, "connected")));
	json_decref(doc);
}
END_TEST

START_TEST(test_flush_keeps_persistent)
{
	json_t *doc;
	struct run r;

	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 eph"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 pers"), 1);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 10"), 10);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 1 1 3"), 3);
	r = ctl(&H, "flush", "vm1", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "dropped 10 ephemeral pages, kept 3 persistent"));
	run_free(&r);
	doc = ctl_json(&H, "stats", NULL);
	ck_assert_int_eq(num(client_of(doc, "vm1"), "pages", "ephemeral"), 0);
	ck_assert_int_eq(num(client_of(doc, "vm1"), "pages", "persistent"), 3);
	json_decref(doc);
	ck_assert_int_eq(host_cmd(&H, "gets vm1 1 1 3"), 3);
	doc = ctl_json(&H, "flush", "vm1", NULL);
	ck_assert_int_eq(num(doc, "evicted_pages", NULL), 0);
	json_decref(doc);
	expect_exit(ctl(&H, "flush", "nosuch", NULL), 1, "no attached client \"nosuch\"");
}
END_TEST

START_TEST(test_shared_auth)
{
	json_t *doc, *sp;

	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 shared " UUID1), -EPERM);
	expect_exit(ctl(&H, "shared-auth", UUID1, "vm1", NULL), 0, NULL);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 shared " UUID1), 0);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 7 2"), 2);
	doc = ctl_json(&H, "stats", NULL);
	sp = json_array_get(json_object_get(doc, "shared_pools"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(sp, "uuid")), UUID1);
	ck_assert_int_eq(num(sp, "sharers", NULL), 1);
	ck_assert_int_eq(num(sp, "pages", NULL), 2);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(sp, "authorised"), 0)),
			 "vm1");
	json_decref(doc);
	/* The authorisation is re-applied to the store after a restart. */
	host_stop(&H);
	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 shared " UUID1), 0);
	expect_exit(ctl(&H, "shared-auth", "--revoke", UUID1, "vm1", NULL), 0, "no longer");
	ck_assert_int_eq(host_cmd(&H, "remove vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 shared " UUID1), -EPERM);
	expect_exit(ctl(&H, "shared-auth", "not-a-uuid", "vm1", NULL), 2, "UUID");
	host_stop(&H);
	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 shared " UUID1), -EPERM);
}
END_TEST

/* A pool size tmemd cannot grow to: it reserves up to the host's RAM. */
static const char *beyond_ram(void)
{
	static char buf[32];
	unsigned long long ram = (unsigned long long)sysconf(_SC_PHYS_PAGES) *
				 (unsigned long long)sysconf(_SC_PAGESIZE);

	snprintf(buf, sizeof(buf), "%lluG", 2 * (ram >> 30) + 2);
	return buf;
}

START_TEST(test_pool_size)
{
	json_t *doc;

	start();
	doc = ctl_json(&H, "pool-size", "8M", NULL);
	ck_assert_int_eq(num(doc, "total_pages", NULL), 2048);
	json_decref(doc);
	expect_exit(ctl(&H, "pool-size", "2M", NULL), 0, NULL);
	doc = ctl_json(&H, "status", NULL);
	ck_assert_int_eq(num(doc, "pool", "total_pages"), 512);
	json_decref(doc);
	expect_exit(ctl(&H, "pool-size", beyond_ram(), NULL), 1, "pool-size");
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 pers"), 0);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 100"), 100);
	expect_exit(ctl(&H, "pool-size", "50p", NULL), 1, "persistent");
}
END_TEST

START_TEST(test_top)
{
	struct timespec a, b;
	struct run r;
	char *first;

	start();
	populate();
	clock_gettime(CLOCK_MONOTONIC, &a);
	r = ctl(&H, "top", "--iterations", "2", NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ck_assert_int_eq(r.status, 0);
	first = strstr(r.out, "vm1");
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_nonnull(strstr(first + 1, "vm1"));  /* two frames */
	ck_assert_ptr_nonnull(strstr(r.out, "PUTS/s"));
	ck_assert_int_ge(b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9, 0.9);
	run_free(&r);
	/* --json: one stats document per frame, one per line. */
	r = ctl(&H, "top", "--iterations", "2", "--json", NULL);
	ck_assert_int_eq(r.status, 0);
	first = strchr(r.out, '\n');
	ck_assert_ptr_nonnull(first);
	*first = '\0';
	json_t *doc = json_loads(r.out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(num(doc, "version", NULL), 1);
	json_decref(doc);
	doc = json_loads(first + 1, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	json_decref(doc);
	run_free(&r);
}
END_TEST

/* ---- peers ------------------------------------------------------------------ */

static const char *const nobody[] = { "setpriv", "--reuid=65534", "--regid=65534",
				      "--clear-groups", NULL };
static const char *const nobody_adm[] = { "setpriv", "--reuid=65534", "--regid=65534",
					  "--groups=4", NULL };

START_TEST(test_readonly_peer)
{
	ck_assert_int_eq(host_start(&H, "--admin-group", "adm", "--socket-mode", "0666", NULL), 0);
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	expect_exit(ctl_as(&H, nobody, "stats", NULL), 0, NULL);
	expect_exit(ctl_as(&H, nobody, "list", "--json", NULL), 0, NULL);
	expect_exit(ctl_as(&H, nobody, "status", NULL), 0, NULL);
	expect_exit(ctl_as(&H, nobody, "set", "vm1", "--weight", "5", NULL), 1,
		    "only root or members of the admin group");
	expect_exit(ctl_as(&H, nobody, "freeze", "vm1", NULL), 1, "Operation not permitted");
	expect_exit(ctl_as(&H, nobody, "pool-size", "8M", NULL), 1, "admin group");
	expect_exit(ctl_as(&H, nobody, "shared-auth", UUID1, "vm1", NULL), 1, "admin group");
	/* The same uid with the admin group as a supplementary group may write. */
	expect_exit(ctl_as(&H, nobody_adm, "set", "vm1", "--weight", "5", NULL), 0, NULL);
}
END_TEST

START_TEST(test_socket_mode_and_group)
{
	struct stat st;

	ck_assert_int_eq(host_start(&H, "--admin-group", "adm", NULL), 0);
	ck_assert_int_eq(stat(H.sock, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0660);
	ck_assert_uint_eq(st.st_gid, 4);
	/* 0660: a peer outside the group cannot even connect. */
	expect_exit(ctl_as(&H, nobody, "stats", NULL), 1, "Permission denied");
	expect_exit(ctl_as(&H, nobody_adm, "stats", NULL), 0, NULL);
}
END_TEST

START_TEST(test_unknown_group_refuses_start)
{
	ck_assert_int_eq(host_start(&H, "--admin-group", "no-such-group-tmemd", NULL), -1);
	ck_assert_int_eq(H.exit_status, 1);
}
END_TEST

START_TEST(test_connection_limit)
{
	int a, b, c;
	json_t *reply;

	ck_assert_int_eq(host_start(&H, "--max-per-uid", "2", NULL), 0);
	a = raw_connect(&H);
	b = raw_connect(&H);
	raw_send(a, "{\"version\":1,\"cmd\":\"status\"}\n", 29);
	json_decref(raw_reply(a));  /* both are accepted by now */
	c = raw_connect(&H);
	reply = raw_reply(c);
	ck_assert_int_eq(reply_errno(reply), EUSERS);
	json_decref(reply);
	ck_assert_ptr_null(raw_reply(c));   /* and closed */
	close(c);
	close(b);
	expect_exit(ctl(&H, "status", NULL), 0, NULL);
	close(a);
}
END_TEST

/* ---- hostile requests --------------------------------------------------------- */

static void expect_error_reply(int fd, const char *req, int errnum)
{
	json_t *reply;

	raw_send(fd, req, strlen(req));
	reply = raw_reply(fd);
	ck_assert_msg(reply != NULL, "no reply to %s", req);
	ck_assert_msg(reply_errno(reply) == errnum, "%s: errno %d, wanted %d", req,
		      reply_errno(reply), errnum);
	json_decref(reply);
}

START_TEST(test_bad_requests_get_error_replies)
{
	size_t big = 70 * 1024;
	char *huge = malloc(big + 1);
	json_t *reply;
	int fd;

	start();
	fd = raw_connect(&H);
	expect_error_reply(fd, "{\"version\":1,\"cmd\":\n", EBADMSG);
	expect_error_reply(fd, "not json at all\n", EBADMSG);
	expect_error_reply(fd, "{\"version\":1,\"cmd\":\"launch-missiles\"}\n", EOPNOTSUPP);
	expect_error_reply(fd, "{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":5,"
			   "\"weight\":1}}\n", EINVAL);
	expect_error_reply(fd, "{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\","
			   "\"weight\":\"heavy\"}}\n", EINVAL);
	expect_error_reply(fd, "{\"version\":1,\"cmd\":\"stats\",\"args\":{\"x\":1}}\n", EINVAL);
	expect_error_reply(fd, "{\"version\":2,\"cmd\":\"stats\"}\n", EPROTONOSUPPORT);
	expect_error_reply(fd, "{\"cmd\":\"stats\"}\n", EPROTO);
	/* The same connection still serves good requests, pipelined too. */
	raw_send(fd, "{\"version\":1,\"cmd\":\"status\"}\n{\"version\":1,\"cmd\":\"list\"}\n", 58);
	for (int i = 0; i < 2; i++) {
		reply = raw_reply(fd);
		ck_assert_int_eq(reply_errno(reply), 0);
		json_decref(reply);
	}
	/* Oversized: refused before parsing, then the connection closes. */
	ck_assert_ptr_nonnull(huge);
	memset(huge, '[', big);
	huge[big] = '\n';
	raw_send(fd, huge, big + 1);
	reply = raw_reply(fd);
	ck_assert_int_eq(reply_errno(reply), EMSGSIZE);
	json_decref(reply);
	ck_assert_ptr_null(raw_reply(fd));
	close(fd);
	free(huge);
	/* tmemd keeps serving. */
	expect_exit(ctl(&H, "status", NULL), 0, NULL);
}
END_TEST

/* Many pipelined requests whose replies overflow the socket buffer: the
 * server holds one reply at a time (EPOLLOUT) and answers all, in order. */
START_TEST(test_pipelined_replies_in_order)
{
	static const char req[] = "{\"version\":1,\"cmd\":\"stats\"}\n";
	const int nr = 100;
	size_t total = 0;
	int fd;

	start();
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(host_cmd(&H, "add vm%d", i), 0);
		ck_assert_int_eq(host_cmd(&H, "pool vm%d eph", i), 0);
		ck_assert_int_eq(host_cmd(&H, "pool vm%d pers", i), 1);
	}
	fd = raw_connect(&H);
	for (int i = 0; i < nr; i++)
		raw_send(fd, req, sizeof(req) - 1);
	raw_send(fd, "{\"version\":1,\"cmd\":\"list\"}\n", 28);
	usleep(200 * 1000);   /* let the server fill the socket and wait */
	/* A stuck peer does not block anyone else. */
	expect_exit(ctl(&H, "status", NULL), 0, NULL);
	for (int i = 0; i < nr; i++) {
		json_t *reply = raw_reply(fd);
		char *text;

		ck_assert_int_eq(reply_errno(reply), 0);
		ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(reply, "result"),
								  "clients")), 8);
		text = json_dumps(reply, JSON_COMPACT);
		total += strlen(text);
		free(text);
		json_decref(reply);
	}
	ck_assert_uint_gt(total, 640 * 1024); /* > both socket buffers */
	json_t *last = raw_reply(fd);
	ck_assert_ptr_nonnull(json_object_get(json_object_get(last, "result"), "clients"));
	ck_assert_ptr_null(json_object_get(json_object_get(last, "result"), "pool"));
	json_decref(last);
	close(fd);
}
END_TEST

/* A peer that sends half a request and stalls holds only its own buffer. */
START_TEST(test_partial_request_does_not_block)
{
	int fd;
	json_t *reply;

	start();
	fd = raw_connect(&H);
	raw_send(fd, "{\"version\":1,", 13);
	expect_exit(ctl(&H, "status", NULL), 0, NULL);
	raw_send(fd, "\"cmd\":\"status\"}\n", 16);
	reply = raw_reply(fd);
	ck_assert_int_eq(reply_errno(reply), 0);
	json_decref(reply);
	close(fd);
}
END_TEST

START_TEST(test_corrupt_state_refuses_start)
{
	char path[160], errpath[160], buf[512] = "";
	FILE *f;

	ck_assert_int_eq(mkdir(H.state, 0700), 0);
	snprintf(path, sizeof(path), "%s/state.json", H.state);
	f = fopen(path, "w");
	fputs("{\"version\":1,\"clients\":{\"vm1\":{\"weight\":", f);
	fclose(f);
	ck_assert_int_eq(host_start(&H, NULL), -1);
	ck_assert_int_eq(H.exit_status, 1);
	snprintf(errpath, sizeof(errpath), "%s/host.err", H.dir);
	f = fopen(errpath, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, f), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "state file") && strstr(buf, path), "stderr: %s", buf);
}
END_TEST

START_TEST(test_state_file_written_atomically)
{
	char path[160];
	struct stat st;
	json_t *doc;

	start();
	expect_exit(ctl(&H, "set", "vm1", "--weight", "9", NULL), 0, NULL);
	snprintf(path, sizeof(path), "%s/state.json", H.state);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	doc = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(num(json_object_get(json_object_get(doc, "clients"), "vm1"),
			     "weight", NULL), 9);
	json_decref(doc);
}
END_TEST

static Suite *integ_suite(void)
{
	Suite *s = suite_create("control-integration");
	TCase *tc = tcase_create("tmemctl");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_stats_schema);
	tcase_add_test(tc, test_human_and_json_outputs);
	tcase_add_test(tc, test_prometheus_promtool);
	tcase_add_test(tc, test_quota_takes_effect_and_survives_restart);
	tcase_add_test(tc, test_ephemeral_cap);
	tcase_add_test(tc, test_set_every_flag);
	tcase_add_test(tc, test_usage_errors);
	tcase_add_test(tc, test_help_version_socket_selection);
	tcase_add_test(tc, test_settings_before_connect);
	tcase_add_test(tc, test_freeze_thaw);
	tcase_add_test(tc, test_flush_keeps_persistent);
	tcase_add_test(tc, test_shared_auth);
	tcase_add_test(tc, test_pool_size);
	tcase_add_test(tc, test_top);
	/* Running a client as another uid, and chgrp of the socket, need root. */
	if (tmem_test_have_root("test_readonly_peer, test_socket_mode_and_group",
				"a client as another uid, chgrp of the socket")) {
		tcase_add_test(tc, test_readonly_peer);
		tcase_add_test(tc, test_socket_mode_and_group);
	}
	tcase_add_test(tc, test_unknown_group_refuses_start);
	tcase_add_test(tc, test_connection_limit);
	tcase_add_test(tc, test_bad_requests_get_error_replies);
	tcase_add_test(tc, test_pipelined_replies_in_order);
	tcase_add_test(tc, test_partial_request_does_not_block);
	tcase_add_test(tc, test_corrupt_state_refuses_start);
	tcase_add_test(tc, test_state_file_written_atomically);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(integ_suite(), 0);
}
