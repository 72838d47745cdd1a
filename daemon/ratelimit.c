/* SPDX-License-Identifier: MIT */
/* Log rate limits per site and per source.  See ratelimit.h. */
#include <stddef.h>

#include "ratelimit.h"

uint64_t tmemd_rl_name(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)name; p && *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return (3ull << 62) | (h & ((1ull << 62) - 1));
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* Starts a new interval when the last one is over; *rolled gets what
 * was held back and not reported.  Then counts one line: true when it
 * is within the burst. */
static bool window_take(struct tmemd_rl_window *w, uint32_t burst, uint64_t now_ns,
			uint32_t *rolled)
{
	*rolled = 0;
	if (!w->begin_ns || now_ns - w->begin_ns >= TMEMD_RL_INTERVAL_NS) {
		*rolled = w->missed;
		w->begin_ns = now_ns ? now_ns : 1;
		w->printed = 0;
		w->missed = 0;
	}
	if (w->printed < burst) {
		w->printed++;
		return true;
	}
	w->missed++;
	return false;
}

static struct tmemd_rl_window *site_window(struct tmemd_ratelimit *rl, const void *site)
{
	uint32_t i = (uint32_t)mix((uint64_t)(uintptr_t)site) & (TMEMD_RL_SITES - 1);

	for (uint32_t n = 0; n < TMEMD_RL_SITES; n++, i = (i + 1) & (TMEMD_RL_SITES - 1)) {
		struct tmemd_rl_site *s = &rl->sites[i];

		if (s->site == site)
			return &s->w;
		if (!s->site) {
			s->site = site;
			return &s->w;
		}
	}
	return &rl->overflow;
}

static struct tmemd_rl_window *source_window(struct tmemd_ratelimit *rl, const void *site,
					     uint64_t source)
{
	uint32_t i = (uint32_t)mix((uint64_t)(uintptr_t)site ^ mix(source)) &
		     (TMEMD_RL_SOURCES - 1);
	struct tmemd_rl_source *s = &rl->sources[i];

	if (s->site != site || s->source != source)
		*s = (struct tmemd_rl_source){ .site = site, .source = source };
	return &s->w;
}

bool tmemd_ratelimit(struct tmemd_ratelimit *rl, const void *site, uint64_t source,
		     uint64_t now_ns, uint32_t *suppressed)
{
	struct tmemd_rl_window *sw = site_window(rl, site);
	uint32_t src_rolled = 0, site_rolled;

	*suppressed = 0;
	if (source != TMEMD_RL_NO_SOURCE &&
	    !window_take(source_window(rl, site, source), TMEMD_RL_SOURCE_BURST, now_ns,
			 &src_rolled))
		return false;
	if (!window_take(sw, TMEMD_RL_BURST, now_ns, &site_rolled)) {
		/* The source's report is owed: the site's next one carries it. */
		sw->missed += src_rolled;
		return false;
	}
	*suppressed = site_rolled + src_rolled;
	return true;
}
