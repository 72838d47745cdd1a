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

/* The characters of a client name or principal text (see below). */
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

/*
 * Principals: who a client is, written one way everywhere (tmemctl's
 * CLIENT, tmemd.conf's [client X], state.json, the control protocol and
 * the stats documents):
 *   uuid:U    the Xen domain whose handle (the toolstack's UUID, as
 *             "xl list -v" shows it) is U: the same guest across xl
 *             save, restore and migration, whatever its domid;
 *   domid:N   the Xen domain that has id N now (0..TMEM_DOMID_MAX,
 *             decimal, no leading zeros); a bare N means the same, as
 *             "xl tmem-*" took it;
 *   NAME      under the Xen transport the domain whose xl name is NAME,
 *             under the local one the local client that gave NAME in
 *             its hello (tmemd serves one transport at a time).
 * A NAME follows TMEM_NAME_RULE but is never all digits and never
 * starts with "domid:" or "uuid:", so no local client can take a
 * domain's identity.  The canonical text, the one tmemd stores and
 * prints, is "uuid:U" (lowercase), "domid:N" or NAME.
 */
#define TMEM_DOMID_PREFIX "domid:"
#define TMEM_DOMID_PREFIX_LEN 6
#define TMEM_UUID_PREFIX "uuid:"
#define TMEM_UUID_PREFIX_LEN 5
#define TMEM_DOMID_MAX 32751u      /* DOMID_FIRST_RESERVED - 1 */
#define TMEM_PRINCIPAL_TEXT_MAX (TMEM_NAME_MAX_LEN + 1)
#define TMEM_PRINCIPAL_RULE "uuid:U for the Xen domain with UUID U, domid:N or N for " \
	"Xen domain N (0..32751), or a name (a domain's xl name, a local client's name): " \
	TMEM_NAME_RULE ", not all digits, not starting with domid: or uuid:"

enum tmem_principal_kind {
	TMEM_PRINCIPAL_NONE = 0,   /* matches nothing */
	TMEM_PRINCIPAL_LOCAL,
	TMEM_PRINCIPAL_XEN,        /* domid:N */
	TMEM_PRINCIPAL_UUID,       /* uuid:U */
};

struct tmem_principal {
	enum tmem_principal_kind kind;
	unsigned int domid;                   /* XEN */
	struct tmem_uuid uuid;                /* UUID */
	char name[TMEM_PRINCIPAL_TEXT_MAX];   /* LOCAL */
};

/* Why a text is not a principal (tmem_principal_strerror()). */
enum tmem_principal_err {
	TMEM_PRINCIPAL_OK = 0,
	TMEM_PRINCIPAL_EBADNAME = -1,    /* empty, too long or a bad character */
	TMEM_PRINCIPAL_EBADDOMID = -2,   /* digits out of range or with leading zeros */
	TMEM_PRINCIPAL_ENOTCANON = -3,   /* a bare N where only domid:N is taken */
	TMEM_PRINCIPAL_EBADUUID = -4,    /* uuid: followed by no UUID */
};

/* tmem_principal_parse() flags. */
#define TMEM_PRINCIPAL_CANONICAL 1u  /* refuse the bare-N shorthand */

/* 1 when s (n bytes) is a domid in canonical decimal; *out gets it. */
static inline int tmem_domid_text(const char *s, int n, unsigned int *out)
{
	unsigned int v = 0;
	int i;

	if (n < 1 || n > 5 || (n > 1 && s[0] == '0'))
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (unsigned int)(s[i] - '0');
	}
	if (v > TMEM_DOMID_MAX)
		return 0;
	*out = v;
	return 1;
}

static inline int tmem_all_digits(const char *s)
{
	int i;

	for (i = 0; s[i]; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return i > 0;
}

/* 1 when s starts with prefix. */
static inline int tmem_has_prefix(const char *s, const char *prefix)
{
	int i;

	for (i = 0; prefix[i]; i++)
		if (s[i] != prefix[i])
			return 0;
	return 1;
}

/* 1 when name may be a local client's name or a domain's xl name. */
static inline int tmem_local_name_valid(const char *name)
{
	return tmem_name_valid(name) && !tmem_all_digits(name) &&
	       !tmem_has_prefix(name, TMEM_DOMID_PREFIX) &&
	       !tmem_has_prefix(name, TMEM_UUID_PREFIX);
}

static inline int tmem_uuid_parse(const char *text, struct tmem_uuid *out);
static inline void tmem_uuid_format(const struct tmem_uuid *uuid, char out[37]);

/* Parses text into *out: TMEM_PRINCIPAL_OK or a negative reason. */
static inline int tmem_principal_parse(const char *text, unsigned int flags,
				       struct tmem_principal *out)
{
	int n, i;

	out->kind = TMEM_PRINCIPAL_NONE;
	out->domid = 0;
	out->name[0] = '\0';
	if (!tmem_name_valid(text))
		return TMEM_PRINCIPAL_EBADNAME;
	for (n = 0; text[n]; n++)
		;
	if (tmem_all_digits(text)) {
		if (flags & TMEM_PRINCIPAL_CANONICAL)
			return TMEM_PRINCIPAL_ENOTCANON;
		if (!tmem_domid_text(text, n, &out->domid))
			return TMEM_PRINCIPAL_EBADDOMID;
		out->kind = TMEM_PRINCIPAL_XEN;
		return TMEM_PRINCIPAL_OK;
	}
	if (tmem_has_prefix(text, TMEM_UUID_PREFIX)) {
		if (tmem_uuid_parse(text + TMEM_UUID_PREFIX_LEN, &out->uuid))
			return TMEM_PRINCIPAL_EBADUUID;
		out->kind = TMEM_PRINCIPAL_UUID;
		return TMEM_PRINCIPAL_OK;
	}
	if (tmem_has_prefix(text, TMEM_DOMID_PREFIX)) {
		if (!tmem_domid_text(text + TMEM_DOMID_PREFIX_LEN, n - TMEM_DOMID_PREFIX_LEN,
				     &out->domid))
			return TMEM_PRINCIPAL_EBADDOMID;
		out->kind = TMEM_PRINCIPAL_XEN;
		return TMEM_PRINCIPAL_OK;
	}
	for (i = 0; i <= n; i++)
		out->name[i] = text[i];
	out->kind = TMEM_PRINCIPAL_LOCAL;
	return TMEM_PRINCIPAL_OK;
}

/* The canonical text of p ("" for NONE) into out. */
static inline void tmem_principal_format(const struct tmem_principal *p,
					 char out[TMEM_PRINCIPAL_TEXT_MAX])
{
	char digits[10];
	int i, n = 0;
	unsigned int v = p->domid;

	if (p->kind == TMEM_PRINCIPAL_LOCAL) {
		for (i = 0; p->name[i] && i < TMEM_NAME_MAX_LEN; i++)
			out[i] = p->name[i];
		out[i] = '\0';
		return;
	}
	out[0] = '\0';
	if (p->kind == TMEM_PRINCIPAL_UUID) {
		for (i = 0; i < TMEM_UUID_PREFIX_LEN; i++)
			out[i] = TMEM_UUID_PREFIX[i];
		tmem_uuid_format(&p->uuid, out + i);
		return;
	}
	if (p->kind != TMEM_PRINCIPAL_XEN)
		return;
	for (i = 0; i < TMEM_DOMID_PREFIX_LEN; i++)
		out[i] = TMEM_DOMID_PREFIX[i];
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < (int)sizeof(digits));
	while (n)
		out[i++] = digits[--n];
	out[i] = '\0';
}

