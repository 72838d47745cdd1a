/* SPDX-License-Identifier: MIT */
/* The elastic pool's figures as JSON (fallow_json.c). */
#ifndef TMEMD_FALLOW_JSON_H
#define TMEMD_FALLOW_JSON_H

#include <jansson.h>

#include "fallow.h"

/* A new reference, or NULL (no pool yet, or out of memory). */
json_t *tmemd_fallow_json(const struct tmemd_fallow *f);

#endif /* TMEMD_FALLOW_JSON_H */
