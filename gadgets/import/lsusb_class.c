// SPDX-License-Identifier: GPL-2.0
/*
 * lsusb_class.c - what the `lsusb -v` reader knows of the descriptors
 * lsusb prints: the standard layouts by field name, the class-descriptor
 * fields whose width their name does not give (usbutils 007-017's
 * lsusb.c and desc-defs.c), the CDC functional titles, HID report items,
 * and the HID reports made up for the ones lsusb could not read.
 */
#include <stdio.h>
#include <string.h>

#include "import.h"
#include "lsusb.h"

size_t lx_hex_bytes(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (s[0] == '0' && s[1] == 'x')
			s += 2;
		if (util_hexval(s[0]) < 0 || util_hexval(s[1]) < 0 ||
		    (s[2] && s[2] != ' ' && s[2] != '\t'))
			return n;
		if (n < max)
			out[n] = util_hexval(s[0]) << 4 | util_hexval(s[1]);
		n++;
		s += 2;
	}
}

/*
 * Equal names, the first letters compared before strcmp(): the tables
 * below are walked for nearly every line of a paste, and most entries
 * differ at once.
 */
static int same_name(const char *a, const char *b)
{
	return a[0] == b[0] && !strcmp(a, b);
}

/* ---- standard descriptors ---- */

static const struct lx_slot dev_slots[] = {
	{ "bLength", 0, 1 }, { "bDescriptorType", 1, 1 }, { "bcdUSB", 2, 2 },
	{ "bDeviceClass", 4, 1 }, { "bDeviceSubClass", 5, 1 },
	{ "bDeviceProtocol", 6, 1 }, { "bMaxPacketSize0", 7, 1 },
	{ "idVendor", 8, 2 }, { "idProduct", 10, 2 }, { "bcdDevice", 12, 2 },
	{ "iManufacturer", 14, 1 }, { "iProduct", 15, 1 },
	{ "iSerial", 16, 1 }, { "bNumConfigurations", 17, 1 }, { NULL, 0, 0 }
};

static const struct lx_slot cfg_slots[] = {
	{ "bLength", 0, 1 }, { "bDescriptorType", 1, 1 },
	{ "wTotalLength", 2, 2 }, { "bNumInterfaces", 4, 1 },
	{ "bConfigurationValue", 5, 1 }, { "iConfiguration", 6, 1 },
	{ "bmAttributes", 7, 1 }, { "MaxPower", 8, 1 }, { NULL, 0, 0 }
};

static const struct lx_slot intf_slots[] = {
	{ "bLength", 0, 1 }, { "bDescriptorType", 1, 1 },
	{ "bInterfaceNumber", 2, 1 }, { "bAlternateSetting", 3, 1 },
	{ "bNumEndpoints", 4, 1 }, { "bInterfaceClass", 5, 1 },
	{ "bInterfaceSubClass", 6, 1 }, { "bInterfaceProtocol", 7, 1 },
	{ "iInterface", 8, 1 }, { NULL, 0, 0 }
};

static const struct lx_slot ep_slots[] = {
	{ "bLength", 0, 1 }, { "bDescriptorType", 1, 1 },
	{ "bEndpointAddress", 2, 1 }, { "bmAttributes", 3, 1 },
	{ "wMaxPacketSize", 4, 2 }, { "bInterval", 6, 1 },
	{ "bRefresh", 7, 1 }, { "bSynchAddress", 8, 1 }, { NULL, 0, 0 }
};

static const struct lx_slot iad_slots[] = {
	{ "bLength", 0, 1 }, { "bDescriptorType", 1, 1 },
	{ "bFirstInterface", 2, 1 }, { "bInterfaceCount", 3, 1 },
	{ "bFunctionClass", 4, 1 }, { "bFunctionSubClass", 5, 1 },
	{ "bFunctionProtocol", 6, 1 }, { "iFunction", 7, 1 }, { NULL, 0, 0 }
};

static const struct lx_slot sscomp_slots[] = {
	{ "bLength", 0, 1 }, { "bDescriptorType", 1, 1 },
	{ "bMaxBurst", 2, 1 }, { "bmAttributes", 3, 1 },
	{ "wBytesPerInterval", 4, 2 }, { NULL, 0, 0 }
};

