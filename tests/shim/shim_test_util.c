// SPDX-License-Identifier: MIT
/* Helpers shared by the shim's two Check programs; see shim_test_util.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim_test_util.h"

int shim_test_quick(void)
{
	return getenv("TMEM_TEST_QUICK") != NULL;
}

void shim_test_fill(uint8_t *page, uint32_t seed)
{
	uint32_t i, x = seed * 2654435761u + 1;

	for (i = 0; i < SHIM_TEST_PAGE; i += 4) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		memcpy(page + i, &x, 4);
	}
}

int shim_test_same(const uint8_t *page, uint32_t seed)
{
	uint8_t want[SHIM_TEST_PAGE];

	shim_test_fill(want, seed);
	return memcmp(page, want, SHIM_TEST_PAGE) == 0;
}

struct swapper {
	struct shim_ops *o;
	unsigned int type;
	uint32_t n;
	uint32_t errors;
};

static void *swapper_main(void *arg)
{
	struct swapper *t = arg;
	uint8_t buf[SHIM_TEST_PAGE], out[SHIM_TEST_PAGE];
	uint32_t i, seed0 = t->type * 100000u;

	for (i = 0; i < t->n; i++) {
		shim_test_fill(buf, seed0 + i);
		t->errors += shim_fs_store(t->o, t->type, i, buf) != 0;
	}
	for (i = 0; i < t->n; i++)
		t->errors += shim_fs_load(t->o, t->type, i, out) != 0 ||
			     !shim_test_same(out, seed0 + i);
	return NULL;
}

uint32_t shim_test_swappers(struct shim_ops *o, int nthreads, uint32_t n)
{
	struct swapper t[8];
	pthread_t tid[8];
	uint32_t errors = 0;
	int i, started = 0;

	if (nthreads > 8)
		return 1;
	for (i = 0; i < nthreads; i++) {
		t[i] = (struct swapper){ .o = o, .type = (unsigned int)i,
					 .n = n };
		if (pthread_create(&tid[i], NULL, swapper_main, &t[i]))
			errors++;
		else
			started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(tid[i], NULL);
		errors += t[i].errors;
	}
	return errors;
}
