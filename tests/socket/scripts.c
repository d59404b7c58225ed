// SPDX-License-Identifier: GPL-2.0
/* scripts.c - see scripts.h */
#include "scripts.h"

const char script_bulk[] =
	"# the socket tests' vendor bulk device\n"
	"device {\n"
	"	speed high\n"
	"	idVendor 0x0557\n"
	"	idProduct 0x2008\n"
	"	bcdDevice 0x0100\n"
	"	manufacturer \"usbrig\"\n"
	"	product \"Bulk loopback\"\n"
	"	serial \"0001\"\n"
	"	config {\n"
	"		bConfigurationValue 1\n"
	"		bmAttributes 0x80\n"
	"		bMaxPower 50\n"
	"		interface {\n"
	"			bInterfaceNumber 0\n"
	"			bInterfaceClass 0xff\n"
	"			endpoint { bEndpointAddress 0x81; type bulk }\n"
	"			endpoint {\n"
	"				bEndpointAddress 0x02\n"
	"				type bulk\n"
	"				loopback 0x81\n"
	"			}\n"
	"			endpoint {\n"
	"				bEndpointAddress 0x83\n"
	"				type interrupt\n"
	"				wMaxPacketSize 8\n"
	"				nak\n"
	"			}\n"
	"			endpoint {\n"
	"				bEndpointAddress 0x84\n"
	"				type bulk\n"
	"				source pattern 01 02 03 04 05 06 07\n"
	"			}\n"
	"		}\n"
	"	}\n"
	"	control {\n"
	"		bmRequestType 0xc0\n"
	"		bRequest 0x01\n"
	"		reply 68 65 6c 6c 6f 20 75 73 62 72 69 67\n"
	"	}\n"
	"	control { bmRequestType 0x40; bRequest 0x02; stall }\n"
	"	control { bmRequestType 0xc0; bRequest 0x03; stall }\n"
	"	control {\n"
	"		bmRequestType 0xc0\n"
	"		bRequest 0x04\n"
	"		reply de ad be ef\n"
	"		delay 300\n"
	"	}\n"
	"}\n";

const uint8_t bulk_device_desc[18] = {
	0x12,		/* bLength */
	0x01,		/* bDescriptorType: DEVICE */
	0x00, 0x02,	/* bcdUSB 2.00 */
	0x00,		/* bDeviceClass: per interface */
	0x00,		/* bDeviceSubClass */
	0x00,		/* bDeviceProtocol */
	0x40,		/* bMaxPacketSize0 64 (high speed) */
	0x57, 0x05,	/* idVendor 0x0557 */
	0x08, 0x20,	/* idProduct 0x2008 */
	0x00, 0x01,	/* bcdDevice 1.00 */
	0x01,		/* iManufacturer */
	0x02,		/* iProduct */
	0x03,		/* iSerialNumber */
	0x01,		/* bNumConfigurations */
};

const uint8_t bulk_config_desc[46] = {
	/* configuration */
	0x09, 0x02,	/* bLength, CONFIGURATION */
	0x2e, 0x00,	/* wTotalLength 46 */
	0x01,		/* bNumInterfaces */
	0x01,		/* bConfigurationValue */
	0x00,		/* iConfiguration */
	0x80,		/* bmAttributes: bus powered */
	0x32,		/* bMaxPower 100 mA */
	/* interface 0 alt 0 */
	0x09, 0x04,	/* bLength, INTERFACE */
	0x00, 0x00,	/* bInterfaceNumber, bAlternateSetting */
	0x04,		/* bNumEndpoints */
	0xff, 0x00, 0x00, /* vendor class */
	0x00,		/* iInterface */
	/* endpoints: bLength, ENDPOINT, address, attributes, wMaxPacketSize,
	 * bInterval */
	0x07, 0x05, 0x81, 0x02, 0x00, 0x02, 0x00,	/* bulk IN 512 */
	0x07, 0x05, 0x02, 0x02, 0x00, 0x02, 0x00,	/* bulk OUT 512 */
	0x07, 0x05, 0x83, 0x03, 0x08, 0x00, 0x04,	/* int IN 8, 1 ms */
	0x07, 0x05, 0x84, 0x02, 0x00, 0x02, 0x00,	/* bulk IN 512 */
};

const uint8_t bulk_string0[4] = {
	0x04, 0x03,	/* bLength, STRING */
	0x09, 0x04,	/* LANGID en-US */
};

const uint8_t bulk_string1[14] = {
	0x0e, 0x03,	/* bLength 14, STRING */
	'u', 0, 's', 0, 'b', 0, 'r', 0, 'i', 0, 'g', 0,	/* UTF-16LE */
};

const uint8_t bulk_pattern[7] = { 1, 2, 3, 4, 5, 6, 7 };

const char script_faults[] =
	"# disconnects after 3 URBs\n"
	"device {\n"
	"	speed full\n"
	"	idVendor 0x1209\n"
	"	idProduct 0x0003\n"
	"	config {\n"
	"		bConfigurationValue 1\n"
	"		interface { bInterfaceNumber 0; bInterfaceClass 0xff }\n"
	"	}\n"
	"	fault disconnect-after-urbs 3\n"
	"}\n";

const char script_iso[] =
	"device {\n"
	"	speed high\n"
	"	idVendor 0x1209\n"
	"	idProduct 0x0009\n"
	"	config {\n"
	"		interface { bInterfaceClass 0xff }\n"
	"		interface {\n"
	"			bAlternateSetting 1\n"
	"			bInterfaceClass 0xff\n"
	"			endpoint { bEndpointAddress 0x81; type iso }\n"
	"			endpoint { bEndpointAddress 0x02; type iso }\n"
	"		}\n"
	"	}\n"
	"}\n";
