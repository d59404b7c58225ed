// SPDX-License-Identifier: GPL-2.0
/*
 * gadgets.c - the built-in gadget examples (fuzz.h), parsed once.  A file
 * of its own so that targets without gadgets do not link the script
 * parser (its cur_* names are the scenario parser's too).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "script.h"

static struct gd_device **fz_models;

static void fz_load_gadgets(void)
{
	struct script_error err;
	size_t i;

	fz_models = calloc(fz_gadget_count, sizeof(*fz_models));
	if (!fz_models)
		fz_fail("out of memory");
	for (i = 0; i < fz_gadget_count; i++) {
		const char *t = fz_gadget_texts[i];

		memset(&err, 0, sizeof(err));
		if (script_parse(fz_gadget_names[i], t, strlen(t),
				 &fz_models[i], &err))
			fz_fail("built-in gadget %s: %s", fz_gadget_names[i],
				err.msg);
	}
}

size_t fz_num_gadgets(void)
{
	return fz_gadget_count;
}

const struct gd_device *fz_gadget(size_t i)
{
	if (!fz_models)
		fz_load_gadgets();
	return fz_models[i % fz_gadget_count];
}
