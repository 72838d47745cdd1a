/* SPDX-License-Identifier: MIT */
/*
 * The text forms administrators type, checked one way everywhere: a
 * client name (tmemd.conf's [client NAME], the local hello, tmemctl's
 * CLIENT, the control protocol) and a shared pool's UUID.  In proto/
 * because tmemd and tmemctl both include it; freestanding like the rest.
 */
#ifndef TMEM_NAMES_H
#define TMEM_NAMES_H

#include "tmem_proto.h"

/* Client names: 1..63 bytes of [A-Za-z0-9._:-] ("domid:5" included). */
#define TMEM_NAME_RULE "1..63 characters of [A-Za-z0-9._:-]"
#define TMEM_NAME_MAX_LEN 63

static inline int tmem_name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == ':' || c == '-';
}

/* 1 when name follows TMEM_NAME_RULE. */
static inline int tmem_name_valid(const char *name)
{
	int n = 0;

	if (!name)
		return 0;
	for (; name[n]; n++)
		if (n >= TMEM_NAME_MAX_LEN || !tmem_name_char_ok(name[n]))
			return 0;
	return n > 0;
}

static inline int tmem_hex_ok(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* 1 when text is a UUID in the standard 8-4-4-4-12 hex form. */
static inline int tmem_uuid_text_valid(const char *text)
{
	int i;

	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i] != '-')
				return 0;
		} else if (!tmem_hex_ok(text[i])) {
			return 0;
		}
	}
	return text[36] == '\0';
}

#endif /* TMEM_NAMES_H */
