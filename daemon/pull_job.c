/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pull_job.h"
#include "tmem_names.h"

struct tmemd_pull_job {
	struct tmemd_clients *reg;
	char name[TMEM_CLIENT_NAME_MAX];
	struct tmem_ident ident;
	uint32_t wait_ms;
	int wake_fd;
	pthread_t thread;
	int rc;
	uint64_t waited_ms;
	bool done;                   /* atomic: rc and waited_ms are set */
	bool stop;                   /* atomic: do not ask again */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* How long before asking again after rc, or 0: not again. */
static long retry_pause_ns(int rc)
{
	if (rc == -EAGAIN)	/* the peer's client has not let go yet */
		return 100 * 1000 * 1000;
	if (rc == -EHOSTDOWN)	/* a peer down: its tmemd may be restarting */
		return 500 * 1000 * 1000;
	return 0;
}

static void *pull_main(void *arg)
{
	struct tmemd_pull_job *j = arg;
	uint64_t one = 1, t0 = now_ms();
	struct timespec pause = { 0, 0 };
	int rc;

	for (;;) {
		rc = tmemd_clients_pull(j->reg, j->name, &j->ident);
		pause.tv_nsec = retry_pause_ns(rc);
		if (!pause.tv_nsec || now_ms() - t0 >= j->wait_ms ||
		    __atomic_load_n(&j->stop, __ATOMIC_RELAXED))
			break;
		nanosleep(&pause, NULL);
	}
	j->rc = rc;
	j->waited_ms = now_ms() - t0;
	__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
	if (write(j->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is full: the main loop is awake anyway. */
	}
	return NULL;
}

int tmemd_pull_job_start(struct tmemd_clients *reg, const char *name,
			 const struct tmem_ident *ident, uint32_t wait_ms, int wake_fd,
			 struct tmemd_pull_job **out)
{
	struct tmemd_pull_job *j = calloc(1, sizeof(*j));
	int rc;

	if (!j)
		return -ENOMEM;
	j->reg = reg;
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->ident = *ident;
	j->wait_ms = wait_ms;
	j->wake_fd = wake_fd;
	rc = -pthread_create(&j->thread, NULL, pull_main, j);
	if (rc) {
		free(j);
		return rc;
	}
	*out = j;
	return 0;
}

bool tmemd_pull_job_done(const struct tmemd_pull_job *j)
{
	return __atomic_load_n(&j->done, __ATOMIC_ACQUIRE);
}

void tmemd_pull_job_stop(struct tmemd_pull_job *j)
{
	__atomic_store_n(&j->stop, true, __ATOMIC_RELAXED);
}

int tmemd_pull_job_end(struct tmemd_pull_job *j, uint64_t *waited_ms)
{
	int rc;

	pthread_join(j->thread, NULL);
	rc = j->rc;
	if (waited_ms)
		*waited_ms = j->waited_ms;
	free(j);
	return rc;
}

const char *tmemd_pull_job_name(const struct tmemd_pull_job *j)
{
	return j->name;
}

const struct tmem_ident *tmemd_pull_job_ident(const struct tmemd_pull_job *j)
{
	return &j->ident;
}