/* 1 when a and b are the same client. */
static inline int tmem_principal_eq(const struct tmem_principal *a,
				    const struct tmem_principal *b)
{
	int i;

	if (a->kind != b->kind || a->kind == TMEM_PRINCIPAL_NONE)
		return 0;
	if (a->kind == TMEM_PRINCIPAL_XEN)
		return a->domid == b->domid;
	if (a->kind == TMEM_PRINCIPAL_UUID)
		return a->uuid.lo == b->uuid.lo && a->uuid.hi == b->uuid.hi;
	for (i = 0; a->name[i] == b->name[i]; i++)
		if (!a->name[i])
			return 1;
	return 0;
}

/* An English reason for a tmem_principal_parse() error. */
static inline const char *tmem_principal_strerror(int err)
{
	switch (err) {
	case TMEM_PRINCIPAL_OK:
		return "ok";
	case TMEM_PRINCIPAL_EBADDOMID:
		return "not a domid: want domid:N or N with N 0..32751, no leading zeros";
	case TMEM_PRINCIPAL_ENOTCANON:
		return "a Xen domain is written domid:N here";
	case TMEM_PRINCIPAL_EBADUUID:
		return "not a UUID: want uuid:xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	default:
		return "want " TMEM_PRINCIPAL_RULE;
	}
}

/*
 * A shared pool's UUID as text: the standard 8-4-4-4-12 hex form
 * ("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", any case on input, lowercase
 * on output), as tmemd.conf, state.json, tmemctl and the control protocol
 * write it.  The wire's struct tmem_uuid holds bytes 0..7 of the RFC 4122
 * byte string in lo and bytes 8..15 in hi, little-endian.
 */
#define TMEM_UUID_TEXT 37  /* 36 characters and the NUL */

/* The value of hex digit c, or -1. */
static inline int tmem_hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses text into *out: 0, or -TMEM_EINVAL (out untouched) when text is
 * not a UUID in the form above. */
static inline int tmem_uuid_parse(const char *text, struct tmem_uuid *out)
{
	uint8_t b[16];
	int i, pos = 0;

	for (i = 0; i < 16; i++) {
		int hi, lo;

		if (pos == 8 || pos == 13 || pos == 18 || pos == 23) {
			if (text[pos] != '-')
				return -TMEM_EINVAL;
			pos++;
		}
		hi = tmem_hex_val(text[pos]);
		if (hi < 0)
			return -TMEM_EINVAL;
		lo = tmem_hex_val(text[pos + 1]);
		if (lo < 0)
			return -TMEM_EINVAL;
		b[i] = (uint8_t)(hi << 4 | lo);
		pos += 2;
	}
	if (text[pos] != '\0')
		return -TMEM_EINVAL;
	out->lo = out->hi = 0;
	for (i = 7; i >= 0; i--) {
		out->lo = out->lo << 8 | b[i];
		out->hi = out->hi << 8 | b[i + 8];
	}
	return 0;
}

/* 1 when text is a UUID in the form above. */
static inline int tmem_uuid_text_valid(const char *text)
{
	struct tmem_uuid u;

	return tmem_uuid_parse(text, &u) == 0;
}

/* The text of uuid (lowercase) into out. */
static inline void tmem_uuid_format(const struct tmem_uuid *uuid, char out[TMEM_UUID_TEXT])
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;
	int i;

	for (i = 0; i < 16; i++) {
		uint8_t b = (uint8_t)((i < 8 ? uuid->lo : uuid->hi) >> (8 * (i % 8)));

		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[b >> 4];
		*p++ = hex[b & 15];
	}
	*p = '\0';
}

#endif /* TMEM_NAMES_H */
