/* SPDX-License-Identifier: MIT */
/*
 * mig_pipe.c: the destination reads the next batches (decrypts them and
 * checks that every page decodes) on a thread of its own while it stores
 * the one it has, so the network, the decoding and the store overlap
 * instead of taking turns.  The reader
 * stops after the first message that is not a BATCH (END, or anything
 * else, which the consumer refuses), so the link is the consumer's again
 * once mig_pipe_finish() returns.
 */
#ifndef TMEMD_MIG_PIPE_H
#define TMEMD_MIG_PIPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "migrate/mig_tls.h"

#define MIG_PIPE_BUFS 3

struct mig_pipe {
	struct mig_link *link;
	pthread_t reader;
	pthread_mutex_t lock;      /* guards everything below */
	pthread_cond_t cond;
	uint8_t *buf[MIG_PIPE_BUFS];
	uint32_t len[MIG_PIPE_BUFS];
	uint16_t type[MIG_PIPE_BUFS];
	unsigned head, count;      /* filled: head .. head + count - 1 */
	int err;                   /* the reader's last word: -errno or 1 (done) */
	bool stop;
	/* Run by the reader on each BATCH before the consumer gets it:
	 * 0, or -errno (the reader stops with it). */
	int (*check)(const uint8_t *buf, uint32_t len);
};

/* Starts reading link, check (NULL: none) run on each BATCH.  0 or
 * -errno (nothing started). */
int mig_pipe_start(struct mig_pipe *p, struct mig_link *link,
		   int (*check)(const uint8_t *buf, uint32_t len));
/* The next message: 0 and its type, bytes and length (valid until
 * mig_pipe_done()), or the reader's -errno. */
int mig_pipe_next(struct mig_pipe *p, uint16_t *type, const uint8_t **buf, uint32_t *len);
void mig_pipe_done(struct mig_pipe *p);
/* Stops the reader (it may finish the message it is reading) and frees. */
void mig_pipe_finish(struct mig_pipe *p);

#endif /* TMEMD_MIG_PIPE_H */
