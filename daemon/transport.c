/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <string.h>

#include "transport.h"

/* Preferred first: auto picks the first usable one. */
static const struct tmem_transport_ops *const transports[] = {
	&tmemd_transport_xen,
	&tmemd_transport_local,
};

const struct tmem_transport_ops *tmemd_transport_find(const char *name,
							const char **why)
{
	size_t n = sizeof(transports) / sizeof(transports[0]);

	for (size_t i = 0; i < n; i++) {
		const struct tmem_transport_ops *t = transports[i];

		if (strcmp(name, "auto") && strcmp(name, t->name))
			continue;
		if (t->usable())
			return t;
		if (strcmp(name, "auto")) {
			*why = "not usable on this host";
			return NULL;
		}
	}
	*why = strcmp(name, "auto") ? "not built into this tmemd"
				    : "no transport is usable";
	return NULL;
}
