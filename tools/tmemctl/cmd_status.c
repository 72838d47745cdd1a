/* SPDX-License-Identifier: MIT */
/* tmemctl status: is tmemd there, and how full is its pool. */
#include <string.h>
#include <time.h>

#include "args.h"

static bool is_array(const json_t *v)
{
	return json_is_array(v);
}

/* The strings of the last reload's array key, between head and tail;
 * nothing when it is empty, or absent (an older tmemd). */
static void print_reload_list(struct hout *o, json_t *r, const char *key, const char *head,
			      const char *tail)
{
	json_t *keys = json_object_get(jpath(r, "daemon.last_reload"), key);
	json_t *k;
	size_t i;

	if (!is_array(keys) || !json_array_size(keys))
		return;
	fputs(head, o->f);
	json_array_foreach(keys, i, k)
		fprintf(o->f, "%s%s", i ? ", " : "", json_is_string(k) ? json_string_value(k) : "?");
	fputs(tail, o->f);
}

/* "last reload: ok, 12 s ago: reloaded /etc/tmemd/tmemd.conf", or none. */
static void print_last_reload(struct hout *o, json_t *r)
{
	const char *result = hstr(o, r, "daemon.last_reload.result");

	if (!strcmp(result, "none")) {
		fprintf(o->f, "last reload: none since the start\n");
		return;
	}
	fprintf(o->f, "last reload: %s, %llu s ago: %s\n", result,
		(unsigned long long)hu64(o, r, "daemon.last_reload.seconds_ago"),
		hstr(o, r, "daemon.last_reload.message"));
	/* The [tmemd] keys a reload read but cannot apply, and the settings
	 * tmemctl stored that beat the file (issue 30). */
	print_reload_list(o, r, "restart_pending", "restart pending: tmemd.conf changes ",
			  "; they apply at the next restart (systemctl restart tmemd)\n");
	print_reload_list(o, r, "overridden", "tmemctl over tmemd.conf: ",
			  " (tmemctl unset CLIENT goes back to the file)\n");
}

static bool is_number(const json_t *v)
{
	return json_is_number(v);
}

/* Whether pages outlive tmemd, and what the last start recovered. */
static void print_restart(struct hout *o, json_t *r)
{
	time_t at = (time_t)(hu64(o, r, "restart.recovered_at_usec") / 1000000u);
	json_t *secs = hval(o, r, "restart.recovery_seconds", is_number);
	char when[64] = "";
	struct tm tm;

	if (!hbool(o, r, "restart.survives_restart")) {
		fprintf(o->f, "restart: pages live in tmemd's memory and do not survive a restart\n");
		return;
	}
	if (!hbool(o, r, "restart.recovered")) {
		fprintf(o->f, "restart: pages survive a restart; this start found none to recover\n");
		return;
	}
	if (gmtime_r(&at, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(o->f, "restart: recovered %llu pages (%llu persistent) of %llu clients at %s "
		"in %.1f ms; %llu reattached, %llu expired, %llu still away\n",
		(unsigned long long)hu64(o, r, "restart.pages_recovered"),
		(unsigned long long)hu64(o, r, "restart.persistent_pages_recovered"),
		(unsigned long long)hu64(o, r, "restart.clients_recovered"), when,
		secs ? json_number_value(secs) * 1e3 : 0.0,
		(unsigned long long)hu64(o, r, "restart.clients_reattached"),
		(unsigned long long)hu64(o, r, "restart.clients_expired"),
		(unsigned long long)hu64(o, r, "restart.clients_detached"));
}

static void human(struct hout *o, json_t *r)
{
	fprintf(o->f, "tmemd %s, pid %llu, up %llus, transport %s\n",
		hstr(o, r, "daemon.version"), (unsigned long long)hu64(o, r, "daemon.pid"),
		(unsigned long long)hu64(o, r, "daemon.uptime_seconds"),
		hstr(o, r, "daemon.transport"));
	fprintf(o->f, "runtime %s, state %s\n", hstr(o, r, "daemon.runtime_dir"),
		hstr(o, r, "daemon.state_dir"));
	print_pool_summary(o, r);
	print_memory_summary(o, r);
	fprintf(o->f, "clients: %llu, parked: %llu\n", (unsigned long long)hu64(o, r, "clients"),
		(unsigned long long)hu64(o, r, "parked_clients"));
	print_last_reload(o, r);
	print_restart(o, r);
}

int cmd_status(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	struct cmd_pos pos;
	int rc;

	if (!cmd_args(&opts, argc, argv, NULL, 0, 0, &pos, &rc))
		return rc;
	return run_request(&opts, "status", NULL, human);
}