static const struct lx_slot qual_slots[] = {
	{ "bLength", 0, 1 }, { "bDescriptorType", 1, 1 }, { "bcdUSB", 2, 2 },
	{ "bDeviceClass", 4, 1 }, { "bDeviceSubClass", 5, 1 },
	{ "bDeviceProtocol", 6, 1 }, { "bMaxPacketSize0", 7, 1 },
	{ "bNumConfigurations", 8, 1 }, { NULL, 0, 0 }
};

const struct lx_layout lx_layouts[LX_SEQ] = {
	[LX_DEVICE] = { dev_slots, 18, 0x01, "device descriptor" },
	[LX_CONFIG] = { cfg_slots, 9, 0x02, "configuration descriptor" },
	[LX_INTERFACE] = { intf_slots, 9, 0x04, "interface descriptor" },
	[LX_ENDPOINT] = { ep_slots, 7, 0x05, "endpoint descriptor" },
	[LX_IAD] = { iad_slots, 8, 0x0b, "interface association" },
	[LX_SSCOMP] = { sscomp_slots, 6, 0x30, "SuperSpeed endpoint companion" },
	[LX_QUALIFIER] = { qual_slots, 10, 0x06, "device qualifier" },
};

/* ---- class-descriptor fields ---- */

/* where the name's prefix says nothing, or lies */
static const struct {
	const char *name;
	uint8_t width;
	uint8_t flags;
} specials[] = {
	{ "bU2DevExitLat", 2, 0 },		/* two bytes, b prefix */
	{ "bHubDecLat", 1, LX_F_TENTHS },
	{ "CapabilityData", 1, 0 },
	{ "ContainerID", 16, 0 },
	{ "PlatformCapabilityUUID", 16, 0 },
	{ "bSlaveInterface", 1, LX_F_MULTI },
	{ "DeviceRemovable", 1, LX_F_MULTI },
	{ "PortPwrCtrlMask", 1, LX_F_MULTI },
	{ "bDetailData", 1, LX_F_MULTI | LX_F_BAREHEX },
	{ "bmConfigured", 1, LX_F_MULTI | LX_F_BAREHEX },
	{ "bGuidDescriptorType", 1, LX_F_BAREHEX },
	{ "wCountryCode", 2, LX_F_BIGEND },
	{ "dwSyncProtocols", 4, LX_F_BAREHEX },
	{ "dwMechanical", 4, LX_F_BAREHEX },
	{ "dwFeatures", 4, LX_F_BAREHEX },
	{ "bClassGetResponse", 1, LX_F_BAREHEX | LX_F_WORDS },
	{ "bClassEnvelope", 1, LX_F_BAREHEX | LX_F_WORDS },
	{ "wlcdLayout", 2, LX_F_WORDS },
};

/* the width the name's Hungarian prefix gives; 0: not a field name;
 * -1: a bitmap (bm, bma) whose width the value decides */
static int prefix_width(const char *base)
{
	static const struct {
		const char *p;
		int w;
	} prefixes[] = {
		{ "bcd", 2 }, { "bma", -1 }, { "bm", -1 }, { "ba", 1 },
		{ "b", 1 }, { "wa", 2 }, { "w", 2 }, { "dw", 4 }, { "id", 2 },
		{ "i", 1 }, { "n", 1 }, { "t", 3 }, { "guid", 16 },
	};
	char run[8];
	size_t n = 0, i;

	/* MIDI's "BaSourcePin": the first letter's case is not kept */
	while (n < sizeof(run) - 1 &&
	       ((base[n] >= 'a' && base[n] <= 'z') ||
		(!n && base[n] >= 'A' && base[n] <= 'Z'))) {
		run[n] = base[n] | 0x20;
		n++;
	}
	run[n] = 0;
	if (!n || !(base[n] >= 'A' && base[n] <= 'Z') ||
	    (base[0] >= 'A' && base[0] <= 'Z' && n < 2))
		return 0;
	if (base[0] >= 'A' && base[0] <= 'Z' && strcmp(run, "ba"))
		return 0;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (same_name(run, prefixes[i].p))
			return prefixes[i].w;
	/* an unusual tail on a common prefix ("wlcdLayout") */
	if (run[0] == 'w')
		return 2;
	if (run[0] == 'b')
		return 1;
	return 0;
}

