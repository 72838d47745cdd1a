/* SPDX-License-Identifier: MIT */
/*
 * The local transport's client side (proto/tmem_local.h): this process
 * creates the shared region (a sealed memfd) and the kick eventfd, and
 * passes them to tmemd in the hello message; tmemd's doorbells come back
 * as one-byte messages on the socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "raw_internal.h"
#include "tmem_local.h"

#define WELCOME_TIMEOUT_MS 10000

static int make_region(uint32_t nr_entries, uint32_t nr_slots, int *memfd,
		       void **region)
{
	uint64_t size = tmem_region_size(nr_entries, nr_slots);
	struct tmem_ring_hdr *h;
	void *p;
	int fd;

	fd = memfd_create("tmem-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	*memfd = fd;
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return -errno;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*region = p;
	h = p;
	h->magic = TMEM_RING_MAGIC;
	h->version = TMEM_RING_VERSION;
	h->nr_entries = nr_entries;
	h->nr_slots = nr_slots;
	h->slot_offset = tmem_slot_offset(nr_entries);
	h->req_prod = 0;
	h->rsp_event = 1;
	return 0;
}

static int send_hello(int sock, const char *name, uint32_t nr_entries,
		      uint32_t nr_slots, const int fds[TMEM_LOCAL_NR_FDS],
		      const struct tmem_raw_session *sess)
{
	struct tmem_local_hello h = {
		.magic = TMEM_LOCAL_MAGIC,
		.version = TMEM_LOCAL_VERSION,
		.ring_version = TMEM_RING_VERSION,
		.nr_entries = nr_entries,
		.nr_slots = nr_slots,
		.region_size = tmem_region_size(nr_entries, nr_slots),
	};
	union {
		char buf[CMSG_SPACE(sizeof(int) * TMEM_LOCAL_NR_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm;

	memcpy(h.name, name, strlen(name));
	if (sess)
		memcpy(h.session, sess->token, sizeof(h.session));
	memset(ctl.buf, 0, sizeof(ctl.buf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * TMEM_LOCAL_NR_FDS);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * TMEM_LOCAL_NR_FDS);
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		return errno ? -errno : -EIO;
	return 0;
}

static int recv_welcome(int sock, uint32_t *client_id, int32_t *refusal,
			struct tmem_raw_session *sess)
{
	struct tmem_local_welcome w;
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	ssize_t n;
	int rc = poll(&pfd, 1, WELCOME_TIMEOUT_MS);

	if (rc == 0)
		return -ETIMEDOUT;
	if (rc < 0)
		return -errno;
	n = recv(sock, &w, sizeof(w), 0);
	if (n < 0)
		return -errno;
	if (n == 0)   /* closed without a welcome: tmemd refused the connection */
		return -ECONNREFUSED;
	if (n != (ssize_t)sizeof(w) || w.magic != TMEM_LOCAL_MAGIC ||
	    w.version != TMEM_LOCAL_VERSION)
		return -EPROTO;
	if (w.status != 0) {
		*refusal = w.status < 0 ? w.status : -EPROTO;
		return -EPROTO;
	}
	*client_id = w.client_id;
	if (sess) {
		memcpy(sess->token, w.session, sizeof(sess->token));
		sess->flags = w.flags;
		sess->pools = w.pools;
	}
	return 0;
}

static int open_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

int tmem_raw_connect_status(const char *path, const char *name,
			    uint32_t nr_entries, uint32_t nr_slots,
			    struct tmem_raw_ring *out, int32_t *refusal)
{
	return tmem_raw_connect_session(path, name, nr_entries, nr_slots, NULL, out,
					refusal);
}

int tmem_raw_connect_session(const char *path, const char *name,
			     uint32_t nr_entries, uint32_t nr_slots,
			     struct tmem_raw_session *sess,
			     struct tmem_raw_ring *out, int32_t *refusal)
{
	int memfd = -1, fds[TMEM_LOCAL_NR_FDS];
	int rc;

	memset(out, 0, sizeof(*out));
	out->kick_fd = out->sock_fd = -1;
	if (!path || !name || !name[0] || strlen(name) >= TMEM_LOCAL_NAME_MAX ||
	    tmem_ring_geometry_check(nr_entries, nr_slots))
		return -EINVAL;
	out->nr_entries = nr_entries;
	out->nr_slots = nr_slots;
	rc = make_region(nr_entries, nr_slots, &memfd, &out->region);
	if (rc)
		goto out;
	out->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (out->kick_fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = open_socket(path);
	if (rc < 0)
		goto out;
	out->sock_fd = rc;
	fds[0] = memfd;
	fds[1] = out->kick_fd;
	rc = send_hello(out->sock_fd, name, nr_entries, nr_slots, fds, sess);
	if (!rc)
		rc = recv_welcome(out->sock_fd, &out->client_id, refusal, sess);
out:
	if (memfd >= 0)
		close(memfd); /* the mapping and tmemd's copy keep it alive */
	if (rc)
		tmem_raw_disconnect(out);
	return rc;
}

int tmem_raw_connect(const char *path, const char *name, uint32_t nr_entries,
		     uint32_t nr_slots, struct tmem_raw_ring *out)
{
	int32_t refusal;

	return tmem_raw_connect_status(path, name, nr_entries, nr_slots, out,
				       &refusal);
}

void tmem_raw_kick(const struct tmem_raw_ring *ring)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is saturated, a kick is pending anyway. */
	if (write(ring->kick_fd, &one, sizeof(one)) < 0)
		return;
}

/* Reads every doorbell message waiting: 1, or -EPIPE at EOF. */
static int drain_doorbells(int sock)
{
	uint8_t bells[64];

	for (;;) {
		ssize_t n = recv(sock, bells, sizeof(bells), MSG_DONTWAIT);

		if (n == 0)
			return -EPIPE;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 1 : -errno;
	}
}

int tmem_raw_wait(const struct tmem_raw_ring *ring, int timeout_ms)
{
	struct pollfd pfd = { .fd = ring->sock_fd, .events = POLLIN | POLLRDHUP };
	int rc = poll(&pfd, 1, timeout_ms);

	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	if (rc == 0)
		return 0;
	if (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR))
		return -EPIPE;
	return drain_doorbells(ring->sock_fd);
}

void tmem_raw_disconnect(struct tmem_raw_ring *ring)
{
	if (!ring)
		return;
	if (ring->region)
		munmap(ring->region, tmem_region_size(ring->nr_entries, ring->nr_slots));
	if (ring->kick_fd >= 0)
		close(ring->kick_fd);
	if (ring->sock_fd >= 0)
		close(ring->sock_fd);
	ring->region = NULL;
	ring->kick_fd = ring->sock_fd = -1;
}
