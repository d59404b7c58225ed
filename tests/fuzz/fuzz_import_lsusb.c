// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_import_lsusb.c - the lsusb -v reader (gadgets/import/lsusb.c, lsusb_class.c), then the script writer on every device it
 * read (import.c).  Seeds: the pastes of tests/data/import/lsusb/, tests/data/devices/
 * and tests/repro/.
 */
#include "fuzz.h"
#include "import_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_import(&imp_reader_lsusb, "report.lsusb", data, size);
}