int lx_field_width(const char *base, uint8_t *flags)
{
	size_t i;

	*flags = 0;
	for (i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
		if (same_name(specials[i].name, base)) {
			*flags = specials[i].flags;
			return specials[i].width;
		}
	return prefix_width(base);
}

/* ---- CDC ---- */

static const struct {
	const char *title;
	uint8_t subtype;
} cdc_titles[] = {
	{ "CDC Header:", 0x00 }, { "CDC Call Management:", 0x01 },
	{ "CDC ACM:", 0x02 }, { "CDC Union:", 0x06 },
	{ "Country Selection:", 0x07 }, { "CDC Telephone operations:", 0x08 },
	{ "Network Channel Terminal:", 0x0a }, { "CDC Ethernet:", 0x0f },
	{ "CDC WHCM:", 0x11 }, { "CDC MDLM:", 0x12 },
	{ "CDC MDLM detail:", 0x13 }, { "CDC Device Management:", 0x14 },
	{ "CDC OBEX:", 0x15 }, { "CDC Command Set:", 0x16 },
	{ "CDC NCM:", 0x1a }, { "CDC MBIM:", 0x1b },
	{ "CDC MBIM Extended:", 0x1c },
};

int lx_cdc_subtype(const char *title)
{
	size_t i;

	for (i = 0; i < sizeof(cdc_titles) / sizeof(cdc_titles[0]); i++)
		if (same_name(title, cdc_titles[i].title))
			return cdc_titles[i].subtype;
	return -1;
}

/* ---- mass storage (UAS) ---- */

/* lsusb prints a UAS pipe usage descriptor (04 24 id 00) as its name
 * only: "Command pipe (0x01)" */
int lx_uas_pipe(const char *line)
{
	static const char *const names[] = {
		"Command pipe (", "Status pipe (", "Data-in pipe (",
		"Data-out pipe (", "Reserved (", "Vendor specific (",
	};
	unsigned int id;
	size_t i, n;
	char end;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = strlen(names[i]);
		if (!strncmp(line, names[i], n) &&
		    sscanf(line + n, "0x%2x%c", &id, &end) == 2 && end == ')')
			return id;
	}
	return -1;
}

/* ---- HID ---- */

struct lx_item {
	const char *name;
	uint8_t tag;		/* bits 7..2 of the prefix: tag and type */
};

static const struct lx_item items[] = {
	{ "Input", 0x80 }, { "Output", 0x90 }, { "Feature", 0xb0 },
	{ "Collection", 0xa0 }, { "End Collection", 0xc0 },
	{ "Usage Page", 0x04 }, { "Logical Minimum", 0x14 },
	{ "Logical Maximum", 0x24 }, { "Physical Minimum", 0x34 },
	{ "Physical Maximum", 0x44 }, { "Unit Exponent", 0x54 },
	{ "Unit", 0x64 }, { "Report Size", 0x74 }, { "Report ID", 0x84 },
	{ "Report Count", 0x94 }, { "Push", 0xa4 }, { "Pop", 0xb4 },
	{ "Usage", 0x08 }, { "Usage Minimum", 0x18 },
	{ "Usage Maximum", 0x28 }, { "Designator Index", 0x38 },
	{ "Designator Minimum", 0x48 }, { "Designator Maximum", 0x58 },
	{ "String Index", 0x78 }, { "String Minimum", 0x88 },
	{ "String Maximum", 0x98 }, { "Delimiter", 0xa8 },
};

