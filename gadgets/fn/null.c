// SPDX-License-Identifier: GPL-2.0
/*
 * fn/null.c - the null device function: the template for new ones.
 *
 * It takes no options and handles nothing, so a device that names it
 * behaves exactly as its script says.  A new function copies this file,
 * fills in the members it needs (function.h states each contract) and is
 * added to fn_list[] in function.c.
 */
#include <errno.h>
#include <stddef.h>

#include "function.h"

static int null_validate(const struct gd_device *model,
			 struct script_error *err)
{
	static const char *const keys[] = { NULL };

	return fn_opt_only(model, keys, err);
}

static int null_control(struct gdev *dev, const struct usb_setup *s,
			uint8_t *data, size_t len)
{
	(void)dev;
	(void)s;
	(void)data;
	(void)len;
	return -ENOENT;		/* not ours: the core STALLs it */
}

static int null_submit(struct gdev *dev, struct urb *urb)
{
	(void)dev;
	(void)urb;
	return -ENOENT;		/* the script's endpoint behaviour runs */
}

const struct fn_ops fn_null_ops = {
	.name = "null",
	.validate = null_validate,
	.control = null_control,
	.submit = null_submit,
};
