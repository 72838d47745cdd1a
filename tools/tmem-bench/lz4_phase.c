/* SPDX-License-Identifier: MIT */
/*
 * --corpus FILE: the pages of a corpus (tools/tmem-bench/make-corpus.sh)
 * as page content, and the phase lz4: one core's LZ4 compress rate on the
 * same pages the other phases put, measured in this run, so that tmemd's
 * pipelined puts with compress = lz4 can be set against it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4.h>

#include "bench.h"

int load_corpus(struct bench_opts *o, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *p = NULL;
	size_t bytes;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 4096) {
		fprintf(stderr, "tmem-bench: --corpus %s: not a file of 4 KiB pages\n", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	bytes = (size_t)st.st_size / 4096 * 4096;
	p = malloc(bytes);
	if (!p || read(fd, p, bytes) != (ssize_t)bytes) {
		fprintf(stderr, "tmem-bench: --corpus %s: cannot read it\n", path);
		free(p);
		close(fd);
		return -1;
	}
	close(fd);
	o->corpus = p;
	o->corpus_pages = bytes / 4096;
	o->content = CONTENT_CORPUS;
	return 0;
}

int phase_lz4(const struct bench_opts *o, json_t *out)
{
	uint64_t n = bench_npages(o), done = 0, bytes = 0, t0;
	char *pages = make_pages(o), dst[8192];

	if (!pages)
		return -ENOMEM;
	t0 = now_ns();
	while (now_ns() - t0 < 1000000000u)
		for (uint64_t i = 0; i < n; i++, done++)
			bytes += (uint64_t)LZ4_compress_default(pages + (i * 4096), dst, 4096,
								sizeof(dst));
	t0 = now_ns() - t0;
	json_object_set_new(out, "lz4", json_pack("{s:f, s:f, s:I}",
		"pages_per_s", (double)done * 1e9 / (double)t0,
		"compressed_share", (double)bytes / ((double)done * 4096),
		"pages", (json_int_t)n));
	free(pages);
	return 0;
}
