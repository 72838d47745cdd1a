/* SPDX-License-Identifier: MIT */
/* tmemctl top: the state kept between frames (cmd_top.c, top_frame.c). */
#ifndef TMEMCTL_TOP_H
#define TMEMCTL_TOP_H

#include "tmemctl.h"

#define TOP_MAX_CLIENTS 256

/* The column rows are sorted by (--sort KEY). */
enum top_sort {
	TOP_SORT_NAME, TOP_SORT_EPH, TOP_SORT_PERS, TOP_SORT_PUTS, TOP_SORT_GETS,
	TOP_SORT_HIT, TOP_SORT_EVICT, TOP_SORT_NR,
};

/* A client's counters at the previous frame. */
struct top_sample {
	char name[64];
	uint64_t puts, gets, succ_gets;
	uint64_t readbacks;   /* gets served from the host tier */
};

struct top {
	struct top_sample prev[TOP_MAX_CLIENTS];
	size_t nr_prev;
	double prev_time;     /* CLOCK_MONOTONIC seconds; 0 before the first */
	bool tty;
	enum top_sort sort;
};

/* "name", "eph", "pers", "puts", "gets", "hit", "evict": 0, else -1. */
int top_sort_parse(const char *text, enum top_sort *out);
/* A human_fn: one frame of stats, o->ctx the struct top. */
void top_frame(struct hout *o, json_t *stats);

#endif /* TMEMCTL_TOP_H */
