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
 *                     [-P MiB] [-E N]
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
 *   -P MiB     a progress line every MiB (default 64)
 *   -E N       with -r: a page whose swap-in fails (SIGBUS: the kernel's
 *              read of its swap slot failed) counts as an I/O error, not a
 *              checksum error, and the re-verify stops after N of them
 *              (make e2e-xen-migrate: the pages stayed on a host the guest
 *              left, and /dev/tmemswap0's reads fail after persist_wait_ms);
 *              it reads from the last page down, so the pages still in RAM
 *              (the verify pass touched them last) are checked before the
 *              first one that needs the swap device
 * Prints one line "E2E-WORKLOAD tag=... mib=... pages=... errors=N ..."
 * and exits 0 only when every page verified.  The verify pass also prints
 * "E2E-WORKLOAD-STALL tag=... at_mib=M s=S" for each gap of a second or
 * more between two pages (CLOCK_BOOTTIME, so a suspend for a migration
 * counts: the time the guest waited for its pages), and its result line
 * the longest gap (stall_max_s).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
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

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* Pages between two progress lines (-P; 64 MiB): under TCG a run takes minutes. */
static size_t progress_pages = 64 * 1024 * 1024 / PAGE_BYTES;

static void progress(const char *tag, const char *what, size_t page, double t0)
{
	if (page == 0 || page % progress_pages)
		return;
	printf("E2E-WORKLOAD-PROGRESS tag=%s %s %zu MiB in %.1f s\n", tag, what,
	       page * PAGE_BYTES >> 20, now_s() - t0);
	fflush(stdout);
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

struct args {
	long mib, factor;
	uint64_t seed;
	const char *tag;
	const char *reverify;
	int hold, zip;
	long io_max;
};

/*
 * -r: every page again.  With -E a page whose swap-in fails is an I/O
 * error: the fault's SIGBUS jumps back here, the page is counted and
 * skipped, and after io_max of them the pass stops; the pages are read
 * from the last down (those in RAM first).  A page that reads is checked
 * as in the first pass: errors= counts wrong data only.
 */
static void reverify(const struct args *a, uint8_t *mem, size_t pages)
{
	volatile uint64_t again = 0, io = 0, ok = 0;
	volatile size_t i;
	volatile double t1 = now_s(), tp = t1;

	if (a->io_max) {
		struct sigaction sa = { .sa_handler = on_sigbus };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
	}
	for (i = 0; i < pages; i++) {
		size_t p;

		if (a->io_max && sigsetjmp(bus_jmp, 1)) {
			io++;
			printf("E2E-WORKLOAD-IOERR tag=%s page=%zu after_s=%.1f\n", a->tag,
			       pages - 1 - (size_t)i, now_s() - tp);
			fflush(stdout);
			tp = now_s();
			if (io >= (uint64_t)a->io_max)
				break;
			continue;
		}
		p = a->io_max ? pages - 1 - i : i;
		if (check_page((const uint64_t *)(mem + p * PAGE_BYTES), p, a->seed) != 0)
			again++;
		else
			ok++;
		tp = now_s();
	}
	printf("E2E-WORKLOAD-REVERIFY tag=%s pages=%zu read=%" PRIu64 " errors=%" PRIu64
	       " io_errors=%" PRIu64 " verify_s=%.1f\n", a->tag, pages, ok + again, again, io, now_s() - t1);
	fflush(stdout);
}

static int parse_args(int argc, char **argv, struct args *a)
{
	int c;

	while ((c = getopt(argc, argv, "m:x:s:t:Hzr:P:E:")) != -1) {
		switch (c) {
		case 'm': a->mib = strtol(optarg, NULL, 0); break;
		case 'x': a->factor = strtol(optarg, NULL, 0); break;
		case 's': a->seed = strtoull(optarg, NULL, 0); break;
		case 't': a->tag = optarg; break;
		case 'H': a->hold = 1; break;
		case 'z': a->zip = 1; break;
		case 'r': a->reverify = optarg; break;
		case 'P':
			progress_pages = (size_t)strtoul(optarg, NULL, 0) * (1024 * 1024 / PAGE_BYTES);
			if (!progress_pages)
				return -EINVAL;
			break;
		case 'E': a->io_max = strtol(optarg, NULL, 0); break;
		default: return -EINVAL;
		}
	}
	if (a->mib < 0 || a->factor <= 0 || a->seed == 0 || a->io_max < 0 || optind != argc)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { .mib = 0, .factor = 2, .seed = 1, .tag = "workload" };
	uint64_t errors = 0, first_bad = UINT64_MAX;
	double t0, t1, t2;

	if (parse_args(argc, argv, &a) < 0) {
		fprintf(stderr, "usage: %s [-m MiB] [-x FACTOR] [-s SEED] [-t TAG] [-H] [-z] [-r FILE]"
			" [-P MiB] [-E N]\n", argv[0]);
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
	double last = clock_s(CLOCK_BOOTTIME), stall_max = 0;
	for (size_t i = 0; i < pages; i++) {
		progress(tag, "verify", i, t1);
		int bad = check_page((const uint64_t *)(mem + i * PAGE_BYTES), i, seed) != 0;
		double t = clock_s(CLOCK_BOOTTIME);

		if (t - last >= 1.0) {
			printf("E2E-WORKLOAD-STALL tag=%s at_mib=%zu s=%.1f\n", tag,
			       i * PAGE_BYTES >> 20, t - last);
			fflush(stdout);
		}
		if (t - last > stall_max)
			stall_max = t - last;
		last = t;
		if (!bad)
			continue;
		if (errors++ == 0)
			first_bad = i;
	}
	t2 = now_s();

	printf("E2E-WORKLOAD tag=%s mib=%ld pages=%zu errors=%" PRIu64 " first_bad=%" PRId64
	       " write_s=%.1f verify_s=%.1f stall_max_s=%.1f\n", tag, mib, pages, errors,
	       errors ? (int64_t)first_bad : (int64_t)-1, t1 - t0, t2 - t1, stall_max);
	fflush(stdout);
	if (a.hold && !errors) {
		printf("E2E-WORKLOAD-HOLD tag=%s\n", tag);
		fflush(stdout);
		while (a.reverify && access(a.reverify, F_OK) != 0)
			sleep(1);
		if (a.reverify)
			reverify(&a, mem, pages);
		for (;;)
			pause();
	}
	munmap(mem, pages * PAGE_BYTES);
	return errors ? 1 : 0;
}
