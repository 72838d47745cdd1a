/* SPDX-License-Identifier: MIT */
/*
 * tmemctl top [--iterations N]: a live view like xentop.  Every second it
 * asks for the stats document on one connection and shows per-client
 * pages and per-second put/get rates (the difference to the previous
 * sample).  q quits; so does N iterations (for scripts and tests).  On a
 * terminal it clears the screen between frames and reads keys unbuffered.
 * With --json each frame is the stats document on one line (JSON lines).
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "args.h"

#define TOP_MAX_CLIENTS 256

struct sample {
	char name[64];
	uint64_t puts, gets, succ_gets;
};

struct top {
	struct sample prev[TOP_MAX_CLIENTS];
	size_t nr_prev;
	double prev_time;
	bool tty;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const struct sample *find_prev(const struct top *t, const char *name)
{
	for (size_t i = 0; i < t->nr_prev; i++)
		if (strcmp(t->prev[i].name, name) == 0)
			return &t->prev[i];
	return NULL;
}

static void frame(struct hout *o, json_t *stats)
{
	struct top *t = o->ctx;
	json_t *clients = harray(o, stats, "clients"), *c;
	double now = now_s(), dt = t->prev_time ? now - t->prev_time : 0;
	struct sample cur[TOP_MAX_CLIENTS];
	size_t i, n = 0;

	if (t->tty)
		fputs("\033[H\033[2J", o->f);
	print_pool_summary(o, stats);
	fprintf(o->f, "\n%-20s %-6s %9s %9s %10s %10s %6s %9s %-6s\n", "NAME", "DOMID", "EPH",
	       "PERS", "PUTS/s", "GETS/s", "HIT%", "EVICT", "FROZEN");
	json_array_foreach(clients, i, c) {
		const char *name = hstr(o, c, "name");
		struct sample s = { .puts = hu64(o, c, "ops.puts"),
				    .gets = hu64(o, c, "ops.gets"),
				    .succ_gets = hu64(o, c, "ops.succ_gets") };
		const struct sample *p = find_prev(t, name);
		char eph[16], pers[16], dom[16];
		double puts = 0, gets = 0;

		snprintf(s.name, sizeof(s.name), "%s", name);
		if (p && dt > 0) {
			puts = (double)(s.puts - p->puts) / dt;
			gets = (double)(s.gets - p->gets) / dt;
		}
		hpages(o, eph, sizeof(eph), c, "pages.ephemeral");
		hpages(o, pers, sizeof(pers), c, "pages.persistent");
		hdomid(o, dom, sizeof(dom), c);
		fprintf(o->f, "%-20s %-6s %9s %9s %10.0f %10.0f %6.1f %9llu %-6s\n", s.name, dom,
			eph, pers, puts, gets,
			s.gets ? 100.0 * (double)s.succ_gets / (double)s.gets : 0.0,
			(unsigned long long)hu64(o, c, "ops.evictions"),
			hbool(o, c, "frozen") ? "yes" : "no");
		if (n < TOP_MAX_CLIENTS)
			cur[n++] = s;
	}
	if (t->tty)
		fprintf(o->f, "\n(q to quit)\n");
	memcpy(t->prev, cur, n * sizeof(cur[0]));
	t->nr_prev = n;
	t->prev_time = now;
}

/* Sleeps a second, or until q.  true when the user asked to quit. */
static bool wait_key(bool tty)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	double until = now_s() + 1.0;
	char ch;

	for (;;) {
		int left = (int)((until - now_s()) * 1000);

		if (left <= 0)
			return false;
		if (!tty) {
			usleep((useconds_t)left * 1000);
			return false;
		}
		if (poll(&p, 1, left) > 0 && read(STDIN_FILENO, &ch, 1) == 1 &&
		    (ch == 'q' || ch == 'Q'))
			return true;
	}
}

int cmd_top(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	const char *iter_text = NULL;
	const struct cmd_opt extra[] = {
		{ .name = "iterations", .value = &iter_text },
		{ NULL },
	};
	static struct top t;
	struct termios saved, raw;
	struct ctl_conn conn;
	struct cmd_pos pos;
	uint64_t iterations = 0;
	json_t *stats;
	int rc;

	if (!cmd_args(&opts, argc, argv, extra, 0, 0, &pos, &rc))
		return rc;
	if (iter_text && (parse_uint(iter_text, UINT32_MAX, &iterations) || !iterations)) {
		usage_error("top: --iterations: expected a positive number");
		return EXIT_USAGE;
	}
	rc = ctl_open(&opts, &conn);
	if (rc)
		return rc;
	t.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
		tcgetattr(STDIN_FILENO, &saved) == 0;
	if (t.tty) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	for (uint64_t i = 0; !iterations || i < iterations; i++) {
		rc = ctl_request(&conn, "stats", NULL, &stats);
		if (rc)
			break;
		if (opts.json) {  /* one compact stats document per line and frame */
			json_dumpf(stats, stdout, JSON_COMPACT);
			putchar('\n');
			fflush(stdout);
		} else {
			rc = print_reply_ctx("top", stats, frame, &t);
			fflush(stdout);
		}
		json_decref(stats);
		if (rc)
			break;
		if ((!iterations || i + 1 < iterations) && wait_key(t.tty))
			break;
	}
	if (t.tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	ctl_close(&conn);
	return rc;
}
