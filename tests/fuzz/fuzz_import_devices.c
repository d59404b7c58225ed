// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_import_devices.c - the debugfs usb/devices reader (gadgets/import/devices.c), then the script writer on every device it
 * read (import.c).  Seeds: tests/data/import/three.devices and files written by
 * tests/fuzz/mkseeds.py.
 */
#include "fuzz.h"
#include "import_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_import(&imp_reader_devices, "devices", data, size);
}
