/* SPDX-License-Identifier: GPL-2.0 */
/* import_fuzz.h - the body of the fuzz_import_*.c targets (import.c). */
#ifndef USBRIG_IMPORT_FUZZ_H
#define USBRIG_IMPORT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "import/import.h"

/*
 * Run reader rd on data as the file `file` (a bare name: it is put in a
 * folder that does not exist), then imp_emit() on every device read.
 * Always returns 0, as LLVMFuzzerTestOneInput() must.
 */
int fz_import(const struct imp_reader *rd, const char *file,
	      const uint8_t *data, size_t size);

#endif /* USBRIG_IMPORT_FUZZ_H */
