/* SPDX-License-Identifier: MIT */
/*
 * The xen-domains allow-list of tmemd.conf (man/tmemd.conf.5): which
 * domUs tmemd offers a tmem device to.  A comma-separated list of domain
 * ids ("7"), ranges ("1-100") and domain names ("web1"); empty or "all"
 * means every domU.
 */
#ifndef TMEMD_XEN_ALLOW_H
#define TMEMD_XEN_ALLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "tmem_store.h"

#define TMEMD_XEN_ALLOW_MAX 64
/* DOMID_FIRST_RESERVED - 1: larger ids are Xen's own (DOMID_IO, ...). */
#define TMEMD_XEN_DOMID_MAX 0x7fefu

struct tmemd_xen_allow_item {
	uint32_t lo, hi;                 /* a range; both 0 for a name */
	char name[TMEM_CLIENT_NAME_MAX]; /* "" for a range */
};

struct tmemd_xen_allow {
	bool all;
	unsigned nr;
	struct tmemd_xen_allow_item items[TMEMD_XEN_ALLOW_MAX];
};

/* 0, or -EINVAL with the reason in *why. */
int tmemd_xen_allow_parse(const char *spec, struct tmemd_xen_allow *out,
			  const char **why);

/* Whether domain domid called name (NULL or "" if unknown) is allowed. */
bool tmemd_xen_allow_match(const struct tmemd_xen_allow *a, uint32_t domid,
			   const char *name);

#endif /* TMEMD_XEN_ALLOW_H */
