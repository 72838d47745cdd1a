/*
 * e2e-fileset: the read-cache workload of `make e2e-xen` (tests/xen/): a
 * checksummed file set on a filesystem over the tmemcache target.
 *
 * Every 4096-byte block of file F written in generation G holds: word 0 a
 * magic plus F, word 1 the block's index, word 2 G, words 3..510 a
 * splitmix64 stream seeded by (F, index, G), word 511 a checksum of words
 * 0..510.  DIR/manifest lists "F G BLOCKS" for every file that should
 * exist.  A verify reads every listed file and counts, per block:
 *   stale    checksum right but another file, block or generation: data
 *            some earlier write left (what a read cache must never return)
 *   corrupt  checksum wrong
 *   missing  the file or the block is not there
 *
 * usage: e2e-fileset -d DIR -t TAG [-m MiB] create|verify|mutate
 *   create  MiB of 4 MiB files, generation 1, fsync'd
 *   verify  read every listed file in full and check it
 *   mutate  overwrite every 5th file in place (generation + 1), truncate
 *           every 7th to half, delete every 11th, then write as many new
 *           files as were deleted (they reuse the freed blocks); fsync'd
 * Prints "E2E-FILESET tag=TAG phase=... files=N blocks=N stale=N
 * corrupt=N missing=N errors=N secs=S" and exits 0 only with errors=0.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "e2e_pattern.h"

#define BLOCK 4096u
#define WORDS (BLOCK / sizeof(uint64_t))
#define FILE_BLOCKS 1024u	/* 4 MiB */
#define CHUNK 32u		/* blocks per read()/write() */
#define MAX_FILES 4096
#define MAGIC 0x6663616300000000ull	/* "fcac" */

struct entry {
	uint32_t id, gen, blocks;
};

struct fileset {
	const char *dir;
	struct entry e[MAX_FILES];
	uint32_t n;
	uint64_t blocks, stale, corrupt, missing;
};

static void fill(uint64_t *w, uint32_t id, uint32_t idx, uint32_t gen)
{
	uint64_t st = ((uint64_t)id << 40) ^ ((uint64_t)gen << 32) ^ idx;

	w[0] = MAGIC | id;
	w[1] = idx;
	w[2] = gen;
	for (size_t i = 3; i < WORDS - 1; i++)
		w[i] = splitmix64(&st);
	w[WORDS - 1] = checksum(w, WORDS - 1);
}

static void path_of(const struct fileset *fs, uint32_t id, char *p, size_t n)
{
	snprintf(p, n, "%s/f%05u", fs->dir, id);
}

