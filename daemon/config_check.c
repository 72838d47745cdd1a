/* SPDX-License-Identifier: MIT */
/*
 * Host-dependent checks of a parsed configuration (config_check.h).  Each
 * check is the one the start itself relies on, made earlier: the admin
 * group is the control server's getgrnam_r(), the allow-list is the xen
 * backend's parser, the transport is tmemd_transport_find(), so the
 * answer here and at the start cannot drift apart.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "config_check.h"
#include "size.h"
#include "transport.h"
#include "xen/allow.h"

static int check_group(const char *name, char *err, size_t errlen)
{
	struct group gr, *res = NULL;
	char buf[16384];
	int rc;

	if (!name[0])
		return 0;
	rc = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
	if (!rc && res)
		return 0;
	snprintf(err, errlen, "control-admin-group = %s: %s; create the group (groupadd) "
		 "or remove the key (root only)", name,
		 rc ? strerror(rc) : "no such group");
	return rc ? -rc : -ENOENT;
}

static int check_allow(const char *spec, char *err, size_t errlen)
{
	struct tmemd_xen_allow a;
	const char *why = "bad list";

	if (!tmemd_xen_allow_parse(spec, &a, &why))
		return 0;
	snprintf(err, errlen, "xen-domains = %s: %s (want ids, ranges N-M and names, "
		 "comma-separated, or all)", spec, why);
	return -EINVAL;
}

/* "1.5 GiB" or "100.0 TiB", for a sentence. */
static void human(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 1ull << 40)
		snprintf(buf, len, "%.1f TiB", (double)bytes / (double)(1ull << 40));
	else
		snprintf(buf, len, "%.1f GiB", (double)bytes / (double)(1ull << 30));
}

static int check_memory(uint64_t bytes, char *err, size_t errlen)
{
	uint64_t ram = tmemd_host_ram_bytes();
	char want[32], have[32];

	/* auto follows the host; a size is a ceiling, which only the host's
	 * RAM makes sense for (under Xen, auto also follows dom0's max:). */
	if (!bytes || bytes == TMEMD_MEMORY_AUTO || !ram || bytes <= ram)
		return 0;
	human(bytes, want, sizeof(want));
	human(ram, have, sizeof(have));
	snprintf(err, errlen, "memory = %s is more than this host's RAM (%s); give a "
		 "smaller size or N%% of RAM", want, have);
	return -EINVAL;
}

/* The folder that holds path, in dir ("/" for a path in the root). */
static void parent_of(const char *path, char *dir, size_t len)
{
	char *slash;

	snprintf(dir, len, "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';
}

/* The folder that will hold path exists (mkdir and open do not make it). */
static int check_parent(const char *key, const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct stat st;

	if (!path[0])
		return 0;
	parent_of(path, dir, sizeof(dir));
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	snprintf(err, errlen, "%s = %s: its folder %s %s; create it first", key, path, dir,
		 stat(dir, &st) == 0 ? "is not a folder" : "does not exist");
	return -ENOENT;
}

/* As arena.c's check of the open file: a disk file's pages would be
 * written back, and tmem is RAM. */
static int check_arena_fs(const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct statfs sf;

	if (!path[0])
		return 0;
	parent_of(path, dir, sizeof(dir));
	if (statfs(dir, &sf) != 0 || sf.f_type == TMPFS_MAGIC || sf.f_type == HUGETLBFS_MAGIC)
		return 0;  /* unreadable: the start says why */
	snprintf(err, errlen, "arena = %s: %s is not on tmpfs or hugetlbfs (the arena is "
		 "memory, not a disk file); use a path under /dev/shm or /run", path, dir);
	return -EINVAL;
}

/* The host tier: both keys or neither (its size is part of its header:
 * a guess would be refused next time). */
static int check_spill(const struct tmemd_config *cfg, char *err, size_t errlen)
{
	if (!cfg->spill_path[0] && !cfg->spill_bytes)
		return 0;
	if (!cfg->spill_path[0] || !cfg->spill_bytes) {
		snprintf(err, errlen, "%s: the host tier needs both spill = PATH and "
			 "spill-size = SIZE", cfg->spill_path[0] ? "spill-size" : "spill");
		return -EINVAL;
	}
	return check_parent("spill", cfg->spill_path, err, errlen);
}

int tmemd_config_check(const struct tmemd_config *cfg, char *err, size_t errlen)
{
	const char *why = NULL;
	int rc;

	rc = check_group(cfg->control_admin_group, err, errlen);
	if (!rc)
		rc = check_allow(cfg->xen_domains, err, errlen);
	if (!rc)
		rc = check_memory(cfg->memory_bytes, err, errlen);
	if (!rc && !tmemd_transport_find(cfg->transport, &why)) {
		snprintf(err, errlen, "transport = %s: %s", cfg->transport, why);
		rc = -ENOTSUP;
	}
	if (!rc)
		rc = check_parent("runtime-dir", cfg->runtime_dir, err, errlen);
	if (!rc)
		rc = check_parent("arena", cfg->arena_path, err, errlen);
	if (!rc)
		rc = check_arena_fs(cfg->arena_path, err, errlen);
	if (!rc)
		rc = check_spill(cfg, err, errlen);
	return rc;
}
