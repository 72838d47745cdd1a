/* SPDX-License-Identifier: MIT */
/*
 * tmemctl: the control CLI.  main.c parses the global options and picks a
 * subcommand from a table {name, fn, help}; each subcommand lives in its
 * own cmd_*.c.  They talk to tmemd through tmemctl_call() (conn.c), one JSON
 * request and reply per line over the control socket (man/tmemctl.8).
 *
 * Exit codes: 0 ok, 1 the daemon refused or failed (or cannot be
 * reached), 2 usage.
 */
#ifndef TMEMCTL_H
#define TMEMCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#define TMEMCTL_VERSION "0.1"
#define TMEMCTL_PROTO_VERSION 1
#define TMEMCTL_MAX_REPLY (64u << 20) /* a stats reply with many clients */

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* Global options, parsed once in main.c. */
struct tmemctl_opts {
	const char *socket;      /* --socket PATH */
	const char *runtime_dir; /* --runtime-dir DIR: DIR/control.sock */
	bool json;               /* --json: print one JSON document */
};

/* One subcommand: argv[0] is its name; returns an exit code. */
struct tmemctl_cmd {
	const char *name;
	int (*fn)(const struct tmemctl_opts *opts, int argc, char **argv);
	const char *usage;    /* the arguments, for --help */
	const char *help;     /* one line */
};

int cmd_status(const struct tmemctl_opts *, int, char **);
int cmd_stats(const struct tmemctl_opts *, int, char **);
int cmd_list(const struct tmemctl_opts *, int, char **);
int cmd_set(const struct tmemctl_opts *, int, char **);
int cmd_freeze(const struct tmemctl_opts *, int, char **);
int cmd_thaw(const struct tmemctl_opts *, int, char **);
int cmd_flush(const struct tmemctl_opts *, int, char **);
int cmd_shared_auth(const struct tmemctl_opts *, int, char **);
int cmd_pool_size(const struct tmemctl_opts *, int, char **);
int cmd_release(const struct tmemctl_opts *, int, char **);
int cmd_top(const struct tmemctl_opts *, int, char **);
int cmd_forget(const struct tmemctl_opts *, int, char **);
int cmd_freeable(const struct tmemctl_opts *, int, char **);
int cmd_saved(const struct tmemctl_opts *, int, char **);
int cmd_unset(const struct tmemctl_opts *, int, char **);
int cmd_migrate_check(const struct tmemctl_opts *, int, char **);
int cmd_migrate_push(const struct tmemctl_opts *, int, char **);

/* conn.c: a connection to the control socket. */
struct tmemctl_conn {
	int fd;
	char *buf;            /* received bytes not yet returned */
	size_t len, cap;
	bool lost;            /* the connection failed (tmemd went away) */
};
/* Connects to --socket, else --runtime-dir's control.sock, else the
 * default.  0, or an exit code with the reason printed to stderr. */
int tmemctl_open(const struct tmemctl_opts *opts, struct tmemctl_conn *conn);
/* The same, printing nothing (top's reconnects). */
int tmemctl_open_quiet(const struct tmemctl_opts *opts, struct tmemctl_conn *conn);
void tmemctl_close(struct tmemctl_conn *conn);
/*
 * Sends {"version":1,"cmd":cmd,"args":args} (steals args, may be NULL)
 * and waits for the reply.  0 and *result (a new reference), or an exit
 * code: EXIT_FAILED with the daemon's error message printed to stderr
 * as "tmemctl: CMD: MESSAGE".
 */
int tmemctl_request(struct tmemctl_conn *conn, const char *cmd, json_t *args,
		    json_t **result);
/* tmemctl_open + tmemctl_request + tmemctl_close. */
int tmemctl_call(const struct tmemctl_opts *opts, const char *cmd, json_t *args,
		 json_t **result);