/* Writes blocks [from, to) of file id as generation gen (in place). */
static int write_file(struct fileset *fs, uint32_t id, uint32_t gen,
		      uint32_t from, uint32_t to)
{
	static uint64_t buf[CHUNK * WORDS];
	char p[512];
	int fd, err = 0;

	path_of(fs, id, p, sizeof(p));
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return -errno;
	for (uint32_t b = from; b < to && !err; b += CHUNK) {
		uint32_t k = to - b < CHUNK ? to - b : CHUNK;

		for (uint32_t i = 0; i < k; i++)
			fill(buf + i * WORDS, id, b + i, gen);
		if (pwrite(fd, buf, (size_t)k * BLOCK, (off_t)b * BLOCK) !=
		    (ssize_t)(k * BLOCK))
			err = -EIO;
	}
	if (!err && fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

/* Checks one block read back as block idx of entry e. */
static void check_block(struct fileset *fs, const uint64_t *w,
			const struct entry *e, uint32_t idx)
{
	fs->blocks++;
	if (w[WORDS - 1] != checksum(w, WORDS - 1))
		fs->corrupt++;
	else if (w[0] != (MAGIC | e->id) || w[1] != idx || w[2] != e->gen)
		fs->stale++;
}

static void verify_file(struct fileset *fs, const struct entry *e)
{
	static uint64_t buf[CHUNK * WORDS];
	char p[512];
	uint32_t b = 0;
	ssize_t got;
	int fd;

	path_of(fs, e->id, p, sizeof(p));
	fd = open(p, O_RDONLY);
	if (fd < 0) {
		fs->missing += e->blocks;
		return;
	}
	while (b < e->blocks &&
	       (got = read(fd, buf, (size_t)CHUNK * BLOCK)) > 0) {
		for (ssize_t i = 0; i + (ssize_t)BLOCK <= got &&
				    b < e->blocks; i += BLOCK)
			check_block(fs, buf + i / 8, e, b++);
	}
	fs->missing += e->blocks - b;
	if (read(fd, buf, BLOCK) != 0)	/* longer than listed: stale size */
		fs->stale++;
	close(fd);
}

static int save_manifest(const struct fileset *fs)
{
	char p[512], tmp[520];
	FILE *f;

	snprintf(p, sizeof(p), "%s/manifest", fs->dir);
	snprintf(tmp, sizeof(tmp), "%s.new", p);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	for (uint32_t i = 0; i < fs->n; i++)
		fprintf(f, "%u %u %u\n", fs->e[i].id, fs->e[i].gen,
			fs->e[i].blocks);
	if (fflush(f) || fsync(fileno(f))) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return rename(tmp, p) ? -errno : 0;
}

static int load_manifest(struct fileset *fs)
{
	char p[512];
	FILE *f;
	struct entry e;

	snprintf(p, sizeof(p), "%s/manifest", fs->dir);
	f = fopen(p, "r");
	if (!f)
		return -errno;
	fs->n = 0;
	while (fs->n < MAX_FILES &&
	       fscanf(f, "%u %u %u", &e.id, &e.gen, &e.blocks) == 3)
		fs->e[fs->n++] = e;
	fclose(f);
	return fs->n ? 0 : -ENOENT;
}

static int do_create(struct fileset *fs, uint32_t mib)
{
	uint32_t nfiles = mib / 4;
	int err;

	if (!nfiles || nfiles > MAX_FILES / 2)
		return -EINVAL;
	for (fs->n = 0; fs->n < nfiles; fs->n++) {
		fs->e[fs->n] = (struct entry){ fs->n, 1, FILE_BLOCKS };
		err = write_file(fs, fs->n, 1, 0, FILE_BLOCKS);
		if (err)
			return err;
	}
	return save_manifest(fs);
}

static int do_verify(struct fileset *fs)
{
	int err = load_manifest(fs);

	for (uint32_t i = 0; !err && i < fs->n; i++)
		verify_file(fs, &fs->e[i]);
	return err;
}

static int truncate_half(struct fileset *fs, struct entry *e)
{
	char p[512];

	path_of(fs, e->id, p, sizeof(p));
	e->blocks /= 2;
	return truncate(p, (off_t)e->blocks * BLOCK) ? -errno : 0;
}

/* Deleted entries are dropped from the list; returns how many. */
static int delete_some(struct fileset *fs, uint32_t *deleted)
{
	char p[512];
	uint32_t i, k = 0;

	for (i = 0; i < fs->n; i++) {
		if (i % 11 == 3) {
			path_of(fs, fs->e[i].id, p, sizeof(p));
			if (unlink(p))
				return -errno;
			continue;
		}
		fs->e[k++] = fs->e[i];
	}
	*deleted = fs->n - k;
	fs->n = k;
	sync();
	return 0;
}

static int do_mutate(struct fileset *fs)
{
	uint32_t i, deleted = 0, next;
	int err = load_manifest(fs);

	for (i = 0; !err && i < fs->n; i++) {
		struct entry *e = &fs->e[i];

		if (i % 5 == 0) {
			e->gen++;
			err = write_file(fs, e->id, e->gen, 0, e->blocks);
		} else if (i % 7 == 1) {
			err = truncate_half(fs, e);
		}
	}
	if (!err)
		err = delete_some(fs, &deleted);
	next = fs->n ? fs->e[fs->n - 1].id + 1 : 0;
	for (i = 0; !err && i < deleted && fs->n < MAX_FILES; i++, next++) {
		fs->e[fs->n++] = (struct entry){ next, 1, FILE_BLOCKS };
		err = write_file(fs, next, 1, 0, FILE_BLOCKS);
	}
	return err ?: save_manifest(fs);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct fileset fs;
	const char *tag = "fileset", *phase;
	uint32_t mib = 600;
	uint64_t errors;
	double t0;
	int c, err;

	while ((c = getopt(argc, argv, "d:t:m:")) != -1) {
		if (c == 'd')
			fs.dir = optarg;
		else if (c == 't')
			tag = optarg;
		else if (c == 'm')
			mib = (uint32_t)strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (!fs.dir || optind != argc - 1)
		return 2;
	phase = argv[optind];
	t0 = now_s();
	if (!strcmp(phase, "create"))
		err = do_create(&fs, mib);
	else if (!strcmp(phase, "verify"))
		err = do_verify(&fs);
	else if (!strcmp(phase, "mutate"))
		err = do_mutate(&fs);
	else
		return 2;
	errors = fs.stale + fs.corrupt + fs.missing + (err != 0);
	printf("E2E-FILESET tag=%s phase=%s files=%u blocks=%" PRIu64
	       " stale=%" PRIu64 " corrupt=%" PRIu64 " missing=%" PRIu64
	       " errors=%" PRIu64 " rc=%d secs=%.1f\n", tag, phase, fs.n,
	       fs.blocks, fs.stale, fs.corrupt, fs.missing, errors, err,
	       now_s() - t0);
	return errors ? 1 : 0;
}
