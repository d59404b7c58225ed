// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_import_pcap.c - the pcap/pcapng reader, usbmon and USBPcap link types,
 * read through libpcap (gadgets/import/pcap.c, urb.c), then the script writer on every device it
 * read (import.c).  Seeds: captures written by tests/fuzz/mkseeds.py.
 */
#include "fuzz.h"
#include "import_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_import(&imp_reader_pcap, "capture.pcap", data, size);
}
