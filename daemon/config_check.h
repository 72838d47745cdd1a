/* SPDX-License-Identifier: MIT */
/*
 * What a start would refuse in a parsed tmemd.conf (plus the command
 * line), beyond its syntax: the things config.c cannot know from the text
 * alone because they depend on this host.  --check-config, a real start
 * and a reload all run this one function, so the check never says OK to
 * a file the next start refuses (issue 30).
 */
#ifndef TMEMD_CONFIG_CHECK_H
#define TMEMD_CONFIG_CHECK_H

#include <stddef.h>

#include "config.h"

/*
 * 0, or -errno with one sentence in err ("key = value: reason; what to
 * do").  Checks: control-admin-group names a group; xen-domains parses
 * (whatever the transport, as the xen backend would read it); memory is
 * no more than the host's RAM; the transport is usable here; the parent
 * folders of runtime-dir and arena exist.
 */
int tmemd_config_check(const struct tmemd_config *cfg, char *err, size_t errlen);

#endif /* TMEMD_CONFIG_CHECK_H */
