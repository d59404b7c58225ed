/* SPDX-License-Identifier: GPL-2.0 */
/*
 * registry.h - what the script parser knows of the device functions: their
 * names and their validation, nothing of the runtime (function.h has the
 * ops tables, which need device.h).
 */
#ifndef USBRIG_REGISTRY_H
#define USBRIG_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"
#include "script.h"

/* Is there a device function of that name? */
bool fn_exists(const char *name);

/* The names of all functions as "null, hid, ..." into buf (cut to size);
 * returns buf. */
const char *fn_names(char *buf, size_t size);

/*
 * The function model->function names checks its options and the
 * descriptors it relies on.  0 when it is happy (or model names no
 * function), else -EINVAL with err set at file:line:col.
 */
int fn_validate(const struct gd_device *model, struct script_error *err);

#endif /* USBRIG_REGISTRY_H */
