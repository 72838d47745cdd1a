/* SPDX-License-Identifier: MIT */
/* The key file (mig_tls.h): "NAME HEX" lines.  Refused when another user
 * could read it, since it is the link's only secret. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "migrate/mig_tls.h"
#include "tmem_names.h"

static int parse_line(char *line, struct mig_keys *k)
{
	/* One byte more than a valid field (refused below), and the NUL. */
	char name[MIG_HOST_MAX + 1], hex[2 * MIG_KEY_LEN + 2];
	int n;

	_Static_assert(MIG_HOST_MAX == 64 && MIG_KEY_LEN == 32, "the widths below");
	if (sscanf(line, "%64s %65s %n", name, hex, &n) != 2 || line[n] != '\0')
		return -EINVAL;
	if (!tmem_name_valid(name) || strlen(name) >= MIG_HOST_MAX || strlen(hex) != 2 * MIG_KEY_LEN)
		return -EINVAL;
	if (k->n == MIG_MAX_KEYS || mig_keys_find(k, name))
		return -E2BIG;
	for (unsigned i = 0; i < MIG_KEY_LEN; i++) {
		int hi = tmem_hex_val(hex[2 * i]), lo = tmem_hex_val(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		k->key[k->n][i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(k->name[k->n++], name, strlen(name) + 1);
	return 0;
}

int mig_keys_load(const char *path, struct mig_keys *out, char *why, size_t why_len)
{
	char line[256];
	struct stat st;
	unsigned lineno = 0;
	int fd, rc = 0;
	FILE *f;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		snprintf(why, why_len, "%s: %s", path, strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		snprintf(why, why_len, "%s: must be a regular file only its owner can read (chmod 600)",
			 path);
		close(fd);
		return -EPERM;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t");

		lineno++;
		p[strcspn(p, "\r\n#")] = '\0';
		if (!*p)
			continue;
		rc = parse_line(p, out);
		if (rc)
			snprintf(why, why_len, "%s:%u: want NAME and 64 hex digits (32 bytes), "
				 "each name once, at most %u lines", path, lineno, MIG_MAX_KEYS);
	}
	fclose(f);
	if (!rc && !out->n) {
		snprintf(why, why_len, "%s: no keys", path);
		rc = -EINVAL;
	}
	return rc;
}

const uint8_t *mig_keys_find(const struct mig_keys *k, const char *name)
{
	for (unsigned i = 0; i < k->n; i++)
		if (!strcmp(k->name[i], name))
			return k->key[i];
	return NULL;
}
