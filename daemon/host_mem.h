/* SPDX-License-Identifier: MIT */
/*
 * What the host can spare, as the kernel tells it: /proc/meminfo's
 * MemAvailable, the memory stall time of PSI, and the limit of tmemd's
 * own cgroup (v2) and its parents'.  Read afresh at each sample, so the
 * elastic pool (fallow.c) follows the host.  The paths can be pointed at
 * fake files (tmemd(8), ENVIRONMENT) so that tests drive the pressure.
 */
#ifndef TMEMD_HOST_MEM_H
#define TMEMD_HOST_MEM_H

#include <stdbool.h>
#include <stdint.h>

struct tmemd_host_mem_paths {
	char meminfo[256];  /* /proc/meminfo, or $TMEMD_MEMINFO */
	char psi[256];      /* the cgroup's memory.pressure, else /proc/pressure/memory; $TMEMD_PSI */
	char cgroup[256];   /* tmemd's cgroup v2 directory, "" without one; $TMEMD_CGROUP */
};

struct tmemd_host_mem {
	uint64_t total;      /* MemTotal, bytes */
	uint64_t available;  /* MemAvailable, or less under a cgroup limit */
	bool cgroup_limited; /* a cgroup limit was the smaller */
	uint64_t cgroup_limit; /* that cgroup's memory.max, bytes */
	bool have_psi;
	uint64_t stall_usec; /* PSI "some" total, cumulative */
};

/* The paths for this process (the environment's, else the kernel's). */
void tmemd_host_mem_paths(struct tmemd_host_mem_paths *p);
/* One sample: 0, or -errno when meminfo cannot be read (PSI and the
 * cgroup are optional). */
int tmemd_host_mem_read(const struct tmemd_host_mem_paths *p, struct tmemd_host_mem *out);

#endif /* TMEMD_HOST_MEM_H */
