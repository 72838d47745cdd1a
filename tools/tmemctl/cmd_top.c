/* SPDX-License-Identifier: MIT */
/*
 * tmemctl top [--delay S] [--sort KEY] [--iterations N]: a live view like
 * xentop.  Every S seconds (1) it asks for the stats document on one
 * connection and shows per-client pages, and puts, gets and the hit rate
 * over the interval since the previous frame (top_frame.c).  q quits; so does N iterations (for scripts and tests).  On a
 * terminal it clears the screen between frames and reads keys unbuffered.
 * When tmemd goes away (a restart), it says so and connects again every S
 * seconds, as xentop keeps going (issue 30).
 * With --json each frame is the stats document on one line (JSON lines).
 */
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "top.h"

/* --delay SECONDS, as xentop -d: 0.1 to 3600. */
static int parse_delay(const char *text, double *out)
{
	char *end;
	double v = strtod(text, &end);

	if (end == text || *end || !(v >= 0.1 && v <= 3600))
		return -1;
	*out = v;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps delay seconds, or until q.  true when the user asked to quit. */
static bool wait_key(bool tty, double delay)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	double until = now_s() + delay;
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

/*
 * The connection was lost: connect again every delay seconds until tmemd
 * answers (0) or the user quits (1).  The counters start again with the
 * new tmemd, so the next frame has no interval to compare with.
 */
static int reconnect(const struct tmemctl_opts *opts, struct tmemctl_conn *conn, struct top *t,
		     double delay)
{
	tmemctl_close(conn);
	fprintf(stderr, "tmemctl: top: tmemd went away; connecting again every %.1f s%s\n",
		delay, t->tty ? " (q quits)" : "");
	for (;;) {
		if (wait_key(t->tty, delay))
			return 1;
		if (tmemctl_open_quiet(opts, conn) == 0)
			break;
	}
	t->nr_prev = 0;
	t->prev_time = 0;
	fprintf(stderr, "tmemctl: top: connected again\n");
	return 0;
}

int cmd_top(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	const char *iter_text = NULL, *delay_text = NULL, *sort_text = NULL;
	const struct cmd_opt extra[] = {
		{ .name = "iterations", .value = &iter_text, .short_name = 'n' },
		{ .name = "delay", .value = &delay_text, .short_name = 'd' },
		{ .name = "sort", .value = &sort_text, .short_name = 's' },
		{ NULL },
	};
	double delay = 1.0;
	static struct top t;
	struct termios saved, raw;
	struct tmemctl_conn conn;
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
	if (delay_text && parse_delay(delay_text, &delay)) {
		usage_error("top: --delay: expected seconds from 0.1 to 3600, not \"%s\"",
			    delay_text);
		return EXIT_USAGE;
	}
	if (sort_text && top_sort_parse(sort_text, &t.sort)) {
		usage_error("top: --sort: expected name, eph, pers, puts, gets, hit or evict, "
			    "not \"%s\"", sort_text);
		return EXIT_USAGE;
	}
	rc = tmemctl_open(&opts, &conn);
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
		rc = tmemctl_request(&conn, "stats", NULL, &stats);
		if (rc && conn.lost) {
			rc = 0;
			if (reconnect(&opts, &conn, &t, delay))
				break;  /* q: a user's quit, exit 0 */
			i--;  /* a frame is one that was shown */
			continue;
		}
		if (rc)
			break;
		if (opts.json) {  /* one compact stats document per line and frame */
			json_dumpf(stats, stdout, JSON_COMPACT);
			putchar('\n');
			fflush(stdout);
		} else {
			rc = print_reply_ctx("top", stats, top_frame, &t);
			fflush(stdout);
		}
		json_decref(stats);
		if (rc)
			break;
		if ((!iterations || i + 1 < iterations) && wait_key(t.tty, delay))
			break;
	}
	if (t.tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	tmemctl_close(&conn);
	return rc;
}
