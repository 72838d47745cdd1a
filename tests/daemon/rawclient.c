/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rawclient.h"

int rawc_connect(struct rawc *c, const char *sock, const char *name)
{
	memset(c, 0, sizeof(*c));
	return tmem_raw_connect(sock, name, 8, 4, &c->ring);
}

void rawc_req(struct tmem_req *r, uint32_t op, int32_t pool)
{
	memset(r, 0, sizeof(*r));
	r->op = op;
	r->pool_id = pool;
	r->slot = TMEM_NO_SLOT;
}

int rawc_call(struct rawc *c, const struct tmem_req *req, struct tmem_rsp *rsp)
{
	struct tmem_ring_hdr *h = c->ring.region;
	union tmem_ring_entry *e = tmem_ring_entries(c->ring.region);
	uint32_t mask = c->ring.nr_entries - 1;

	memcpy(&e[c->prod & mask].req, req, sizeof(*req));
	c->prod++;
	tmem_store_release(&h->req_prod, c->prod);
	tmem_raw_kick(&c->ring);
	for (int i = 0; i < 5000; i++) {
		int rc;

		if (tmem_load_acquire(&h->rsp_prod) != c->cons) {
			memcpy(rsp, &e[c->cons & mask].rsp, sizeof(*rsp));
			c->cons++;
			return 0;
		}
		tmem_store_once(&h->rsp_event, c->cons + 1);
		tmem_full_barrier();
		if (tmem_load_acquire(&h->rsp_prod) != c->cons)
			continue;
		rc = tmem_raw_wait(&c->ring, 1);
		if (rc < 0)
			return rc;
	}
	return -ETIMEDOUT;
}

int rawc_wait_hangup(struct rawc *c, int timeout_ms)
{
	struct pollfd p = { .fd = c->ring.sock_fd, .events = POLLIN | POLLRDHUP };

	if (poll(&p, 1, timeout_ms) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLIN)))
		return 0;
	return -ETIMEDOUT;
}

int rawc_socket(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	ck_assert_uint_lt(strlen(sock), sizeof(sa.sun_path));
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

long rawc_send_fds(int fd, const void *buf, size_t len, const int *fds,
		   unsigned nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 16)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	ck_assert_uint_le(nfds, 16);
	if (nfds) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	return sendmsg(fd, &msg, MSG_NOSIGNAL);
}

int32_t rawc_hello(const char *sock, struct tmem_local_hello *h,
		   const int *fds, unsigned nfds)
{
	struct tmem_local_welcome w = { 0 };
	int fd = rawc_socket(sock);

	ck_assert_int_eq(rawc_send_fds(fd, h, sizeof(*h), fds, nfds), sizeof(*h));
	ck_assert_int_eq(recv(fd, &w, sizeof(w), 0), sizeof(w));
	close(fd);
	return w.status;
}

void rawc_good_hello(struct tmem_local_hello *h, const char *name)
{
	*h = (struct tmem_local_hello){
		.magic = TMEM_LOCAL_MAGIC, .version = TMEM_LOCAL_VERSION,
		.ring_version = TMEM_RING_VERSION, .nr_entries = 8, .nr_slots = 4,
		.region_size = tmem_region_size(8, 4),
	};
	snprintf((char *)h->name, sizeof(h->name), "%s", name);
}

int rawc_region_fd(uint64_t size, bool seal)
{
	int fd = memfd_create("hostile", MFD_ALLOW_SEALING);
	struct tmem_ring_hdr *h;

	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(h, MAP_FAILED);
	h->magic = TMEM_RING_MAGIC;
	h->version = TMEM_RING_VERSION;
	h->nr_entries = 8;
	h->nr_slots = 4;
	h->slot_offset = tmem_slot_offset(8);
	munmap(h, size);
	if (seal)
		ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	return fd;
}
