// SPDX-License-Identifier: MIT
/* The harness's environment and connection threads; see shim_harness.h. */
#include <stdio.h>
#include <unistd.h>

#include "shim_harness.h"

/* The doorbell: the current connection's kick eventfd, if any. */
static void harness_kick(void *ctx)
{
	struct shim_harness *h = ctx;

	pthread_mutex_lock(&h->conn_mu);
	if (h->raw_live)
		tmem_raw_kick(&h->raw);
	pthread_mutex_unlock(&h->conn_mu);
}

static int stopping(struct shim_harness *h)
{
	return __atomic_load_n(&h->stop, __ATOMIC_ACQUIRE);
}

/* The event-channel handler: reap on every doorbell until tmemd goes. */
static void *irq_main(void *arg)
{
	struct shim_harness *h = arg;

	while (!stopping(h)) {
		int r = tmem_raw_wait(&h->raw, 50);

		if (r < 0 && r != -EINTR && r != -EAGAIN)
			break;
		shim_ring_poll(&h->ring);
	}
	/* Backend gone (or stopping): as xenbus Closing, fail everyone. */
	__atomic_store_n(&h->ready, 0, __ATOMIC_RELEASE);
	shim_ring_detach(&h->ring);
	return NULL;
}

/* One connection's life: connect, attach, serve, tear down. */
static void serve_one(struct shim_harness *h)
{
	struct tmem_raw_ring raw;
	int32_t refusal = 0;
	uint32_t kept;
	pthread_t irq;

	if (tmem_raw_connect_session(h->path, "shim-harness", h->nr_entries,
				     h->nr_slots, &h->sess, &raw, &refusal) < 0)
		return;
	kept = h->sess.flags & TMEM_LOCAL_RESUMED ? h->sess.pools : 0;
	pthread_mutex_lock(&h->conn_mu);
	h->raw = raw;
	h->raw_live = 1;
	pthread_mutex_unlock(&h->conn_mu);
	if (shim_ring_attach(&h->ring, raw.region, raw.nr_entries,
			     raw.nr_slots) == 0 &&
	    pthread_create(&irq, NULL, irq_main, h) == 0) {
		shim_ops_resume(&h->ops, kept, kept);
		if (kept)
			__atomic_fetch_add(&h->resumes, 1, __ATOMIC_RELEASE);
		__atomic_fetch_add(&h->connects, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&h->ready, 1, __ATOMIC_RELEASE);
		pthread_join(irq, NULL);
	}
	shim_ring_detach(&h->ring);
	pthread_mutex_lock(&h->conn_mu);
	h->raw_live = 0;
	tmem_raw_disconnect(&h->raw);
	pthread_mutex_unlock(&h->conn_mu);
}

static void *conn_main(void *arg)
{
	struct shim_harness *h = arg;

	while (!stopping(h)) {
		serve_one(h);
		if (!stopping(h))
			usleep(20 * 1000);
	}
	return NULL;
}

int shim_harness_start(struct shim_harness *h, const char *path,
		       uint32_t nr_entries, uint32_t nr_slots,
		       uint32_t persist_wait_ms)
{
	memset(h, 0, sizeof(*h));
	if (!path || strlen(path) >= sizeof(h->path))
		return -EINVAL;
	snprintf(h->path, sizeof(h->path), "%s", path);
	h->nr_entries = nr_entries;
	h->nr_slots = nr_slots;
	h->raw.kick_fd = h->raw.sock_fd = -1;
	pthread_mutex_init(&h->conn_mu, NULL);
	shim_user_env_init(&h->uenv, harness_kick, h);
	shim_ring_init(&h->ring, &h->uenv.env);
	/* The module's default: a loaded machine (make check beside an e2e
	 * run) can keep a restarted tmemd from answering a resume for 2 s. */
	h->ring.timeout_ms = 5000;
	shim_ops_init(&h->ops, &h->ring);
	h->ops.persist_wait_ms = persist_wait_ms;
	if (pthread_create(&h->conn_thread, NULL, conn_main, h))
		return -EAGAIN;
	return 0;
}

int shim_harness_wait(struct shim_harness *h, uint64_t min_connects,
		      int timeout_ms)
{
	uint64_t end = shim_user_now_ms() + (uint64_t)timeout_ms;

	while (!(__atomic_load_n(&h->ready, __ATOMIC_ACQUIRE) &&
		 __atomic_load_n(&h->connects, __ATOMIC_ACQUIRE) >=
			 min_connects)) {
		if (shim_user_now_ms() >= end)
			return -ETIMEDOUT;
		usleep(2000);
	}
	return 0;
}

int shim_harness_quiesce(struct shim_harness *h, int timeout_ms)
{
	uint64_t end = shim_user_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		uint32_t inflight;

		shim_ring_poll(&h->ring);
		pthread_mutex_lock(&h->uenv.core_lock);
		inflight = h->ring.req_prod_pvt - h->ring.rsp_cons;
		pthread_mutex_unlock(&h->uenv.core_lock);
		if (!inflight)
			return 0;
		if (shim_user_now_ms() >= end)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

void shim_harness_stop(struct shim_harness *h)
{
	__atomic_store_n(&h->stop, 1, __ATOMIC_RELEASE);
	pthread_join(h->conn_thread, NULL);
	pthread_mutex_destroy(&h->conn_mu);
	shim_user_env_destroy(&h->uenv);
}
