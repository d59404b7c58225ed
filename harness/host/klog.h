/* SPDX-License-Identifier: GPL-2.0 */
/*
 * klog.h - reading what a guest kernel logged and what a guest shell said:
 * the lines of a kernel report, a probe failure, a write error's errno.
 * Used by `usbrig repro`, `usbrig census` and the console watcher.
 */
#ifndef USBRIG_KLOG_H
#define USBRIG_KLOG_H

#include <stdbool.h>
#include <stddef.h>

/* "[   12.345678] text" -> "text" */
const char *klog_strip_time(const char *s);

/* The mark of a kernel report (BUG, WARNING, KASAN, Oops, ...) the line
 * holds, or NULL. */
const char *klog_report_mark(const char *s);

/* Does the line start a kernel report?  klog_report_mark() != NULL. */
bool klog_report_line(const char *s);

/*
 * A probe failure in one kernel log line (drivers/base/dd.c):
 *	6.1:	"DRV: probe of INTF failed with error -E"
 *	6.3+:	"DRV INTF: probe with driver DRV failed with error -E"
 *	initcall_debug: "probe of INTF returned E after T usecs" (the sign
 *	varies by version; the driver is not named: drv is ""; 0 is a
 *	success, not a failure)
 * Fills intf, drv and the positive errno; true when the line is one.
 */
bool klog_probe_error(const char *s, char intf[64], char drv[64], int *err);

/* The errno of a busybox "sh: write error: Invalid argument", or -1. */
int klog_errno_of_text(const char *t);

#endif /* USBRIG_KLOG_H */
