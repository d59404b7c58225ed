/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util.h - small text helpers the gadget parser, the device functions and
 * the importers (gadgets/import/) share: one home for each.
 */
#ifndef USBRIG_UTIL_H
#define USBRIG_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* 0..15 for a hex digit, else -1. */
int util_hexval(int c);

/* A byte as gadget scripts write it in byte lists: two hex digits, or 0x
 * with one or two (s[0..n), need not be NUL-terminated).  0 or -EINVAL. */
int util_hexbyte(const char *s, size_t n, uint8_t *out);

#endif /* USBRIG_UTIL_H */
