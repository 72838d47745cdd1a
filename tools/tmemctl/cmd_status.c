/* SPDX-License-Identifier: MIT */
/* tmemctl status: is tmemd there, and how full is its pool. */
#include <time.h>

#include "args.h"

/* Whether pages outlive tmemd, and what the last start recovered. */
static void print_restart(json_t *rs)
{
	time_t at = (time_t)(jget_u64(rs, "recovered_at_usec") / 1000000u);
	char when[64] = "";
	struct tm tm;

	if (!json_is_true(json_object_get(rs, "survives_restart"))) {
		printf("restart: pages live in tmemd's memory and do not survive a restart\n");
		return;
	}
	if (!json_is_true(json_object_get(rs, "recovered"))) {
		printf("restart: pages survive a restart; this start found none to recover\n");
		return;
	}
	if (gmtime_r(&at, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	printf("restart: recovered %llu pages (%llu persistent) of %llu clients at %s "
	       "in %.1f ms; %llu reattached, %llu expired, %llu still away\n",
	       (unsigned long long)jget_u64(rs, "pages_recovered"),
	       (unsigned long long)jget_u64(rs, "persistent_pages_recovered"),
	       (unsigned long long)jget_u64(rs, "clients_recovered"), when,
	       json_number_value(json_object_get(rs, "recovery_seconds")) * 1e3,
	       (unsigned long long)jget_u64(rs, "clients_reattached"),
	       (unsigned long long)jget_u64(rs, "clients_expired"),
	       (unsigned long long)jget_u64(rs, "clients_detached"));
}

static void human(json_t *r)
{
	json_t *d = json_object_get(r, "daemon");

	printf("tmemd %s, pid %llu, up %llus, transport %s\n",
	       json_string_value(json_object_get(d, "version")),
	       (unsigned long long)jget_u64(d, "pid"),
	       (unsigned long long)jget_u64(d, "uptime_seconds"),
	       json_string_value(json_object_get(d, "transport")));
	printf("runtime %s, state %s\n", json_string_value(json_object_get(d, "runtime_dir")),
	       json_string_value(json_object_get(d, "state_dir")));
	print_pool_summary(stdout, json_object_get(r, "pool"));
	printf("clients: %llu\n", (unsigned long long)jget_u64(r, "clients"));
	print_restart(json_object_get(r, "restart"));
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
