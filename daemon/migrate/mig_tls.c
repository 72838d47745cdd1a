/* SPDX-License-Identifier: MIT */
/*
 * The migration link: TLS 1.3 with external PSK over TCP (mig_tls.h says
 * why).  Blocking sockets with timeouts: each link is served by its own
 * thread (mig_source.c) or by the attach that waits for it (mig_dest.c).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "migrate/mig_tls.h"
#include "migrate/mig_wire.h"

struct mig_tls {
	SSL_CTX *client, *server;
	struct mig_keys keys;
	char me[MIG_HOST_MAX];
};

struct mig_link {
	SSL *ssl;
	int fd;
	struct mig_tls *t;
	char peer[MIG_HOST_MAX];
};

/* TLS_AES_128_GCM_SHA256: the suite every TLS 1.3 stack has. */
static const unsigned char SUITE_ID[] = { 0x13, 0x01 };

static SSL_SESSION *psk_session(SSL *ssl, const uint8_t *key)
{
	const SSL_CIPHER *c = SSL_CIPHER_find(ssl, SUITE_ID);
	SSL_SESSION *s = c ? SSL_SESSION_new() : NULL;

	if (!s)
		return NULL;
	if (!SSL_SESSION_set1_master_key(s, key, MIG_KEY_LEN) || !SSL_SESSION_set_cipher(s, c) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}

static int use_psk(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		   SSL_SESSION **sess)
{
	struct mig_link *l = SSL_get_app_data(ssl);
	const uint8_t *key = mig_keys_find(&l->t->keys, l->t->me);

	(void)md; /* one suite, SHA-256: no other digest is ever asked for */
	*sess = key ? psk_session(ssl, key) : NULL;
	if (!*sess)
		return 0;
	*id = (const unsigned char *)l->t->me;
	*idlen = strlen(l->t->me);
	return 1;
}

static int find_psk(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
	struct mig_link *l = SSL_get_app_data(ssl);
	char name[MIG_HOST_MAX];
	const uint8_t *key;

	*sess = NULL;
	if (idlen == 0 || idlen >= sizeof(name))
		return 1; /* unknown: the handshake fails, we have no certificate */
	memcpy(name, id, idlen);
	name[idlen] = '\0';
	key = mig_keys_find(&l->t->keys, name);
	if (key) {
		*sess = psk_session(ssl, key);
		snprintf(l->peer, sizeof(l->peer), "%s", name);
	}
	return *sess ? 1 : 0;
}

static SSL_CTX *ctx_new(int server)
{
	SSL_CTX *c = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());

	if (!c)
		return NULL;
	if (!SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(c, "TLS_AES_128_GCM_SHA256")) {
		SSL_CTX_free(c);
		return NULL;
	}
	SSL_CTX_set_options(c, SSL_OP_NO_TICKET);
	SSL_CTX_set_num_tickets(c, 0);
	SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
	if (server)
		SSL_CTX_set_psk_find_session_callback(c, find_psk);
	else
		SSL_CTX_set_psk_use_session_callback(c, use_psk);
	return c;
}

