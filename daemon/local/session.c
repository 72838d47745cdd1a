/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "local/session.h"

static bool token_zero(const uint8_t *t)
{
	for (unsigned i = 0; i < TMEM_LOCAL_SESSION_LEN; i++)
		if (t[i])
			return false;
	return true;
}

static int token_new(uint8_t *t)
{
	ssize_t n = getrandom(t, TMEM_LOCAL_SESSION_LEN, 0);

	if (n != (ssize_t)TMEM_LOCAL_SESSION_LEN)
		return n < 0 ? -errno : -EIO;
	if (token_zero(t))
		t[0] = 1; /* zero means "no session" */
	return 0;
}

static struct tmem_ident ident_of(const uint8_t *token)
{
	struct tmem_ident id = { { 'L' } };

	memcpy(id.b + 1, token, TMEM_LOCAL_SESSION_LEN);
	return id;
}

static int note_pool(const struct tmem_pool_info *pi, void *ctx)
{
	uint32_t *pools = ctx;

	if (pi->id >= 0 && pi->id < 32)
		*pools |= 1u << pi->id;
	return 0;
}

/* Attaches name with token's identity: 0 with its pools back, -errno
 * from the attach, or 1: no client of that identity here (none left). */
static int resume(struct tmemd_clients *reg, const char *name, const uint8_t *token,
		  struct tmemd_session *out, struct tmemd_client **client)
{
	struct tmem_ident id = ident_of(token);
	int rc = tmemd_client_attach(reg, name, "local", -1, &id, client, &out->resumed);

	if (!rc && !out->resumed) {
		tmemd_client_remove(*client);
		*client = NULL;
		return 1;
	}
	memcpy(out->token, token, TMEM_LOCAL_SESSION_LEN);
	if (!rc) {
		store_client_for_each_pool((*client)->sc, note_pool, &out->pools);
		tmemd_clients_claimed(reg, name);
	}
	return rc;
}

void tmemd_session_ident(const uint8_t token[TMEM_LOCAL_SESSION_LEN], struct tmem_ident *id)
{
	*id = ident_of(token);
}

int tmemd_session_attach(struct tmemd_clients *reg, const char *name,
			 const uint8_t token_in[TMEM_LOCAL_SESSION_LEN], bool pulled,
			 struct tmemd_session *out, struct tmemd_client **client)
{
	struct tmem_ident id;
	int rc;

	memset(out, 0, sizeof(*out));
	/* Lent to a peer and in doubt (daemon/migrate/): the one that
	 * settles it says where it lives; until then, nowhere. */
	if (tmemd_clients_held(reg, name))
		return -EBUSY;
	if (!token_zero(token_in)) {
		rc = resume(reg, name, token_in, out, client);
		/* Not here: a client that migrated to this host, whose pages
		 * a peer may still hold parked (daemon/migrate/)? */
		if (rc == 1 && !pulled && tmemd_clients_may_pull(reg))
			return 1;
		if (rc <= 0)
			return rc;
		/* Not recovered (expired, or never ours): start over under a
		 * new token, so the stale one can never claim the new client. */
	}
	rc = token_new(out->token);
	if (rc)
		return rc;
	id = ident_of(out->token);
	return tmemd_client_attach(reg, name, "local", -1, &id, client, &out->resumed);
}
