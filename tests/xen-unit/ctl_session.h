/* SPDX-License-Identifier: MIT */
/*
 * The Xen unit tests' way to talk to tmemd's control server: it runs on
 * the test's thread, over the test's registry, while a child process
 * sends the requests.
 */
#ifndef TMEMD_TEST_CTL_SESSION_H
#define TMEMD_TEST_CTL_SESSION_H

#include "client_registry.h"
#include "config.h"
#include "migrate/migrate.h"

/*
 * Runs the control server (the daemon's glue over reg, cfg, and mig's
 * migration, NULL: none) while a child sends reqs one by one, then stops
 * it; reply[i] is request i's reply line.  dir holds control.sock and
 * state/.
 */
void control_session(const char *dir, struct tmemd_clients *reg, struct tmemd_config *cfg,
		     struct tmemd_migrate *mig, const char *const *reqs, int n,
		     char (*reply)[512]);

#define REPLY_HAS(r, s) ck_assert_msg(strstr((r), (s)), "reply lacks %s: %s", (s), (r))

#endif /* TMEMD_TEST_CTL_SESSION_H */
