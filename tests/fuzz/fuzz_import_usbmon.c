// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_import_usbmon.c - the usbmon text reader (gadgets/import/usbmon.c, urb.c), then the script writer on every device it
 * read (import.c).  Seeds: tests/data/devices/captures/ and the usbmon files of
 * tests/data/import/.
 */
#include "fuzz.h"
#include "import_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_import(&imp_reader_usbmon, "capture.usbmon", data, size);
}