int mig_tls_create(const struct mig_keys *keys, const char *me, struct mig_tls **out)
{
	struct mig_tls *t;

	if (!keys || !me || !mig_keys_find(keys, me) || strlen(me) >= MIG_HOST_MAX)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->keys = *keys;
	snprintf(t->me, sizeof(t->me), "%s", me);
	t->client = ctx_new(0);
	t->server = ctx_new(1);
	if (!t->client || !t->server) {
		mig_tls_destroy(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void mig_tls_destroy(struct mig_tls *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->client);
	SSL_CTX_free(t->server);
	OPENSSL_cleanse(&t->keys, sizeof(t->keys));
	free(t);
}

static int split_hostport(const char *hp, char host[256], char port[16])
{
	const char *colon = strrchr(hp, ':');
	size_t hl;

	if (!colon || colon == hp || !colon[1] || strlen(colon + 1) >= 16)
		return -EINVAL;
	hl = (size_t)(colon - hp);
	if (hp[0] == '[' && hl > 2 && hp[hl - 1] == ']') {
		hp++;
		hl -= 2;
	}
	if (hl >= 256)
		return -EINVAL;
	memcpy(host, hp, hl);
	host[hl] = '\0';
	snprintf(port, 16, "%s", colon + 1);
	return 0;
}

static void set_timeouts(int fd, unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int tcp_connect(const char *hostport, unsigned ms)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char host[256], port[16];
	int fd = -1, rc = split_hostport(hostport, host, port);

	if (rc)
		return rc;
	if (getaddrinfo(host, port, &hints, &ai))
		return -EHOSTUNREACH;
	rc = -ECONNREFUSED;
	for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		set_timeouts(fd, ms);
		if (connect(fd, a->ai_addr, a->ai_addrlen)) {
			rc = errno == EINPROGRESS || errno == EAGAIN ? -ETIMEDOUT : -errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	return fd >= 0 ? fd : rc;
}

int mig_listen(const char *hostport, uint16_t *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[256], ps[16];
	int fd, one = 1, rc = split_hostport(hostport, host, ps);

	if (rc)
		return rc;
	if (getaddrinfo(host[0] ? host : NULL, ps, &hints, &ai))
		return -EADDRNOTAVAIL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		rc = -errno;
		close(fd);
		goto out;
	}
	if (port)
		*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						       : ((struct sockaddr_in *)&ss)->sin_port);
	rc = fd;
out:
	freeaddrinfo(ai);
	return rc;
}

static int link_new(struct mig_tls *t, int fd, int server, struct mig_link **out)
{
	struct mig_link *l = calloc(1, sizeof(*l));

	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->fd = fd;
	l->t = t;
	l->ssl = SSL_new(server ? t->server : t->client);
	if (!l->ssl || !SSL_set_fd(l->ssl, fd)) {
		mig_link_close(l);
		return -ENOMEM;
	}
	SSL_set_app_data(l->ssl, l);
	*out = l;
	return 0;
}

int mig_connect(struct mig_tls *t, const char *hostport, unsigned timeout_ms,
		struct mig_link **out)
{
	struct mig_link *l;
	int fd = tcp_connect(hostport, timeout_ms), rc;

	if (fd < 0)
		return fd;
	rc = link_new(t, fd, 0, &l);
	if (rc)
		return rc;
	if (SSL_connect(l->ssl) != 1) {
		ERR_clear_error();
		mig_link_close(l);
		return -EACCES;
	}
	snprintf(l->peer, sizeof(l->peer), "%s", hostport);
	*out = l;
	return 0;
}

int mig_accept(struct mig_tls *t, int fd, unsigned timeout_ms, struct mig_link **out)
{
	struct mig_link *l;
	int rc;

	set_timeouts(fd, timeout_ms);
	rc = link_new(t, fd, 1, &l);
	if (rc)
		return rc;
	if (SSL_accept(l->ssl) != 1 || !l->peer[0]) {
		ERR_clear_error();
		mig_link_close(l);
		return -EACCES;
	}
	*out = l;
	return 0;
}

const char *mig_link_peer(const struct mig_link *l)
{
	return l->peer;
}

void mig_link_close(struct mig_link *l)
{
	if (!l)
		return;
	if (l->ssl) {
		SSL_shutdown(l->ssl);
		SSL_free(l->ssl);
	}
	close(l->fd);
	free(l);
}

static int io_error(SSL *ssl, int ret)
{
	int e = SSL_get_error(ssl, ret);

	ERR_clear_error();
	if (e == SSL_ERROR_ZERO_RETURN)
		return -EPIPE;
	/* The socket blocks with SO_RCVTIMEO and SO_SNDTIMEO: OpenSSL 3
	 * reports their expiry as WANT_READ or WANT_WRITE. */
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ||
	    (e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK)))
		return -ETIMEDOUT;
	return -EPIPE;
}

static int read_full(struct mig_link *l, void *p, size_t n)
{
	size_t got;

	while (n) {
		int ret = SSL_read_ex(l->ssl, p, n, &got);

		if (ret <= 0)
			return io_error(l->ssl, ret);
		p = (uint8_t *)p + got;
		n -= got;
	}
	return 0;
}

int mig_send(struct mig_link *l, uint16_t type, const void *p, uint32_t len)
{
	struct tmem_mig_hdr h = { .magic = TMEM_MIG_MAGIC, .version = TMEM_MIG_VERSION,
				  .type = type, .len = len };
	size_t done;
	int ret;

	ret = SSL_write_ex(l->ssl, &h, sizeof(h), &done);
	if (ret > 0 && len)
		ret = SSL_write_ex(l->ssl, p, len, &done);
	return ret > 0 ? 0 : io_error(l->ssl, ret);
}

int mig_recv(struct mig_link *l, uint16_t *type, void *p, uint32_t cap, uint32_t *len)
{
	struct tmem_mig_hdr h;
	int rc = read_full(l, &h, sizeof(h));

	if (rc)
		return rc;
	if (mig_hdr_check(&h) || h.len > cap)
		return -EPROTO;
	rc = read_full(l, p, h.len);
	if (rc)
		return rc;
	if (mig_payload_check(h.type, p, h.len))
		return -EPROTO;
	*type = h.type;
	*len = h.len;
	return 0;
}
