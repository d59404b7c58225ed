// SPDX-License-Identifier: GPL-2.0
/*
 * import.c - the body of the fuzz_import_*.c targets: one dump reader of
 * gadgets/import/ on the input, then, for every device it read, the script
 * writer (emit.c), which parses its own script back and regenerates the
 * descriptors.  The sniffers run on the input too.  emit.c promises a
 * script for every device whose descriptors it accepts (a raw
 * configuration when structure fails): its "please report this" and "no
 * script reproduces" errors are bugs, and fail the run.
 *
 * The input is copied into a buffer with a NUL after its last byte, as
 * imp_read_file() hands every reader its file.  The path given to the
 * reader is in a folder that does not exist, so the sysfs reader finds no
 * sibling attribute files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "import_fuzz.h"

#define FZ_IMPORT_DIR	"/nonexistent-usbrig-fuzz/"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The same for every import target (each file is only its reader). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	return 0;
}

/* imp_readers[] lives in usbrig-import's main.c */
static const struct imp_reader *const readers[] = {
	&imp_reader_lsusb, &imp_reader_sysfs, &imp_reader_devices,
	&imp_reader_usbmon, &imp_reader_pcap,
};

int fz_import(const struct imp_reader *rd, const char *file,
	      const uint8_t *data, size_t size)
{
	struct imp_emit_opts eo = { 0 };
	struct imp_set set = { 0 };
	struct imp_error err = { "" };
	char path[256];
	uint8_t *buf;
	size_t i;
	char *text;
	int ret;

	snprintf(path, sizeof(path), FZ_IMPORT_DIR "%s", file);
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	buf[size] = 0;

	for (i = 0; i < ARRAY_SIZE(readers); i++)
		if (readers[i]->sniff)
			readers[i]->sniff(path, buf, size);
	set.format = strdup(rd->name);
	set.path = strdup(path);
	ret = rd->read(path, buf, size, &set, &err);
	free(buf);
	if (ret) {
		if (ret == -EINVAL && !err.msg[0])
			fz_fail("%s reader: -EINVAL without a message",
				rd->name);
		imp_set_free(&set);
		return 0;
	}
	for (i = 0; i < set.n; i++) {
		text = NULL;
		err.msg[0] = '\0';
		if (!imp_emit(&set, set.devs[i], &eo, &text, &err)) {
			free(text);
			continue;
		}
		if (text)
			fz_fail("imp_emit failed but returned a script");
		if (strstr(err.msg, "please report") ||
		    strstr(err.msg, "no script reproduces"))
			fz_fail("imp_emit: %s", err.msg);
	}
	imp_set_free(&set);
	return 0;
}
