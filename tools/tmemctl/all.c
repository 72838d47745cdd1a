/* SPDX-License-Identifier: MIT */
/*
 * -a/--all, as "xl tmem-freeze -a" had: one request per connected
 * client, on one connection.  The clients are those "list" shows when it
 * starts; one that leaves meanwhile makes its request fail (and the exit
 * code 1), the others still run.  With --json the output is one document:
 * an array of the per-client results (errors are on stderr).
 */
#include <stdio.h>
#include <string.h>

#include "args.h"

/* The connected clients' principals ("client": "domid:5", "vm1"), as a
 * new array of strings; never their shown names, which a domain and a
 * local client may share. */
static int client_names(struct tmemctl_conn *conn, json_t **names)
{
	json_t *list, *c;
	size_t i;
	int rc = tmemctl_request(conn, "list", NULL, &list);

	if (rc)
		return rc;
	*names = json_array();
	json_array_foreach(json_object_get(list, "clients"), i, c) {
		json_t *name = json_object_get(c, "client");

		if (!json_is_string(name)) {
			fprintf(stderr, "tmemctl: list: tmemd's reply lacks a client\n");
			rc = EXIT_FAILED;
			break;
		}
		json_array_append(*names, name);
	}
	json_decref(list);
	if (rc) {
		json_decref(*names);
		*names = NULL;
	}
	return rc;
}

/* Runs cmd on one client; its result joins out (--json) or is printed. */
static int run_one(const struct tmemctl_opts *opts, struct tmemctl_conn *conn,
		   const char *cmd, json_t *args, json_t *name, human_fn human, json_t *out)
{
	json_t *a = args ? json_deep_copy(args) : json_object(), *result;
	int rc;

	json_object_set(a, "client", name);
	rc = tmemctl_request(conn, cmd, a, &result);
	if (rc)
		return rc;
	if (opts->json) {
		json_array_append_new(out, result);
		return EXIT_OK;
	}
	rc = print_reply(cmd, result, human);
	json_decref(result);
	return rc;
}

int run_request_all(const struct tmemctl_opts *opts, const char *cmd, json_t *args,
		    human_fn human)
{
	json_t *names = NULL, *out = json_array(), *name;
	struct tmemctl_conn conn;
	int rc = tmemctl_open(opts, &conn), worst = EXIT_OK;
	size_t i;

	if (!rc)
		rc = client_names(&conn, &names);
	json_array_foreach(names, i, name) {
		int r = run_one(opts, &conn, cmd, args, name, human, out);

		if (r > worst)
			worst = r;
	}
	if (!rc && opts->json)
		print_json(json_incref(out));
	else if (!rc && !json_array_size(names))
		printf("no client is connected\n");
	tmemctl_close(&conn);
	json_decref(names);
	json_decref(out);
	json_decref(args);
	return rc ? rc : worst;
}