/* The default socket: $TMEMCTL_SOCKET, /run/tmemd/control.sock as root,
 * else $XDG_RUNTIME_DIR/tmemd/control.sock.  NULL if none can be found. */
const char *tmemctl_default_socket(char *buf, size_t len);

/* size.c: "4096", "64K", "512M", "2G", "1T" (bytes, powers of 1024) or
 * "100p" (pages) into pages (proto/tmem_size.h's grammar, as tmemd.conf).
 * Bytes must be a whole number of pages.  With allow_none,
 * "none"/"unlimited" give UINT64_MAX.  0, or a TMEM_SIZE_* reason for
 * tmem_size_strerror(). */
int parse_size_pages(const char *text, bool allow_none, uint64_t *pages);
/* 0..TMEM_MAX_WEIGHT style unsigned integer; 0 or -EINVAL. */
int parse_uint(const char *text, uint64_t max, uint64_t *out);

/* print.c */
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int print_json(json_t *doc);    /* to stdout, indented; steals doc; EXIT_OK */
/* Follows a dotted path ("ops.failed_puts.quota"); NULL if absent. */
json_t *jpath(json_t *obj, const char *path);
/*
 * A human printer's output: text goes to f; the first key (dotted path)
 * the reply lacks, or holds with the wrong type, is kept in missing.
 * The h*() getters read a key and record it there when it is not right
 * (returning 0, "?", false or NULL).
 */
struct hout {
	FILE *f;
	char missing[96];
	void *ctx;            /* the printer's own, from print_reply_ctx() */
};
typedef void (*human_fn)(struct hout *o, json_t *result);
uint64_t hu64(struct hout *o, json_t *obj, const char *path);  /* integer >= 0 */
const char *hstr(struct hout *o, json_t *obj, const char *path);
bool hbool(struct hout *o, json_t *obj, const char *path);
json_t *harray(struct hout *o, json_t *obj, const char *path);
json_t *hval(struct hout *o, json_t *obj, const char *path, bool (*is)(const json_t *));
bool json_is_object_fn(const json_t *v);  /* json_is_object, for hval() */
/* Human sizes of a page count / a cap (null: "-") / a domid (null: "local"). */
void hpages(struct hout *o, char *buf, size_t len, json_t *obj, const char *path);
void hcap(struct hout *o, char *buf, size_t len, json_t *obj, const char *path);
void hdomid(struct hout *o, char *buf, size_t len, json_t *client);
/* Runs human on result into a buffer and prints it: EXIT_OK; or, when a
 * key was missing, prints nothing but "tmemctl: CMD: ... lacks KEY" on
 * stderr and returns EXIT_FAILED. */
int print_reply(const char *cmd, json_t *result, human_fn human);
int print_reply_ctx(const char *cmd, json_t *result, human_fn human, void *ctx);
/* Human size of pages: "12.0M" etc. */
void fmt_pages(char *buf, size_t len, uint64_t pages);
void fmt_bytes(char *buf, size_t len, uint64_t bytes);  /* "3.8M" */
void print_clients_table(struct hout *o, json_t *clients);
/* The parked clients (list --all's "parked", stats' "parked.list"):
 * key, xl name, pages, pools and age; nothing when there are none. */
void print_parked(struct hout *o, json_t *parked);
/* The "pool" object of a status or stats reply. */
void print_pool_summary(struct hout *o, json_t *doc);
/* The "memory" line (print_memory.c); nothing when doc has none. */
void print_memory_summary(struct hout *o, json_t *doc);
/* The host tier's line (print_tier.c); nothing when there is none. */
void print_tier_summary(struct hout *o, json_t *doc);
/* The recovered clients not back yet (list --all, stats); nothing when none. */
void print_recovered(struct hout *o, json_t *recovered);

/* prom.c: the stats document (and from the status reply, the version and
 * start time) in the Prometheus text format.  0 or -EINVAL. */
int prom_write(FILE *out, json_t *stats, json_t *status);

#endif /* TMEMCTL_H */
