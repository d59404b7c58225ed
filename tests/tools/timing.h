/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timing.h - the clock and the sort order the guest timing tools share
 * (tests/tools/usb-timing.c, tests/tools/iso-timing.c).  Each tool is one
 * static program built from its .c alone, so these are static inline.
 */
#ifndef USBRIG_TESTS_TOOLS_TIMING_H
#define USBRIG_TESTS_TOOLS_TIMING_H

#include <time.h>

/* CLOCK_MONOTONIC in milliseconds */
static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* qsort() order for doubles, ascending */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif
