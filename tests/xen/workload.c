/*
 * e2e-workload: the guest workload of `make e2e-xen` (tests/xen/).
 *
 * Fills anonymous memory of about twice the guest's RAM with checksummed
 * pages, then reads every page back and verifies it, so the kernel must
 * swap most of it out and in again (through tmem_shim.ko to tmemd).
 *
 * Each 4096-byte page holds: word 0 a magic plus the page's index, word 1
 * the run's seed, words 2..510 a splitmix64 stream seeded by (seed, index),
 * word 511 a checksum of words 0..510.  With -z the second half of words
 * 2..510 repeats the first eight words of the stream instead, so tmemd's
 * lz4 stores the page in about half its size (issue 16: the e2e guest
 * whose compression ratio is printed); the page is still unique to its
 * (seed, index) and never same-filled.  A page that comes back with the
 * wrong index (misplaced), the wrong seed (stale, from an earlier run) or
 * a bad checksum (corrupt) counts as one error.
 *
 * usage: e2e-workload [-m MiB] [-x FACTOR] [-s SEED] [-t TAG] [-H] [-z] [-r FILE]
 *   -m MiB     memory to fill (default: FACTOR x MemTotal)
 *   -x FACTOR  multiple of MemTotal when -m is not given (default 2)
 *   -s SEED    run seed (default 1); use a new one for each run
 *   -t TAG     name printed in the result line
 *   -H         hold: after verifying, keep the memory (and so its swapped
 *              pages) and sleep until killed, so the harness can look at
 *              tmemd's view of a guest with pages in tmem and destroy it
 *   -z         half-compressible pages (above)
 *   -r FILE    with -H: once FILE exists, verify every page again and
 *              print "E2E-WORKLOAD-REVERIFY tag=... errors=N", then hold
 *              (the e2e's elastic-pool case: the pages were in tmem while
 *              dom0 took memory back from the pool)
 * Prints one line "E2E-WORKLOAD tag=... mib=... pages=... errors=N ..."
 * and exits 0 only when every page verified.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "e2e_pattern.h"

#define PAGE_BYTES 4096u
#define WORDS (PAGE_BYTES / sizeof(uint64_t))
#define MAGIC 0x746d656d00000000ull /* "tmem" in the high half */

#define HALF (WORDS / 2)

static void fill_page(uint64_t *w, uint64_t index, uint64_t seed, int zip)
{
	uint64_t st = seed * 0xd1342543de82ef95ull ^ index;
	size_t i;

	w[0] = MAGIC | index;
	w[1] = seed;
	for (i = 2; i < WORDS - 1; i++)
		w[i] = zip && i >= HALF ? w[2 + i % 8] : splitmix64(&st);
	w[WORDS - 1] = checksum(w, WORDS - 1);
}

/* 0 when the page is the one fill_page() wrote for (index, seed). */
static int check_page(const uint64_t *w, uint64_t index, uint64_t seed)
{
	if (w[0] != (MAGIC | index))
		return -1;
	if (w[1] != seed)
		return -2;
	if (w[WORDS - 1] != checksum(w, WORDS - 1))
		return -3;
	return 0;
}

static long mem_total_mib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kib = -1;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib > 0 ? kib / 1024 : -EINVAL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A line every 64 MiB: under TCG a run takes minutes. */
static void progress(const char *tag, const char *what, size_t page, double t0)
{
	if (page == 0 || page % (64 * 1024 * 1024 / PAGE_BYTES))
		return;
	printf("E2E-WORKLOAD-PROGRESS tag=%s %s %zu MiB in %.1f s\n", tag, what,
	       page * PAGE_BYTES >> 20, now_s() - t0);
	fflush(stdout);
}

struct args {
	long mib, factor;
	uint64_t seed;
	const char *tag;
	const char *reverify;
	int hold, zip;
};

static int parse_args(int argc, char **argv, struct args *a)
{
	int c;

	while ((c = getopt(argc, argv, "m:x:s:t:Hzr:")) != -1) {
		switch (c) {
		case 'm': a->mib = strtol(optarg, NULL, 0); break;
		case 'x': a->factor = strtol(optarg, NULL, 0); break;
		case 's': a->seed = strtoull(optarg, NULL, 0); break;
		case 't': a->tag = optarg; break;
		case 'H': a->hold = 1; break;
		case 'z': a->zip = 1; break;
		case 'r': a->reverify = optarg; break;
		default: return -EINVAL;
		}
	}
	if (a->mib < 0 || a->factor <= 0 || a->seed == 0 || optind != argc)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { .mib = 0, .factor = 2, .seed = 1, .tag = "workload" };
	uint64_t errors = 0, first_bad = UINT64_MAX;
	double t0, t1, t2;

	if (parse_args(argc, argv, &a) < 0) {
		fprintf(stderr, "usage: %s [-m MiB] [-x FACTOR] [-s SEED] [-t TAG] [-H] [-z] [-r FILE]\n",
			argv[0]);
		return 2;
	}
	long mib = a.mib, factor = a.factor;
	uint64_t seed = a.seed;
	const char *tag = a.tag;

	if (mib == 0) {
		long total = mem_total_mib();

		if (total < 0) {
			fprintf(stderr, "e2e-workload: cannot read MemTotal: %s\n", strerror((int)-total));
			return 2;
		}
		mib = total * factor;
	}
	size_t pages = (size_t)mib * (1024 * 1024 / PAGE_BYTES);
	uint8_t *mem = mmap(NULL, pages * PAGE_BYTES, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "e2e-workload: mmap %ld MiB: %s\n", mib, strerror(errno));
		return 2;
	}
	printf("E2E-WORKLOAD-START tag=%s mib=%ld pages=%zu seed=%" PRIu64 " zip=%d\n", tag, mib, pages,
	       seed, a.zip);
	fflush(stdout);

	t0 = now_s();
	for (size_t i = 0; i < pages; i++) {
		fill_page((uint64_t *)(mem + i * PAGE_BYTES), i, seed, a.zip);
		progress(tag, "write", i, t0);
	}
	t1 = now_s();
	for (size_t i = 0; i < pages; i++) {
		progress(tag, "verify", i, t1);
		if (check_page((const uint64_t *)(mem + i * PAGE_BYTES), i, seed) == 0)
			continue;
		if (errors++ == 0)
			first_bad = i;
	}
	t2 = now_s();

	printf("E2E-WORKLOAD tag=%s mib=%ld pages=%zu errors=%" PRIu64 " first_bad=%" PRId64
	       " write_s=%.1f verify_s=%.1f\n", tag, mib, pages, errors,
	       errors ? (int64_t)first_bad : (int64_t)-1, t1 - t0, t2 - t1);
	fflush(stdout);
	if (a.hold && !errors) {
		printf("E2E-WORKLOAD-HOLD tag=%s\n", tag);
		fflush(stdout);
		while (a.reverify && access(a.reverify, F_OK) != 0)
			sleep(1);
		if (a.reverify) {
			uint64_t again = 0;

			t1 = now_s();
			for (size_t i = 0; i < pages; i++)
				again += check_page((const uint64_t *)(mem + i * PAGE_BYTES), i, seed) != 0;
			printf("E2E-WORKLOAD-REVERIFY tag=%s pages=%zu errors=%" PRIu64 " verify_s=%.1f\n",
			       tag, pages, again, now_s() - t1);
			fflush(stdout);
		}
		for (;;)
			pause();
	}
	munmap(mem, pages * PAGE_BYTES);
	return errors ? 1 : 0;
}
