// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_script.c - the gadget script parser (gadgets/script*.c, the device
 * functions' validate()) and what consumes its model: every descriptor
 * desc.c generates (as `usbrig-gadget --dump` prints them), and the
 * runtime's SET_CONFIGURATION / SET_INTERFACE over every configuration and
 * alternate setting (device.c), without attaching: a function never runs
 * its attach(), so an `image` option opens no file.
 *
 * Input: the script text, not NUL-terminated (script_parse() takes a
 * length).  Seeds: gadgets/examples/ and the socket tests' scripts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "desc.h"
#include "device.h"
#include "fuzz.h"
#include "model.h"
#include "script.h"

static struct event_base *base;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	base = event_base_new();
	devnull = fopen("/dev/null", "w");
	if (!base || !devnull)
		fz_fail("init");
	return 0;
}

static void run_configs(const struct gd_device *m)
{
	struct gdev *dev = gdev_new(m, base);
	size_t c, a;

	if (!dev)
		fz_fail("gdev_new");
	for (c = 0; c < m->n_configs; c++) {
		const struct gd_config *cfg = &m->configs[c];

		if (gdev_set_config(dev, cfg->bConfigurationValue))
			continue;
		for (a = 0; a < cfg->n_alts; a++)
			gdev_set_interface(dev, cfg->alts[a].bInterfaceNumber,
					   cfg->alts[a].bAlternateSetting);
	}
	gdev_set_config(dev, 0);
	gdev_free(dev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct script_error err;
	struct gd_device *m = NULL;
	int ret;

	memset(&err, 0, sizeof(err));
	ret = script_parse("fuzz.gadget", (const char *)data, size, &m, &err);
	if (ret) {
		if (m)
			fz_fail("script_parse failed (%d) but returned a model",
				ret);
		if (ret == -EINVAL && !err.msg[0])
			fz_fail("script_parse: -EINVAL without a message");
		return 0;
	}
	desc_dump(m, devnull);
	run_configs(m);
	gd_model_free(m);
	return 0;
}
