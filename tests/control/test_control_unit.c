/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the control plane's pure parts: the request parser and
 * validator, UUID text, the state file (round trip, atomic save,
 * corruption), tmemctl's size parsing and its Prometheus output (checked
 * by a strict parser of the text exposition format below).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/test_main.h"
#include "control/control.h"
#include "control/ctl_proto.h"
#include "control/ctl_state.h"
#include "tmemctl/tmemctl.h"
#include "tmem_size.h"

static int parse(const char *text, struct ctl_request *req, struct ctl_err *err)
{
	return ctl_request_parse(text, strlen(text), req, err);
}

/* Expects text to be refused with errnum and a message containing what. */
static void expect_refused(const char *text, int errnum, const char *what)
{
	struct ctl_request req;
	struct ctl_err err;

	ck_assert_int_eq(parse(text, &req, &err), -errnum);
	ck_assert_int_eq(err.errnum, errnum);
	ck_assert_msg(strstr(err.msg, what), "\"%s\" lacks \"%s\"", err.msg, what);
}

START_TEST(test_parse_ok)
{
	struct ctl_request req;
	struct ctl_err err;

	ck_assert_int_eq(parse("{\"version\":1,\"cmd\":\"stats\"}", &req, &err), 0);
	ck_assert_int_eq(req.cmd, CTL_STATS);
	ck_assert(!ctl_cmd_writes(req.cmd));
	ck_assert_int_eq(parse("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"5\","
			       "\"weight\":200,\"ephemeral_max_pages\":null,"
			       "\"persistent_max_pages\":7,\"compress\":\"zstd:4\"}}", &req, &err), 0);
	ck_assert_int_eq(req.cmd, CTL_SET);
	ck_assert(ctl_cmd_writes(req.cmd));
	ck_assert_str_eq(req.client, "domid:5"); /* canonical: one key per domain */
	ck_assert_uint_eq(req.s.v.weight, 200);
	ck_assert_uint_eq(req.s.v.ephemeral_max, TMEM_NO_CAP);
	ck_assert_uint_eq(req.s.v.persistent_max, 7);
	ck_assert(req.s.v.compress.algo == TMEM_COMPRESS_ZSTD && req.s.v.compress.level == 4);
	ck_assert_uint_eq(req.s.has, CTL_HAS_WEIGHT | CTL_HAS_EPH_MAX | CTL_HAS_PERS_MAX |
			  CTL_HAS_COMPRESS);
	ck_assert_int_eq(parse("{\"cmd\":\"shared-auth\",\"version\":1,\"args\":{\"uuid\":"
			       "\"00112233-4455-6677-8899-aabbccddeeff\",\"client\":\"vm\","
			       "\"revoke\":true}}", &req, &err), 0);
	ck_assert(req.revoke);
	ck_assert_uint_eq(req.uuid.lo, 0x7766554433221100ull);
	ck_assert_int_eq(parse("{\"version\":1,\"cmd\":\"pool-size\",\"args\":{\"pages\":5}}",
			       &req, &err), 0);
	ck_assert_uint_eq(req.pages, 5);
}
END_TEST

