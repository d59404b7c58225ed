// SPDX-License-Identifier: GPL-2.0
/* fn/uvc_pattern.c - the uvc test pattern (uvc_pattern.h has the rules). */
#include <errno.h>
#include <string.h>

#include "uvc_pattern.h"

/* 75% colour bars, BT.601 limited range: Y, Cb (U), Cr (V) */
static const uint8_t bars[8][3] = {
	{ 180, 128, 128 },	/* white */
	{ 162,  44, 142 },	/* yellow */
	{ 131, 156,  44 },	/* cyan */
	{ 112,  72,  58 },	/* green */
	{  84, 184, 198 },	/* magenta */
	{  65, 100, 212 },	/* red */
	{  35, 212, 114 },	/* blue */
	{  16, 128, 128 },	/* black */
};

static const char *const names[] = {
	[UVC_PAT_BARS] = "bars",
	[UVC_PAT_COUNT] = "count",
};

int uvc_pattern_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return -EINVAL;
}

const char *uvc_pattern_name(enum uvc_pattern p)
{
	return (size_t)p < sizeof(names) / sizeof(names[0]) ? names[p] : "?";
}

static uint8_t bars_byte(uint32_t n, uint32_t w, uint32_t h, uint32_t o)
{
	uint32_t row = 2 * w, y = o / row, c = o % row;
	uint32_t x = c / 2, bar;
	uint8_t v;

	switch (c % 4) {
	case 0:		/* Y of the pair's first pixel */
	case 2:		/* Y of its second */
		v = bars[x * 8 / w][0];
		return y == n % h ? 255 - v : v;
	case 1:		/* U, of the first pixel's bar */
		bar = (x & ~1u) * 8 / w;
		return bars[bar][1];
	default:	/* V */
		bar = (x & ~1u) * 8 / w;
		return bars[bar][2];
	}
}

static uint8_t pattern_byte(enum uvc_pattern p, uint32_t n, uint32_t w,
			    uint32_t h, uint32_t o)
{
	if (o < UVC_PAT_STAMP)
		return (uint8_t)(n >> (8 * o));
	if (p == UVC_PAT_COUNT)
		return (uint8_t)(n + o + o / 256);
	return bars_byte(n, w, h, o);
}

void uvc_pattern_fill(enum uvc_pattern p, uint32_t n, uint32_t w,
		      uint32_t h, uint32_t off, uint8_t *dst, size_t len)
{
	uint64_t size = 2ull * w * h;
	size_t i;

	for (i = 0; i < len; i++)
		dst[i] = off + i < size ?
			 pattern_byte(p, n, w, h, (uint32_t)(off + i)) : 0;
}

uint32_t uvc_pattern_number(const uint8_t *frame)
{
	return frame[0] | frame[1] << 8 | frame[2] << 16 |
	       (uint32_t)frame[3] << 24;
}

long uvc_pattern_check(enum uvc_pattern p, uint32_t w, uint32_t h,
		       const uint8_t *buf, size_t len)
{
	uint32_t n;
	size_t o;

	if (!w || !h || len != 2ull * w * h || len < UVC_PAT_STAMP)
		return (long)len;
	n = uvc_pattern_number(buf);
	for (o = UVC_PAT_STAMP; o < len; o++)
		if (buf[o] != pattern_byte(p, n, w, h, (uint32_t)o))
			return (long)o;
	return -1;
}