int lx_hid_item(const char *s, uint8_t out[5])
{
	const char *name = strstr(s, "): "), *data;
	size_t nlen, n = 0, i;

	if (!name)
		return -1;
	data = strstr(name, ", data=");
	if (!data)
		return -1;
	name += 3;
	nlen = data - name;
	for (i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		if (strlen(items[i].name) == nlen &&
		    !strncmp(items[i].name, name, nlen))
			break;
	if (i == sizeof(items) / sizeof(items[0]))
		return -1;
	data += 7;
	while (*data == ' ')
		data++;
	if (*data == '[')
		n = lx_hex_bytes(data + 1, out + 1, 4);
	else if (strncmp(data, "none", 4))
		return -1;
	if (n == 3 || n > 4)
		return -1;
	out[0] = items[i].tag | (n == 4 ? 3 : n);
	return 1 + n;
}

/* HID 1.11 appendix B: the boot keyboard and mouse reports */
static const uint8_t boot_keyboard[] = {
	0x05, 0x01, 0x09, 0x06, 0xa1, 0x01,		/* desktop, keyboard */
	0x05, 0x07, 0x19, 0xe0, 0x29, 0xe7,		/* modifiers */
	0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x08, 0x81, 0x02,
	0x95, 0x01, 0x75, 0x08, 0x81, 0x01,		/* reserved byte */
	0x95, 0x05, 0x75, 0x01, 0x05, 0x08, 0x19, 0x01, 0x29, 0x05,
	0x91, 0x02,					/* LEDs */
	0x95, 0x01, 0x75, 0x03, 0x91, 0x01,		/* LED padding */
	0x95, 0x06, 0x75, 0x08, 0x15, 0x00, 0x25, 0x65,
	0x05, 0x07, 0x19, 0x00, 0x29, 0x65, 0x81, 0x00,	/* key array */
	0xc0,
};

static const uint8_t boot_mouse[] = {
	0x05, 0x01, 0x09, 0x02, 0xa1, 0x01,		/* desktop, mouse */
	0x09, 0x01, 0xa1, 0x00,				/* pointer */
	0x05, 0x09, 0x19, 0x01, 0x29, 0x03,		/* 3 buttons */
	0x15, 0x00, 0x25, 0x01, 0x95, 0x03, 0x75, 0x01, 0x81, 0x02,
	0x95, 0x01, 0x75, 0x05, 0x81, 0x03,		/* padding */
	0x05, 0x01, 0x09, 0x30, 0x09, 0x31,		/* X, Y */
	0x15, 0x81, 0x25, 0x7f, 0x75, 0x08, 0x95, 0x02, 0x81, 0x06,
	0xc0, 0xc0,
};

/* one 8-byte vendor-defined input report */
static const uint8_t vendor_report[] = {
	0x06, 0x00, 0xff, 0x09, 0x01, 0xa1, 0x01,	/* vendor page */
	0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x08,
	0x09, 0x01, 0x81, 0x02,
	0xc0,
};

/* an empty vendor-defined application collection */
static const uint8_t vendor_empty[] = {
	0x06, 0x00, 0xff, 0x09, 0x01, 0xa1, 0x01, 0xc0,
};

/*
 * base, made exactly len bytes long: items that change nothing (a Unit of
 * none, Push/Pop pairs) go before its last End Collection.  len must be
 * at least base's length.
 */
static void fit_report(uint8_t *out, const uint8_t *base, size_t blen,
		       size_t len)
{
	size_t n = len - blen, o = blen - 1;

	memcpy(out, base, blen - 1);
	if (n % 2 && n >= 3) {
		out[o++] = 0x66;	/* Unit (None), two data bytes */
		out[o++] = 0;
		out[o++] = 0;
		n -= 3;
	}
	for (; n >= 2; n -= 2) {
		out[o++] = 0xa4;	/* Push */
		out[o++] = 0xb4;	/* Pop */
	}
	if (n)
		out[o++] = 0xa4;	/* a lone Push: the stack is not checked */
	out[o] = 0xc0;
}

size_t lx_hid_synth(uint8_t subclass, uint8_t proto, size_t want,
		    uint8_t *out, const char **what)
{
	const uint8_t *base;
	size_t blen;

	if (subclass == 1 && proto == 1 && want >= sizeof(boot_keyboard)) {
		base = boot_keyboard;
		blen = sizeof(boot_keyboard);
		*what = "the boot keyboard report (HID 1.11 B.1)";
	} else if (subclass == 1 && proto == 2 &&
		   want >= sizeof(boot_mouse)) {
		base = boot_mouse;
		blen = sizeof(boot_mouse);
		*what = "the boot mouse report (HID 1.11 B.2)";
	} else if (want >= sizeof(vendor_report)) {
		base = vendor_report;
		blen = sizeof(vendor_report);
		*what = "one vendor-defined 8-byte input report";
	} else {
		base = vendor_empty;
		blen = sizeof(vendor_empty);
		*what = "an empty vendor-defined collection";
	}
	if (want < blen)
		want = blen;
	fit_report(out, base, blen, want);
	return want;
}
