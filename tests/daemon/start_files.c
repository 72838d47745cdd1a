/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "start_files.h"

void start_write_state(const char *path, size_t bytes)
{
	FILE *f = fopen(path, "w");
	long n;

	ck_assert_ptr_nonnull(f);
	fputs("{\"version\": 2, \"clients\": {", f);
	/* CTL_STATE_MAX_CLIENTS entries, each setting set. */
	for (unsigned i = 0; i < 4096; i++)
		fprintf(f, "%s\n  \"vm%04u\": {\"weight\": %u, \"ephemeral_max_pages\": %u, "
			"\"persistent_max_pages\": null, \"compress\": \"lz4\", "
			"\"frozen\": false}", i ? "," : "", i, 1 + i % 1000, 1024 + i);
	fputs("\n}, \"shared_auth\": []}\n", f);
	n = ftell(f);
	ck_assert_int_le(n, (long)bytes);
	for (; n < (long)bytes; n++)
		fputc(n % 80 == 79 ? '\n' : ' ', f);
	ck_assert_int_eq(fclose(f), 0);
}

void start_write_garbage(const char *path, size_t bytes)
{
	FILE *f = fopen(path, "w");
	static char buf[1 << 16];
	unsigned long long x = 0x9e3779b97f4a7c15ull;

	ck_assert_ptr_nonnull(f);
	for (size_t done = 0; done < bytes;) {
		size_t k = bytes - done < sizeof(buf) ? bytes - done : sizeof(buf);

		for (size_t i = 0; i < k; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (char)(x >> 24);
		}
		if (done == 0)
			buf[0] = '{';
		ck_assert_uint_eq(fwrite(buf, 1, k, f), k);
		done += k;
	}
	ck_assert_int_eq(fclose(f), 0);
}

double start_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
