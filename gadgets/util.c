// SPDX-License-Identifier: GPL-2.0
/* util.c - small text helpers shared across gadgets/ (util.h). */
#include <errno.h>

#include "util.h"

int util_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int util_hexbyte(const char *s, size_t n, uint8_t *out)
{
	int hi = 0, lo;

	if (n >= 3 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	} else if (n != 2) {
		return -EINVAL;
	}
	if (n == 2) {
		hi = util_hexval(s[0]);
		s++;
	} else if (n != 1) {
		return -EINVAL;
	}
	lo = util_hexval(s[0]);
	if (hi < 0 || lo < 0)
		return -EINVAL;
	*out = (uint8_t)(hi << 4 | lo);
	return 0;
}
