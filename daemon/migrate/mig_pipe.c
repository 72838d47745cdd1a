/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "migrate/mig_pipe.h"

static void *reader(void *arg)
{
	struct mig_pipe *p = arg;

	for (;;) {
		unsigned i;
		uint16_t type;
		uint32_t len;
		int rc;

		pthread_mutex_lock(&p->lock);
		while (p->count == MIG_PIPE_BUFS && !p->stop)
			pthread_cond_wait(&p->cond, &p->lock);
		i = (p->head + p->count) % MIG_PIPE_BUFS;
		if (p->stop) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		pthread_mutex_unlock(&p->lock);
		/* buf[i] is free: the consumer only holds buf[head]. */
		rc = mig_recv(p->link, &type, p->buf[i], TMEM_MIG_MAX_PAYLOAD, &len);
		if (!rc && type == TMEM_MIG_BATCH && p->check)
			rc = p->check(p->buf[i], len);
		pthread_mutex_lock(&p->lock);
		if (rc) {
			p->err = rc;
		} else {
			p->type[i] = type;
			p->len[i] = len;
			p->count++;
			if (type != TMEM_MIG_BATCH)
				p->err = 1;
		}
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		if (p->err)
			return NULL;
	}
}

int mig_pipe_start(struct mig_pipe *p, struct mig_link *link,
		   int (*check)(const uint8_t *buf, uint32_t len))
{
	int rc = 0;

	memset(p, 0, sizeof(*p));
	p->link = link;
	p->check = check;
	for (unsigned i = 0; i < MIG_PIPE_BUFS && !rc; i++) {
		p->buf[i] = malloc(TMEM_MIG_MAX_PAYLOAD);
		if (!p->buf[i])
			rc = -ENOMEM;
	}
	if (!rc) {
		pthread_mutex_init(&p->lock, NULL);
		pthread_cond_init(&p->cond, NULL);
		rc = -pthread_create(&p->reader, NULL, reader, p);
		if (rc) {
			pthread_mutex_destroy(&p->lock);
			pthread_cond_destroy(&p->cond);
		}
	}
	if (rc)
		for (unsigned i = 0; i < MIG_PIPE_BUFS; i++)
			free(p->buf[i]);
	return rc;
}

int mig_pipe_next(struct mig_pipe *p, uint16_t *type, const uint8_t **buf, uint32_t *len)
{
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	while (!p->count && !p->err)
		pthread_cond_wait(&p->cond, &p->lock);
	if (p->count) {
		*type = p->type[p->head];
		*buf = p->buf[p->head];
		*len = p->len[p->head];
	} else {
		rc = p->err < 0 ? p->err : -EPROTO;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void mig_pipe_done(struct mig_pipe *p)
{
	pthread_mutex_lock(&p->lock);
	p->head = (p->head + 1) % MIG_PIPE_BUFS;
	p->count--;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void mig_pipe_finish(struct mig_pipe *p)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->reader, NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	for (unsigned i = 0; i < MIG_PIPE_BUFS; i++)
		free(p->buf[i]);
}
