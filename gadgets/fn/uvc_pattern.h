/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uvc_pattern.h - the test pattern the uvc function streams, and the check
 * the guest's grabber (tests/tools/v4l2-grab.c) makes of what it captured:
 * one definition for both sides.
 *
 * A frame is W x H pixels of packed YUYV 4:2:2 (Y0 U Y1 V for each pair of
 * pixels, W even), 2 W H bytes.  Byte o of frame n is a function of n and
 * o alone:
 *  - bytes 0..3 are n, little-endian (the stamp: a grabber learns n from
 *    the frame itself, so dropped frames do not matter);
 *  - `bars`: eight vertical colour bars of 75% (BT.601, limited range:
 *    white, yellow, cyan, green, magenta, red, blue, black from the left;
 *    pixel x is in bar 8x / W, a pair's U and V are those of its first
 *    pixel), and row n mod H has its Y bytes inverted (255 - Y): a line
 *    that moves down one row a frame;
 *  - `count`: byte o is (n + o + o / 256) mod 256 (a shift by any number
 *    of bytes, 256 included, shows).
 * Pure functions, no I/O: the gadget and a static guest tool link them.
 */
#ifndef USBRIG_UVC_PATTERN_H
#define USBRIG_UVC_PATTERN_H

#include <stddef.h>
#include <stdint.h>

enum uvc_pattern {
	UVC_PAT_BARS,
	UVC_PAT_COUNT,
};

#define UVC_PAT_STAMP	4	/* bytes of the frame number at the start */

/* The pattern of that name ("bars", "count"), or -EINVAL. */
int uvc_pattern_by_name(const char *name);
const char *uvc_pattern_name(enum uvc_pattern p);

/* len bytes of frame n (w x h, w even) from byte off on; bytes past the
 * frame's end are 0. */
void uvc_pattern_fill(enum uvc_pattern p, uint32_t n, uint32_t w,
		      uint32_t h, uint32_t off, uint8_t *dst, size_t len);

/* The frame number in a frame's stamp (its first UVC_PAT_STAMP bytes). */
uint32_t uvc_pattern_number(const uint8_t *frame);

/* Is buf (len bytes, w x h) frame n of the pattern for the number its
 * stamp holds?  -1 when it is, else the offset of the first byte that
 * differs (len itself when len is not the frame's size). */
long uvc_pattern_check(enum uvc_pattern p, uint32_t w, uint32_t h,
		       const uint8_t *buf, size_t len);

#endif /* USBRIG_UVC_PATTERN_H */
