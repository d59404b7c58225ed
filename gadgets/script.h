/* SPDX-License-Identifier: GPL-2.0 */
/*
 * script.h - gadget script parser: text in, model out, no other I/O.
 *
 * docs/gadget-format.md is the reference of the language.  On error
 * nothing is returned but the message, "file:line:col: what is wrong".
 */
#ifndef USBRIG_SCRIPT_H
#define USBRIG_SCRIPT_H

#include <stddef.h>

#include "model.h"

struct script_error {
	int line;		/* 1-based */
	int col;		/* 1-based, in bytes */
	char msg[512];		/* "file:line:col: message" */
};

/* Parse text (len bytes, need not be NUL-terminated).  name labels the
 * messages and becomes dev->path.  Returns 0 and *out, or -EINVAL and err
 * filled (other negative errno for out of memory). */
int script_parse(const char *name, const char *text, size_t len,
		 struct gd_device **out, struct script_error *err);

/* Read and parse a file; I/O errors are reported in err too. */
int script_load(const char *path, struct gd_device **out,
		struct script_error *err);

#endif /* USBRIG_SCRIPT_H */
