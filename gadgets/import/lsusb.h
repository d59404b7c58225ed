/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lsusb.h - the tables the `lsusb -v` reader (lsusb.c) reads fields with,
 * in lsusb_class.c: the standard descriptors' layouts by field name, the
 * widths of class-descriptor fields by name, the CDC functional titles,
 * HID report items, and the HID reports made up for those lsusb could not
 * read.
 */
#ifndef USBRIG_IMPORT_LSUSB_H
#define USBRIG_IMPORT_LSUSB_H

#include <stddef.h>
#include <stdint.h>

/* bare hex bytes "05 24 06 00 01" (lsusb's dump_bytes, 0x allowed):
 * how many there are; at most max are stored */
size_t lx_hex_bytes(const char *s, uint8_t *out, size_t max);

enum lx_kind {
	LX_DEVICE, LX_CONFIG, LX_INTERFACE, LX_ENDPOINT, LX_IAD, LX_SSCOMP,
	LX_QUALIFIER,
	LX_SEQ,		/* any other: fields in order, bLength printed */
	LX_CDC,		/* CDC functional: lsusb prints no bLength */
	LX_SSP,		/* SuperSpeedPlus capability: reserved fields unprinted */
	LX_HID,		/* the HID class descriptor (sequential, remembered) */
};

/* the standard descriptors (kinds before LX_SEQ): field name -> bytes */
struct lx_slot {
	const char *name;
	uint8_t off, width;
};

struct lx_layout {
	const struct lx_slot *slots;	/* NULL-terminated */
	uint8_t size, type;
	const char *what;
};

extern const struct lx_layout lx_layouts[LX_SEQ];

/* how a class-descriptor field is printed, beyond its width */
enum {
	LX_F_MULTI = 1,		/* several values on the line, a byte each */
	LX_F_BAREHEX = 2,	/* hex without 0x */
	LX_F_BIGEND = 4,	/* printed high byte first */
	LX_F_TENTHS = 8,	/* "a.b": a * 10 + b */
	LX_F_WORDS = 16,	/* "echo" = 0xff, "none" = 0 */
};

/* the bytes a field takes, by its name (without any "( 0)" index): from
 * the exceptions lsusb prints, else from the Hungarian prefix (b i = 1,
 * w bcd id = 2, t = 3, dw = 4, guid = 16); -1 for a bitmap (bm, bma) as
 * wide as its value; 0 when the name is no field's.  *flags: LX_F_* */
int lx_field_width(const char *base, uint8_t *flags);

/* bDescriptorSubtype of a CDC functional title ("CDC Union:"), or -1 */
int lx_cdc_subtype(const char *title);

/* the pipe id of a UAS pipe usage line ("Data-in pipe (0x03)"), or -1 */
int lx_uas_pipe(const char *line);

/* "Item(Global): Usage Page, data= [ 0x01 ] 1" as bytes (05 01): how
 * many (1 to 5), or -1 when the line is no item lsusb prints */
int lx_hid_item(const char *line, uint8_t out[5]);

/* A report descriptor for a HID interface whose report lsusb could not
 * read: the boot keyboard or mouse report (subclass 1, protocol 1 or 2)
 * or a vendor-defined one, made exactly want bytes long when that is at
 * least the chosen report's own length (else as short as it can be).
 * out holds max(want, 64) bytes.  Returns the length, *what says which. */
size_t lx_hid_synth(uint8_t subclass, uint8_t proto, size_t want,
		    uint8_t *out, const char **what);

#endif /* USBRIG_IMPORT_LSUSB_H */
