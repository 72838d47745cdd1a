/* SPDX-License-Identifier: MIT */
/* Reading the host's memory state (host_mem.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_mem.h"

static void path_from_env(char *dst, size_t len, const char *env, const char *dflt)
{
	const char *v = getenv(env);

	snprintf(dst, len, "%s", v ? v : dflt);
}

/* tmemd's cgroup v2 directory, from /proc/self/cgroup's "0::/path". */
static void own_cgroup(char *dst, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "re");

	dst[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (snprintf(dst, len, "/sys/fs/cgroup%s", line + 3) >= (int)len)
			dst[0] = '\0';
		break;
	}
	fclose(f);
}

void tmemd_host_mem_paths(struct tmemd_host_mem_paths *p)
{
	char cg[256];

	path_from_env(p->meminfo, sizeof(p->meminfo), "TMEMD_MEMINFO", "/proc/meminfo");
	own_cgroup(cg, sizeof(cg));
	path_from_env(p->cgroup, sizeof(p->cgroup), "TMEMD_CGROUP", cg);
	/* The cgroup's own stalls where cgroup v2 keeps them (not in the
	 * root cgroup, nor under v1), else the whole system's. */
	if (getenv("TMEMD_PSI") || !p->cgroup[0] ||
	    snprintf(p->psi, sizeof(p->psi), "%s/memory.pressure", p->cgroup) >= (int)sizeof(p->psi) ||
	    access(p->psi, R_OK) != 0)
		path_from_env(p->psi, sizeof(p->psi), "TMEMD_PSI", "/proc/pressure/memory");
}

/* A small file whole, NUL-terminated; -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

static int parse_meminfo(const char *text, struct tmemd_host_mem *out)
{
	const char *t = strstr(text, "MemTotal:"), *a = strstr(text, "MemAvailable:");
	unsigned long long kb;

	if (!t || !a || sscanf(t, "MemTotal: %llu kB", &kb) != 1)
		return -EINVAL;
	out->total = kb * 1024;
	if (sscanf(a, "MemAvailable: %llu kB", &kb) != 1)
		return -EINVAL;
	out->available = kb * 1024;
	return 0;
}

/* "some avg10=... total=N": the cumulative stall, microseconds. */
static void read_psi(const char *path, struct tmemd_host_mem *out)
{
	char buf[512];
	const char *t;

	if (read_small(path, buf, sizeof(buf)) < 0 || strncmp(buf, "some ", 5) != 0)
		return;
	t = strstr(buf, "total=");
	if (t && sscanf(t, "total=%" SCNu64, &out->stall_usec) == 1)
		out->have_psi = true;
}

/* A "key value" line of a cgroup's memory.stat, 0 when missing. */
static uint64_t stat_field(const char *stat, const char *key)
{
	size_t n = strlen(key);

	for (const char *l = stat; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, key, n) == 0 && l[n] == ' ')
			return strtoull(l + n + 1, NULL, 10);
	return 0;
}

/* Room under one cgroup's memory.max: what it may still charge, plus
 * its page cache, which the kernel reclaims first (not its shmem: that
 * is tmemd's own arena). */
static bool cgroup_room(const char *dir, uint64_t *room, uint64_t *limit)
{
	char path[300], buf[8192];
	unsigned long long max, cur;
	uint64_t file, shmem;

	snprintf(path, sizeof(path), "%s/memory.max", dir);
	if (read_small(path, buf, sizeof(buf)) < 0 || sscanf(buf, "%llu", &max) != 1)
		return false; /* "max", or no memory controller */
	snprintf(path, sizeof(path), "%s/memory.current", dir);
	if (read_small(path, buf, sizeof(buf)) < 0 || sscanf(buf, "%llu", &cur) != 1)
		return false;
	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	if (read_small(path, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	file = stat_field(buf, "file");
	shmem = stat_field(buf, "shmem");
	*room = (max > cur ? max - cur : 0) + (file > shmem ? file - shmem : 0);
	*limit = max;
	return true;
}

/* The least room under memory.max in dir and its parents. */
static void apply_cgroup(const char *dir, struct tmemd_host_mem *out)
{
	char d[256];
	char *slash;

	snprintf(d, sizeof(d), "%s", dir);
	while (d[0] && strcmp(d, "/sys/fs/cgroup") != 0) {
		uint64_t room, limit;

		if (cgroup_room(d, &room, &limit) && room < out->available) {
			out->available = room;
			out->cgroup_limit = limit;
			out->cgroup_limited = true;
		}
		slash = strrchr(d, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
}

int tmemd_host_mem_read(const struct tmemd_host_mem_paths *p, struct tmemd_host_mem *out)
{
	char buf[8192];
	int ret;

	memset(out, 0, sizeof(*out));
	ret = read_small(p->meminfo, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	ret = parse_meminfo(buf, out);
	if (ret < 0)
		return ret;
	if (p->cgroup[0])
		apply_cgroup(p->cgroup, out);
	read_psi(p->psi, out);
	return 0;
}
