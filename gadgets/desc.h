/* SPDX-License-Identifier: GPL-2.0 */
/*
 * desc.h - descriptor generator: model in, bytes out.
 *
 * Each function writes the whole descriptor (or descriptor set) into dst
 * and returns its length, -ENOSPC when len is too small, -ENOENT when the
 * device has no such descriptor (the request then STALLs).  Lengths and
 * counts are computed unless the model overrides them (model.h).
 */
#ifndef USBRIG_DESC_H
#define USBRIG_DESC_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "model.h"

int desc_device(const struct gd_device *dev, uint8_t *dst, size_t len);
/* configuration idx (0-based): type USB_DT_CONFIG, or USB_DT_OTHER_SPEED_CONFIG
 * for the same configuration as seen at the other speed (high <-> full). */
int desc_config(const struct gd_device *dev, size_t idx, uint8_t type,
		uint8_t *dst, size_t len);
/* index 0: the LANGID table; else the string as UTF-16LE (or its raw form) */
/* UTF-16 code units of the n bytes of UTF-8 at s, or -1 when they are not
 * well-formed UTF-8 (overlong, surrogate, truncated, beyond U+10FFFF). */
long desc_utf16_units(const char *s, size_t n);
int desc_string(const struct gd_device *dev, uint8_t index, uint8_t *dst,
		size_t len);
int desc_qualifier(const struct gd_device *dev, uint8_t *dst, size_t len);
int desc_bos(const struct gd_device *dev, uint8_t *dst, size_t len);

/* Walk the bLength chain of a descriptor set: 0 if the lengths add up to
 * exactly len with no zero or overrunning bLength, else -EINVAL.
 * bLength 1 counts as broken too (no room for bDescriptorType). */
int desc_check_chain(const uint8_t *buf, size_t len);

/* Print every descriptor the device serves as commented hex (--dump). */
int desc_dump(const struct gd_device *dev, FILE *out);

#endif /* USBRIG_DESC_H */
