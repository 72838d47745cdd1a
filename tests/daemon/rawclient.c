/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>
#include <string.h>

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