START_TEST(test_parse_refused)
{
	expect_refused("{\"version\":1,\"cmd\":", EBADMSG, "malformed JSON");
	expect_refused("[1,2]", EBADMSG, "JSON object");
	expect_refused("{\"cmd\":\"stats\"}", EPROTO, "version");
	expect_refused("{\"version\":\"1\",\"cmd\":\"stats\"}", EPROTO, "version");
	/* The version is checked before anything else, even the command. */
	expect_refused("{\"version\":2,\"cmd\":\"nonsense\"}", EPROTONOSUPPORT, "version 2");
	expect_refused("{\"version\":1,\"cmd\":\"nonsense\"}", EOPNOTSUPP, "unknown command");
	expect_refused("{\"version\":1,\"cmd\":7}", EINVAL, "cmd");
	expect_refused("{\"version\":1,\"cmd\":\"stats\",\"x\":1}", EINVAL, "unknown key");
	expect_refused("{\"version\":1,\"cmd\":\"stats\",\"args\":{\"a\":1}}", EINVAL,
		       "unknown key \"a\"");
	expect_refused("{\"version\":1,\"cmd\":\"stats\",\"args\":[]}", EINVAL, "object");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\"}}", EINVAL,
		       "nothing to set");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"weight\":3}}", EINVAL,
		       "missing key \"client\"");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\","
		       "\"weight\":\"3\"}}", EINVAL, "weight: expected an integer");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\","
		       "\"weight\":0}}", ERANGE, "out of range");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\","
		       "\"weight\":10001}}", ERANGE, "out of range");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\","
		       "\"compress\":1}}", EINVAL, "want off, lz4, zstd");
	/* The old boolean form: refused, naming the new values. */
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\","
		       "\"compress\":true}}", EINVAL, "on/off is gone: want off, lz4");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\","
		       "\"compress\":\"zstd:20\"}}", EINVAL, "zstd:LEVEL (1..19)");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\","
		       "\"frozen\":true}}", EINVAL, "unknown key \"frozen\"");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"a\","
		       "\"ephemeral_max_pages\":-1}}", ERANGE, "out of range");
	expect_refused("{\"version\":1,\"cmd\":\"freeze\",\"args\":{\"client\":\"\"}}",
		       EINVAL, "client");
	/* Issue 19 item 11: CLIENT is a principal.  Before, "domid:05",
	 * "05" and "domid:x" were names, stored under keys no domain's
	 * settings are looked up by. */
	expect_refused("{\"version\":1,\"cmd\":\"freeze\",\"args\":{\"client\":\"domid:05\"}}",
		       EINVAL, "no leading zeros");
	expect_refused("{\"version\":1,\"cmd\":\"freeze\",\"args\":{\"client\":\"05\"}}",
		       EINVAL, "bad client \"05\"");
	expect_refused("{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"domid:x\","
		       "\"weight\":2}}", EINVAL, "not a domid");
	expect_refused("{\"version\":1,\"cmd\":\"shared-auth\",\"args\":{\"client\":\"99999\","
		       "\"uuid\":\"00112233-4455-6677-8899-aabbccddeeff\"}}", EINVAL, "0..32751");
	expect_refused("{\"version\":1,\"cmd\":\"freeze\",\"args\":{\"client\":\"a b\"}}",
		       EINVAL, "client");
	expect_refused("{\"version\":1,\"cmd\":\"shared-auth\",\"args\":{\"client\":\"a\","
		       "\"uuid\":\"not-a-uuid\"}}", EINVAL, "uuid");
	expect_refused("{\"version\":1,\"cmd\":\"pool-size\",\"args\":{\"pages\":0}}",
		       ERANGE, "pages");
	expect_refused("{\"version\":1,\"version\":1,\"cmd\":\"stats\"}", EBADMSG,
		       "malformed");
}
END_TEST

START_TEST(test_parse_oversized)
{
	size_t len = TMEMD_CONTROL_MAX_MSG + 1;
	char *big = malloc(len);
	struct ctl_request req;
	struct ctl_err err;

	ck_assert_ptr_nonnull(big);
	memset(big, ' ', len);
	ck_assert_int_eq(ctl_request_parse(big, len, &req, &err), -EMSGSIZE);
	free(big);
}
END_TEST

START_TEST(test_uuid)
{
	struct tmem_uuid u;
	char text[TMEM_UUID_TEXT];

	ck_assert_int_eq(tmem_uuid_parse("00112233-4455-6677-8899-AABBCCDDEEFF", &u), 0);
	/* proto/: lo = bytes 0..7 of the RFC 4122 byte string, little-endian. */
	ck_assert_uint_eq(u.lo, 0x7766554433221100ull);
	ck_assert_uint_eq(u.hi, 0xffeeddccbbaa9988ull);
	tmem_uuid_format(&u, text);
	ck_assert_str_eq(text, "00112233-4455-6677-8899-aabbccddeeff");
	ck_assert_int_eq(tmem_uuid_parse("00112233-4455-6677-8899-aabbccddeef", &u), -EINVAL);
	ck_assert_int_eq(tmem_uuid_parse("00112233-4455-6677-8899-aabbccddeefg", &u), -EINVAL);
	ck_assert_int_eq(tmem_uuid_parse("0011223304455-6677-8899-aabbccddeeff", &u), -EINVAL);
	ck_assert_int_eq(tmem_uuid_parse("00112233-4455-6677-8899-aabbccddeeff0", &u), -EINVAL);
	ck_assert_int_eq(tmem_uuid_parse("", &u), -EINVAL);
}
END_TEST

START_TEST(test_reply_lines)
{
	struct ctl_err err;
	char *line;

	ctl_err_set(&err, EPERM, "no \"way\"");
	line = ctl_reply_error(&err);
	ck_assert_str_eq(line, "{\"version\":1,\"error\":{\"errno\":1,\"message\":"
			 "\"no \\\"way\\\"\"}}\n");
	free(line);
	line = ctl_reply_result(json_pack("{s:i}", "a", 1));
	ck_assert_str_eq(line, "{\"version\":1,\"result\":{\"a\":1}}\n");
	free(line);
}
END_TEST

