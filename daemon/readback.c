/* SPDX-License-Identifier: MIT */
/* The read-back threads (readback.h).  Lock order: p->lock only. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "readback.h"

struct tmemd_readbacks {
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct tmemd_readback_job *head, *tail;   /* FIFO; lock */
	bool stop;                                 /* lock */
	unsigned nr;
	pthread_t threads[];
};

static void run(struct tmemd_readback_job *job)
{
	void (*wake)(void *) = job->wake;
	void *ctx = job->wake_ctx;

	job->ret = store_readback_finish(&job->rb, job->dst);
	/* Release: the page and ret are written before the worker sees done. */
	atomic_store_explicit(&job->done, true, memory_order_release);
	if (wake)
		wake(ctx);
}

static void *readback_main(void *arg)
{
	struct tmemd_readbacks *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct tmemd_readback_job *job = p->head;

		if (!job) {
			if (p->stop)
				break;
			pthread_cond_wait(&p->work, &p->lock);
			continue;
		}
		p->head = job->next;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->lock);
		run(job);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int tmemd_readbacks_create(unsigned threads, struct tmemd_readbacks **out)
{
	struct tmemd_readbacks *p = calloc(1, sizeof(*p) + threads * sizeof(pthread_t));
	int rc = 0;

	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	for (; p->nr < threads; p->nr++) {
		rc = pthread_create(&p->threads[p->nr], NULL, readback_main, p);
		if (rc)
			break;
	}
	if (rc) {
		tmemd_readbacks_destroy(p);
		return -rc;
	}
	*out = p;
	return 0;
}

void tmemd_readbacks_submit(struct tmemd_readbacks *p, struct tmemd_readback_job *job)
{
	atomic_store_explicit(&job->done, false, memory_order_relaxed);
	job->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->tail)
		p->tail->next = job;
	else
		p->head = job;
	p->tail = job;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void tmemd_readbacks_destroy(struct tmemd_readbacks *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nr; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
