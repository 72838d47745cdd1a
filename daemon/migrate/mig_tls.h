/* SPDX-License-Identifier: MIT */
/*
 * mig_tls.c: the link between two tmemds.  TLS 1.3 with an external
 * pre-shared key (OpenSSL, RFC 8446 section 2.2 "psk_dhe_ke"): each
 * side proves it holds the key, so both are authenticated, and the
 * (EC)DHE share gives every session fresh keys, so a recorded session
 * cannot be replayed into a new one.  No certificates, no tickets, no
 * early data.
 *
 * Why OpenSSL with PSK: the link needs mutual authentication between
 * hosts an administrator pairs by hand, with no PKI; TLS-PSK is the
 * protocol made for that, OpenSSL 3 (libssl-dev, Debian 12) implements
 * it, and nothing here builds a cipher or a handshake of its own.
 *
 * The key file (tmemd.conf migrate-key, mode 0600, man tmemd.conf(5)):
 * one line per host allowed on the link, "NAME HEX" where HEX is 64 hex
 * digits (32 random bytes, e.g. `openssl rand -hex 32`); '#' comments.
 * The same file goes to every host of the group.  A host connects as its
 * migrate-name with that name's key; it accepts a peer whose name is in
 * its file and who proves that name's key.
 */
#ifndef TMEMD_MIG_TLS_H
#define TMEMD_MIG_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "migrate/mig_proto.h"

#define MIG_KEY_LEN 32u
#define MIG_MAX_KEYS 64u
#define MIG_HOST_MAX 64u

struct mig_keys {
	unsigned n;
	char name[MIG_MAX_KEYS][MIG_HOST_MAX];
	uint8_t key[MIG_MAX_KEYS][MIG_KEY_LEN];
};

/* Reads path: 0, or -errno with why (a line number and reason). */
int mig_keys_load(const char *path, struct mig_keys *out, char *why, size_t why_len);
/* The key for name, or NULL. */
const uint8_t *mig_keys_find(const struct mig_keys *k, const char *name);

struct mig_tls;    /* an SSL_CTX with our callbacks: one per tmemd */
struct mig_link;   /* one authenticated connection */

/* me: this host's name (its key must be in keys).  0 or -errno. */
int mig_tls_create(const struct mig_keys *keys, const char *me, struct mig_tls **out);
void mig_tls_destroy(struct mig_tls *t);

/* Connects to "HOST:PORT" and authenticates (timeout_ms for connect and
 * each read or write).  0, -ECONNREFUSED/-ETIMEDOUT..., -EACCES when the
 * handshake fails (wrong key, not a tmemd). */
int mig_connect(struct mig_tls *t, const char *hostport, unsigned timeout_ms,
		struct mig_link **out);
/* A listening socket for "ADDR:PORT" (port 0: any; *port gets it). */
int mig_listen(const char *hostport, uint16_t *port);
/* Authenticates an accepted socket fd (taken): 0, or -EACCES. */
int mig_accept(struct mig_tls *t, int fd, unsigned timeout_ms, struct mig_link **out);
/* The peer's name, as its key file line says. */
const char *mig_link_peer(const struct mig_link *l);
void mig_link_close(struct mig_link *l);

/* One message: header checked, payload (up to cap bytes) checked for its
 * type.  0, -EPROTO (bad message), -EPIPE (closed), -ETIMEDOUT. */
int mig_send(struct mig_link *l, uint16_t type, const void *p, uint32_t len);
int mig_recv(struct mig_link *l, uint16_t *type, void *p, uint32_t cap, uint32_t *len);

#endif /* TMEMD_MIG_TLS_H */