/* A malformed request quoting bytes that are not UTF-8 (fuzz-control
 * found it) still gets an error line, with the bytes shown as '?'. */
START_TEST(test_reply_error_bad_utf8)
{
	static const char req[] = "{\"version\":1,\"cmd\":\"stats\",\"args\\\xc5\x84\xdd\":1}";
	struct ctl_request parsed;
	struct ctl_err err;
	char *line;

	ck_assert_int_lt(ctl_request_parse(req, sizeof(req) - 1, &parsed, &err), 0);
	line = ctl_reply_error(&err);
	ck_assert_ptr_nonnull(line);
	ck_assert_ptr_nonnull(strstr(line, "malformed JSON"));
	free(line);
	ctl_err_set(&err, EINVAL, "cut in two: \xc3");
	line = ctl_reply_error(&err);
	ck_assert_ptr_nonnull(line);
	ck_assert_ptr_nonnull(strstr(line, "cut in two: ?\""));
	free(line);
}
END_TEST

/* ---- state file ---------------------------------------------------------- */

static char state_dir[64], state_path[128];

static void state_setup(void)
{
	snprintf(state_dir, sizeof(state_dir), "/tmp/tmemctl-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(state_dir));
	snprintf(state_path, sizeof(state_path), "%s/state.json", state_dir);
}

static void state_teardown(void)
{
	unlink(state_path);
	rmdir(state_dir);
}

static void write_file(const char *text)
{
	FILE *f = fopen(state_path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_state_missing_is_empty)
{
	struct ctl_state st = { 0 };
	struct ctl_err err;

	ck_assert_int_eq(ctl_state_load(&st, state_path, &err), 0);
	ck_assert_uint_eq(st.nr_clients + st.nr_auths, 0);
}
END_TEST

START_TEST(test_state_round_trip)
{
	struct ctl_state st = { 0 }, back = { 0 };
	struct ctl_settings s = { .has = CTL_HAS_WEIGHT | CTL_HAS_PERS_MAX | CTL_HAS_FROZEN,
				  .v = { .weight = 300, .persistent_max = 9, .frozen = true } };
	struct ctl_settings s2 = { .has = CTL_HAS_EPH_MAX | CTL_HAS_COMPRESS,
				   .v = { .ephemeral_max = TMEM_NO_CAP,
					  .compress = { TMEM_COMPRESS_ZSTD, 2 } } };
	struct tmem_uuid u = { 1, 2 };
	struct tmem_client_settings out = { .weight = 100, .ephemeral_max = 5 };
	const struct ctl_settings *got;
	struct ctl_err err;
	struct stat sb;

	ck_assert_int_eq(ctl_state_update(&st, "vm1", &s), 0);
	ck_assert_int_eq(ctl_state_update(&st, "vm1", &s2), 0);
	ck_assert_int_eq(ctl_state_update(&st, "domid:7", &s2), 0);
	ck_assert_int_eq(ctl_state_update(&st, "bad name", &s2), -EINVAL);
	ck_assert_int_eq(ctl_state_auth(&st, &u, "vm1", true), 0);
	ck_assert_int_eq(ctl_state_auth(&st, &u, "vm1", true), 0);
	ck_assert_int_eq(ctl_state_auth(&st, &u, "vm2", true), 0);
	ck_assert_int_eq(ctl_state_auth(&st, &u, "vm2", false), 0);
	ck_assert_int_eq(ctl_state_save(&st, state_path, &err), 0);
	ck_assert_int_eq(stat(state_path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0600);
	ck_assert_int_eq(ctl_state_load(&back, state_path, &err), 0);
	ck_assert_uint_eq(back.nr_clients, 2);
	ck_assert_uint_eq(back.nr_auths, 1);
	ck_assert_str_eq(back.auths[0].principal, "vm1");
	ck_assert_uint_eq(back.auths[0].uuid.hi, 2);
	got = ctl_state_lookup(&back, "vm1");
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(got->has, s.has | s2.has);
	ctl_settings_apply(got, &out);
	ck_assert_uint_eq(out.weight, 300);
	ck_assert_uint_eq(out.persistent_max, 9);
	ck_assert_uint_eq(out.ephemeral_max, TMEM_NO_CAP);
	ck_assert(out.frozen && out.compress.algo == TMEM_COMPRESS_ZSTD && out.compress.level == 2);
	ck_assert_ptr_null(ctl_state_lookup(&back, "vm2"));
	ctl_state_free(&st);
	ctl_state_free(&back);
}
END_TEST

static const char *const corrupt_files[] = {
	"{\"version\":1,\"clients\":{",                              /* truncated */
	"",                                                          /* empty */
	"[]",                                                        /* not an object */
	"{\"version\":3}",                                           /* version */
	"{\"version\":0}",
	"{\"clients\":{}}",                                          /* no version */
	"{\"version\":1,\"extra\":1}",                               /* unknown key */
	"{\"version\":1,\"clients\":{\"vm\":{\"weight\":\"x\"}}}",   /* type */
	"{\"version\":1,\"clients\":{\"vm\":{\"weight\":0}}}",       /* range */
	"{\"version\":1,\"clients\":{\"vm\":{\"colour\":1}}}",       /* unknown setting */
	"{\"version\":1,\"clients\":{\"a b\":{}}}",                  /* bad name */
	"{\"version\":1,\"shared_auth\":[{\"uuid\":\"x\",\"client\":\"a\"}]}",
	"{\"version\":1,\"shared_auth\":[{\"client\":\"a\"}]}",
	"{\"version\":1,\"shared_auth\":{}}",
};

/*
 * Issue 19 item 11: a key or principal that is not canonical principal
 * text is refused, saying why, in both versions: before, "4242" loaded
 * as the name of a client no one can be, and "domid:05" as a key no
 * domain's settings are ever looked up by.
 */
static const struct {
	const char *file, *why;
} bad_principals[] = {
	{ "{\"version\":2,\"clients\":{\"4242\":{}}}", "domid:N here" },
	{ "{\"version\":1,\"clients\":{\"4242\":{\"weight\":5}}}", "domid:N here" },
	{ "{\"version\":2,\"clients\":{\"domid:05\":{}}}", "no leading zeros" },
	{ "{\"version\":2,\"clients\":{\"domid:32752\":{}}}", "0..32751" },
	{ "{\"version\":2,\"clients\":{\"domid:x\":{}}}", "not a domid" },
	{ "{\"version\":2,\"clients\":{\"domid:\":{}}}", "not a domid" },
	{ "{\"version\":2,\"shared_auth\":[{\"uuid\":\"00112233-4455-6677-8899-aabbccddeeff\","
	  "\"client\":\"5\"}]}", "shared_auth[0]: bad client \"5\"" },
	{ "{\"version\":1,\"shared_auth\":[{\"uuid\":\"00112233-4455-6677-8899-aabbccddeeff\","
	  "\"client\":\"domid:7a\"}]}", "not a domid" },
};

/* A state file of text is refused, naming the file and saying why. */
static void expect_state_refused(const char *text, const char *why)
{
	struct ctl_state st = { 0 };
	struct ctl_err err;

	write_file(text);
	ck_assert_int_lt(ctl_state_load(&st, state_path, &err), 0);
	ck_assert_msg(strstr(err.msg, state_path), "message names the file: %s", err.msg);
	ck_assert_msg(strstr(err.msg, why), "wanted \"%s\": %s", why, err.msg);
	ck_assert_uint_eq(st.nr_clients + st.nr_auths, 0);
}

START_TEST(test_state_bad_principal)
{
	expect_state_refused(bad_principals[_i].file, bad_principals[_i].why);
}
END_TEST

/* What older tmemd wrote still loads ("domid:N" meant domain N then
 * too), its names are counted for the daemon's notice that they now
 * name local clients only, and the next save writes version 2. */
START_TEST(test_state_version1_loads)
{
	struct ctl_state st = { 0 };
	struct ctl_err err;
	char text[512];
	FILE *f;

	write_file("{\"version\":1,\"clients\":{\"domid:5\":{\"weight\":50},"
		   "\"web1\":{\"frozen\":true}},\"shared_auth\":[{\"uuid\":"
		   "\"00112233-4455-6677-8899-aabbccddeeff\",\"client\":\"web1\"},"
		   "{\"uuid\":\"00112233-4455-6677-8899-aabbccddeeff\",\"client\":\"domid:5\"}]}");
	ck_assert_int_eq(ctl_state_load(&st, state_path, &err), 0);
	ck_assert_uint_eq(ctl_state_lookup(&st, "domid:5")->v.weight, 50);
	ck_assert(ctl_state_lookup(&st, "web1")->v.frozen);
	ck_assert_uint_eq(st.nr_auths, 2);
	ck_assert_uint_eq(st.legacy_names, 2);
	ck_assert_int_eq(ctl_state_save(&st, state_path, &err), 0);
	ctl_state_free(&st);
	f = fopen(state_path, "r");
	ck_assert_ptr_nonnull(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "\"version\": 2"));
	ck_assert_int_eq(ctl_state_load(&st, state_path, &err), 0);
	ck_assert_uint_eq(st.legacy_names, 0);
	ck_assert_uint_eq(st.nr_clients, 2);
	ctl_state_free(&st);
}
END_TEST

START_TEST(test_state_corrupt)
{
	expect_state_refused(corrupt_files[_i], "");
}
END_TEST

START_TEST(test_state_save_unwritable)
{
	struct ctl_state st = { 0 };
	struct ctl_err err;
	char bad[160];

	snprintf(bad, sizeof(bad), "%s/no/such/dir/state.json", state_dir);
	ck_assert_int_lt(ctl_state_save(&st, bad, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "state file"));
}
END_TEST

START_TEST(test_state_reload_domid_key)
{
	/* The "domid:N" key tmemd_control_settings_for() falls back to survives a reload. */
	struct ctl_state st = { 0 };
	struct ctl_settings s = { .has = CTL_HAS_WEIGHT, .v = { .weight = 42 } };
	struct ctl_err err;

	ck_assert_int_eq(ctl_state_update(&st, "domid:9", &s), 0);
	ck_assert_int_eq(ctl_state_save(&st, state_path, &err), 0);
	ctl_state_free(&st);
	ck_assert_int_eq(ctl_state_load(&st, state_path, &err), 0);
	ck_assert_ptr_nonnull(ctl_state_lookup(&st, "domid:9"));
	ctl_state_free(&st);
}
END_TEST

START_TEST(test_default_state_dir)
{
	char buf[256], tiny[4];

	ck_assert_int_eq(tmemd_control_default_state_dir(buf, sizeof(buf)), 0);
	if (geteuid() == 0) {
		ck_assert_str_eq(buf, "/var/lib/tmemd");
	} else if (getenv("XDG_STATE_HOME") && getenv("XDG_STATE_HOME")[0] == '/') {
		ck_assert_ptr_nonnull(strstr(buf, getenv("XDG_STATE_HOME")));
	} else {
		ck_assert_ptr_nonnull(strstr(buf, "/.local/state/tmemd"));
	}
	ck_assert_int_eq(tmemd_control_default_state_dir(tiny, sizeof(tiny)), -ENAMETOOLONG);
}
END_TEST

/* ---- sizes ----------------------------------------------------------------- */

START_TEST(test_sizes)
{
	uint64_t p;

	ck_assert_int_eq(parse_size_pages("4096", false, &p), 0);
	ck_assert_uint_eq(p, 1);
	ck_assert_int_eq(parse_size_pages("64K", false, &p), 0);
	ck_assert_uint_eq(p, 16);
	ck_assert_int_eq(parse_size_pages("1m", false, &p), 0);
	ck_assert_uint_eq(p, 256);
	ck_assert_int_eq(parse_size_pages("2GiB", false, &p), 0);
	ck_assert_uint_eq(p, 524288);
	ck_assert_int_eq(parse_size_pages("1T", false, &p), 0);
	ck_assert_uint_eq(p, 268435456);
	ck_assert_int_eq(parse_size_pages("100p", false, &p), 0);
	ck_assert_uint_eq(p, 100);
	ck_assert_int_eq(parse_size_pages("0", false, &p), 0);
	ck_assert_uint_eq(p, 0);
	ck_assert_int_eq(parse_size_pages("none", true, &p), 0);
	ck_assert_uint_eq(p, UINT64_MAX);
	ck_assert_int_eq(parse_size_pages("none", false, &p), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(parse_size_pages("1000", false, &p), TMEM_SIZE_NOT_PAGES); /* not whole pages */
	ck_assert_int_eq(parse_size_pages("1X", false, &p), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(parse_size_pages("-1M", false, &p), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(parse_size_pages("M", false, &p), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(parse_size_pages("", false, &p), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(parse_size_pages("99999999999999999999", false, &p), TMEM_SIZE_RANGE);
	ck_assert_int_eq(parse_size_pages("17179869184T", false, &p), TMEM_SIZE_RANGE);
	ck_assert_int_eq(parse_uint("12", 100, &p), 0);
	ck_assert_uint_eq(p, 12);
	ck_assert_int_eq(parse_uint("101", 100, &p), -EINVAL);
	ck_assert_int_eq(parse_uint("+1", 100, &p), -EINVAL);
}
END_TEST

/* ---- Prometheus ------------------------------------------------------------ */

static const char *stats_doc =
	"{\"version\":1,\"pool\":{\"page_size\":4096,\"total_pages\":100,\"used_pages\":3,"
	"\"free_pages\":97,\"ephemeral_pages\":2,\"persistent_pages\":1,\"zero_pages\":0,"
	"\"stored_bytes\":12288,\"metadata_bytes\":10,\"evictions\":4,\"freeable_pages\":99,"
	"\"compression\":{\"pages\":3,\"orig_data_size\":12288,\"compr_data_size\":5000,\"same_pages\":1,\"huge_pages\":1,\"compression_ratio\":2.4576},"
	"\"data\":{\"ephemeral\":{\"logical_bytes\":8192,\"compressed_bytes\":1000},\"persistent\":{\"logical_bytes\":4096,\"compressed_bytes\":4000},\"logical_bytes\":12288,\"compressed_bytes\":5000,\"compression_ratio\":2.4576},\"ops\":{\"ephemeral\":{\"puts\":5,\"succ_puts\":3,\"failed_puts\":{\"quota\":1,\"full\":0,\"frozen\":1},\"gets\":2,\"succ_gets\":1,\"failed_gets\":1,\"flush_pages\":0,\"flush_objects\":0,\"evictions\":4,\"admin_flushes\":2},\"persistent\":{\"puts\":5,\"succ_puts\":3,\"failed_puts\":{\"quota\":1,\"full\":0,\"frozen\":1},\"gets\":2,\"succ_gets\":1,\"failed_gets\":1,\"flush_pages\":0,\"flush_objects\":0,\"evictions\":4,\"admin_flushes\":2}},"
	"\"allocator\":{\"mem_used_total\":12288,\"overhead_bytes\":300,\"fragmentation_bytes\":700,\"compactions\":2,\"pages_compacted\":5,\"decode_errors\":0,\"effective_ratio\":1.0}},"
	"\"clients\":[{\"id\":1,\"name\":\"we\\\"ird\\\\name\",\"domid\":null,\"weight\":100,"
	"\"frozen\":true,\"compress\":\"lz4\",\"compression\":{\"pages\":3,\"orig_data_size\":12288,\"compr_data_size\":5000,\"same_pages\":1,\"huge_pages\":1,\"compression_ratio\":2.4576},\"data\":{\"ephemeral\":{\"logical_bytes\":8192,\"compressed_bytes\":1000},\"persistent\":{\"logical_bytes\":4096,\"compressed_bytes\":4000},\"logical_bytes\":12288,\"compressed_bytes\":5000,\"compression_ratio\":2.4576},\"caps\":{\"ephemeral_max_pages\":null,"
	"\"persistent_max_pages\":8},\"pages\":{\"ephemeral\":2,\"persistent\":1},"
	"\"ops\":{\"puts\":5,\"succ_puts\":3,\"failed_puts\":{\"quota\":1,\"full\":0,"
	"\"frozen\":1},\"gets\":2,\"succ_gets\":1,\"failed_gets\":1,\"flush_pages\":0,"
	"\"flush_objects\":0,\"evictions\":0,\"admin_flushes\":0},\"cleancache\":{\"succ_gets\":1,"
	"\"failed_gets\":1,\"puts\":4,\"flushes\":0},\"frontswap\":{\"succ_stores\":1,"
	"\"failed_stores\":0,\"loads\":0,\"invalidates\":0},\"pools\":[]},"
	"{\"id\":2,\"name\":\"vm\",\"domid\":3,\"weight\":50,\"frozen\":false,"
	"\"compress\":\"zstd:3\",\"compression\":{\"pages\":0,\"orig_data_size\":0,\"compr_data_size\":0,\"same_pages\":0,\"huge_pages\":0,\"compression_ratio\":null},\"data\":{\"ephemeral\":{\"logical_bytes\":0,\"compressed_bytes\":0},\"persistent\":{\"logical_bytes\":0,\"compressed_bytes\":0},\"logical_bytes\":0,\"compressed_bytes\":0,\"compression_ratio\":null},\"caps\":{\"ephemeral_max_pages\":null,"
	"\"persistent_max_pages\":null},\"pages\":{\"ephemeral\":0,\"persistent\":0},"
	"\"ops\":{\"puts\":0,\"succ_puts\":0,\"failed_puts\":{\"quota\":0,\"full\":0,"
	"\"frozen\":0},\"gets\":0,\"succ_gets\":0,\"failed_gets\":0,\"flush_pages\":0,"
	"\"flush_objects\":0,\"evictions\":0,\"admin_flushes\":0},\"cleancache\":{\"succ_gets\":0,"
	"\"failed_gets\":0,\"puts\":0,\"flushes\":0},\"frontswap\":{\"succ_stores\":0,"
	"\"failed_stores\":0,\"loads\":0,\"invalidates\":0},\"pools\":[]}],"
	"\"shared_pools\":[{\"uuid\":\"00112233-4455-6677-8899-aabbccddeeff\","
	"\"sharers\":2,\"authorised\":[\"vm\"],\"pages\":0,\"objects\":0,"
	"\"logical_bytes\":0,\"compressed_bytes\":0}],"
	"\"restart\":{\"survives_restart\":true,\"recovered\":true,\"starts\":3,"
	"\"recovered_at_usec\":1796400000000000,\"recovery_seconds\":0.02,"
	"\"pages_recovered\":5,\"persistent_pages_recovered\":4,"
	"\"ephemeral_pages_recovered\":1,\"pages_dropped\":0,\"clients_recovered\":2,"
	"\"pools_recovered\":2,\"clients_reattached\":1,\"clients_expired\":1,"
	"\"clients_detached\":0},"
	"\"parked\":{\"clients\":1,\"pools\":{\"parked\":3,\"claimed\":2,\"expired\":0},"
	"\"pages\":{\"parked\":7,\"claimed\":5,\"expired\":0},\"list\":[{\"client\":"
	"\"uuid:00112233-4455-6677-8899-aabbccddeeff\",\"name\":\"web1\",\"pages\":2,"
	"\"pools\":1,\"parked_at_seconds\":1796400000,\"age_seconds\":30}]}}";

/*
 * A strict reader of the text format: every line is a HELP, a TYPE or a
 * sample; names match [a-zA-Z_:][a-zA-Z0-9_:]*; TYPE comes before the
 * family's samples and at most once; a family's samples are contiguous;
 * counters end in _total; no sample (name + labels) twice.
 */
static void check_exposition(char *text)
{
	regex_t help, type, sample;
	char seen_types[128][80], seen_samples[256][256], current[80] = "";
	size_t nt = 0, ns = 0;

	ck_assert_int_eq(regcomp(&help, "^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+$", REG_EXTENDED), 0);
	ck_assert_int_eq(regcomp(&type, "^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge)$",
				 REG_EXTENDED), 0);
	ck_assert_int_eq(regcomp(&sample, "^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([a-zA-Z_][a-zA-Z0-9_]*"
				 "=\"([^\"\\\\\n]|\\\\[\"\\\\n])*\")(,[a-zA-Z_][a-zA-Z0-9_]*"
				 "=\"([^\"\\\\\n]|\\\\[\"\\\\n])*\")*\\})? -?[0-9]+(\\.[0-9]+)?$",
				 REG_EXTENDED), 0);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		regmatch_t m[3];

		if (regexec(&type, line, 3, m, 0) == 0) {
			snprintf(current, sizeof(current), "%.*s", (int)(m[1].rm_eo - m[1].rm_so),
				 line + m[1].rm_so);
			for (size_t i = 0; i < nt; i++)
				ck_assert_msg(strcmp(seen_types[i], current), "TYPE twice: %s", line);
			if (strstr(line, " counter"))
				ck_assert_msg(strstr(current, "_total"), "counter name: %s", line);
			ck_assert_uint_lt(nt, 128);
			snprintf(seen_types[nt++], sizeof(seen_types[0]), "%s", current);
			continue;
		}
		if (regexec(&help, line, 0, NULL, 0) == 0)
			continue;
		ck_assert_msg(regexec(&sample, line, 3, m, 0) == 0, "bad line: %s", line);
		ck_assert_msg((size_t)(m[1].rm_eo - m[1].rm_so) == strlen(current) &&
			      !strncmp(line, current, strlen(current)),
			      "sample outside its family: %s", line);
		for (size_t i = 0; i < ns; i++)
			ck_assert_msg(strncmp(seen_samples[i], line, strrchr(line, ' ') - line) ||
				      seen_samples[i][strrchr(line, ' ') - line] != '\0',
				      "duplicate sample: %s", line);
		ck_assert_uint_lt(ns, 256);
		snprintf(seen_samples[ns++], sizeof(seen_samples[0]), "%.*s",
			 (int)(strrchr(line, ' ') - line), line);
	}
	ck_assert_uint_gt(nt, 30);
	regfree(&help);
	regfree(&type);
	regfree(&sample);
}

static const char status_doc[] =
	"{\"version\":1,\"daemon\":{\"version\":\"0.1\",\"start_time_seconds\":1796400000}}";

START_TEST(test_prometheus)
{
	json_t *doc = json_loads(stats_doc, 0, NULL), *status = json_loads(status_doc, 0, NULL);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(prom_write(out, doc, status), 0);
	fclose(out);
	/* Base units: bytes, not pages. */
	ck_assert_ptr_nonnull(strstr(text, "tmem_pool_size_bytes 409600\n"));
	ck_assert_ptr_null(strstr(text, "_pages"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_build_info{version=\"0.1\",tmemctl_version=\""));
	ck_assert_ptr_nonnull(strstr(text, "tmem_start_time_seconds 1796400000\n"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_client_reject_quota_total{client=\"vm\","
				     "domid=\"3\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_client_pool_limit_hit_total{client=\"vm\","));
	ck_assert_ptr_nonnull(strstr(text, "tmem_client_frozen{client=\"we\\\"ird\\\\name\","
				     "domid=\"\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_client_persistent_max_bytes{client="
				     "\"we\\\"ird\\\\name\",domid=\"\"} 32768\n"));
	ck_assert_ptr_null(strstr(text, "tmem_client_persistent_max_bytes{client=\"vm\""));
	ck_assert_ptr_nonnull(strstr(text, "tmem_shared_pool_sharers{uuid=\"00112233-4455-"
				     "6677-8899-aabbccddeeff\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_frontswap_succ_stores_total{client="));
	ck_assert_ptr_nonnull(strstr(text, "tmem_restart_survives 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_restart_recovered_bytes 20480\n"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_restart_clients_reattached_total 1\n"));
	/* Issue 25: parked domains (xl save, restore, migrate). */
	ck_assert_ptr_nonnull(strstr(text, "tmem_parked_clients 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_parked_pools_total{event=\"claimed\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_parked_bytes_total{event=\"parked\"} 28672\n"));
	ck_assert_ptr_nonnull(strstr(text, "tmem_parked_bytes_total{event=\"expired\"} 0\n"));
	check_exposition(text);
	free(text);
	json_decref(doc);
	json_decref(status);
}
END_TEST

START_TEST(test_prometheus_rejects_bad_doc)
{
	json_t *doc = json_loads(stats_doc, 0, NULL), *status = json_loads(status_doc, 0, NULL);
	json_t *empty = json_object();
	FILE *null = fopen("/dev/null", "w");

	ck_assert_int_eq(prom_write(null, doc, empty), -EINVAL); /* no daemon version */
	json_decref(empty);
	json_object_set_new(json_object_get(doc, "restart"), "pages_recovered", json_null());
	ck_assert_int_eq(prom_write(null, doc, status), -EINVAL); /* a figure missing */
	json_object_set_new(json_object_get(doc, "restart"), "pages_recovered", json_integer(5));
	json_object_set_new(json_object_get(doc, "pool"), "total_pages", json_string("x"));
	ck_assert_int_eq(prom_write(null, doc, status), -EINVAL);
	json_object_set_new(json_object_get(doc, "pool"), "total_pages", json_integer(100));
	json_object_del(doc, "parked");
	ck_assert_int_eq(prom_write(null, doc, status), -EINVAL); /* issue 25: parked */
	json_object_set_new(doc, "version", json_integer(2));
	ck_assert_int_eq(prom_write(null, doc, status), -EINVAL);
	fclose(null);
	json_decref(doc);
	json_decref(status);
}
END_TEST

static Suite *control_suite(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("proto");

	tcase_add_test(tc, test_parse_ok);
	tcase_add_test(tc, test_parse_refused);
	tcase_add_test(tc, test_parse_oversized);
	tcase_add_test(tc, test_uuid);
	tcase_add_test(tc, test_reply_lines);
	tcase_add_test(tc, test_reply_error_bad_utf8);
	suite_add_tcase(s, tc);
	tc = tcase_create("state");
	tcase_add_checked_fixture(tc, state_setup, state_teardown);
	tcase_add_test(tc, test_state_missing_is_empty);
	tcase_add_test(tc, test_state_round_trip);
	tcase_add_loop_test(tc, test_state_corrupt, 0,
			    (int)(sizeof(corrupt_files) / sizeof(corrupt_files[0])));
	tcase_add_loop_test(tc, test_state_bad_principal, 0,
			    (int)(sizeof(bad_principals) / sizeof(bad_principals[0])));
	tcase_add_test(tc, test_state_version1_loads);
	tcase_add_test(tc, test_state_save_unwritable);
	tcase_add_test(tc, test_state_reload_domid_key);
	tcase_add_test(tc, test_default_state_dir);
	suite_add_tcase(s, tc);
	tc = tcase_create("tmemctl");
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_prometheus);
	tcase_add_test(tc, test_prometheus_rejects_bad_doc);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(control_suite(), 0);
}
