/* SPDX-License-Identifier: MIT */
/* The host tier's file and the background spiller (spiller.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "spiller.h"

/* Often enough that a burst of puts finds the reserve refilled; a pass
 * with nothing to do reads two counters. */
#define SPILL_PERIOD_MS 100

int tmemd_spill_open(const char *path, bool discard, char *why, size_t why_len)
{
	static const char zero[4096];
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct stat st;

	if (fd < 0) {
		snprintf(why, why_len, "spill = %s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))) {
		snprintf(why, why_len, "spill = %s: not a regular file or a block device", path);
		close(fd);
		return -EINVAL;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;

		snprintf(why, why_len, "spill = %s: %s", path,
			 err == EWOULDBLOCK ? "another tmemd is using it" : strerror(err));
		close(fd);
		return err == EWOULDBLOCK ? -EBUSY : -err;
	}
	if (discard && (pwrite(fd, zero, sizeof(zero), 0) != (ssize_t)sizeof(zero) ||
			fdatasync(fd) < 0)) {
		snprintf(why, why_len, "spill = %s: cannot clear it: %s", path, strerror(errno));
		close(fd);
		return -EIO;
	}
	return fd;
}

/* One pass; logs spills that failed since the last: the pages stayed in RAM. */
static void spill_pass(void *ctx)
{
	struct tmemd_spiller *sp = ctx;
	struct tmem_tier_info ti;
	int64_t got = tmem_policy_spill_reserve(sp->policy);

	store_tier_info(sp->store, &ti);
	if (ti.write_errors > sp->errors_seen) {
		log_err("host tier: %llu spill(s) failed (last: %s); their pages stay in RAM",
			(unsigned long long)(ti.write_errors - sp->errors_seen),
			strerror(-ti.last_error));
		sp->errors_seen = ti.write_errors;
	} else if (got < 0 && got != -ENOSPC) {
		log_warn("host tier: %s", strerror((int)-got));
	}
}

int tmemd_spiller_start(struct tmemd_spiller *sp, struct tmem_store *store,
			struct tmem_policy *policy)
{
	struct tmem_tier_info ti;

	memset(sp, 0, sizeof(*sp));
	store_tier_info(store, &ti);
	if (!ti.configured)
		return 0;
	sp->store = store;
	sp->policy = policy;
	sp->errors_seen = ti.write_errors;
	return tmemd_ticker_start(&sp->ticker, SPILL_PERIOD_MS, spill_pass, sp);
}

void tmemd_spiller_kick(struct tmemd_spiller *sp)
{
	tmemd_ticker_kick(&sp->ticker);
}

void tmemd_spiller_stop(struct tmemd_spiller *sp)
{
	tmemd_ticker_stop(&sp->ticker);
}
