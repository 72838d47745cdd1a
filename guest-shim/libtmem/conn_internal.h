/* SPDX-License-Identifier: MIT */
/* libtmem internals: a connection, shared by tmem.c and reconnect.c. */
#ifndef TMEM_CONN_INTERNAL_H
#define TMEM_CONN_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "raw_internal.h"
#include "tmem.h"

#define SPIN_MIN_NS 10000u   /* 10 µs */
#define SPIN_MAX_NS 200000u  /* 200 µs */
#define SPIN_YIELD_NS 5000u  /* then sched_yield() between polls */
#define SLEEP_MS 1000

struct pending {
	int *result;
	void *dst;       /* GET: where the page goes */
	uint32_t slot;
	uint32_t op;
	struct tmem_req req; /* as sent, to settle it after a reconnect */
};

struct tmem_conn {
	struct tmem_raw_ring raw;
	pthread_mutex_t lock;       /* guards everything below */
	uint32_t mask;
	uint32_t req_prod_pvt;      /* requests pushed */
	uint32_t rsp_cons;          /* responses reaped */
	struct pending *pend;       /* nr_entries */
	uint32_t *free_slots;       /* FIFO of nr_free, nr_slots long */
	uint32_t free_head;         /* next slot to hand out */
	uint32_t nr_free;
	int dead;                   /* 0, or the -errno every call returns */
	uint64_t spin_ns;
	/* Reconnecting after tmemd restarts (reconnect.c). */
	char path[108];
	char name[TMEM_LOCAL_NAME_MAX];
	struct tmem_raw_session sess;
	uint32_t known_pools;       /* ids NEW_POOL gave and DESTROY_POOL did not take */
	uint32_t epoch;             /* bumped by each reconnect: older seqs are void */
	uint64_t reconnects;
	unsigned reconnect_ms;      /* 0: never reconnect */
	bool recovering;
	bool parked;                /* tmem_migrate() parked it and could not attach */
};


/* tmem.c: one request submitted and waited for, c->lock held.  Its
 * result, or the connection's -errno. */
int conn_call_locked(struct tmem_conn *c, struct tmem_req *req, const void *src,
		     void *dst);
/* tmem.c: an empty ring state for a new raw ring. */
void conn_reset_ring(struct tmem_conn *c);

/* reconnect.c: the connection died with -EPIPE; c->lock held.  Connects
 * again within c->reconnect_ms and settles the requests that were on the
 * old ring.  0 (c->epoch bumped), or the -errno the connection keeps. */
int conn_recover(struct tmem_conn *c);
/* $TMEM_RECONNECT_MS, or the default. */
unsigned conn_reconnect_window_ms(void);

#endif /* TMEM_CONN_INTERNAL_H */
