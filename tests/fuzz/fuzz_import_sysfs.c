// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_import_sysfs.c - the sysfs `descriptors` reader, binary or as a hex dump
 * (gadgets/import/sysfs.c), then the script writer on every device it
 * read (import.c).  Seeds: descriptor bytes of real devices (tests/fuzz/mkseeds.py).
 */
#include "fuzz.h"
#include "import_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_import(&imp_reader_sysfs, "descriptors", data, size);
}
