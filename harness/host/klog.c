// SPDX-License-Identifier: GPL-2.0
/*
 * klog.c - reading what a guest kernel logged (klog.h).
 */
#define _GNU_SOURCE
#include "klog.h"

#include <stdio.h>
#include <string.h>

/*
 * The first words of the kernel's reports.  A BUG() is "kernel BUG at
 * FILE:LINE!" with CONFIG_DEBUG_BUGVERBOSE (Debian's kernels) and "Kernel
 * BUG at FUNC+OFF [verbose debug info unavailable]" without it (the
 * patched kernels, from tinyconfig), then x86's die() line "invalid
 * opcode: 0000 [#1] ..."; a page fault's die() line is "Oops: ...".
 */
static const char *const report_marks[] = {
	"BUG:", "WARNING:", "INFO: task ", "INFO: rcu_",
	"general protection fault", "Kernel panic", "kernel BUG",
	"Kernel BUG", "invalid opcode:", "UBSAN:", "KASAN:",
	"list_add corruption", "list_del corruption",
	"Unable to handle kernel", "Oops:", NULL,
};

const char *klog_strip_time(const char *s)
{
	if (*s == '[') {
		const char *e = strchr(s, ']');

		if (e)
			return e[1] == ' ' ? e + 2 : e + 1;
	}
	return s;
}

const char *klog_report_mark(const char *s)
{
	for (int i = 0; report_marks[i]; i++)
		if (strstr(s, report_marks[i]))
			return report_marks[i];
	return NULL;
}

bool klog_report_line(const char *s)
{
	return klog_report_mark(s) != NULL;
}

bool klog_probe_error(const char *s, char intf[64], char drv[64], int *err)
{
	const char *p;
	int e;

	p = strstr(s, ": probe of ");
	if (p &&
	    sscanf(p, ": probe of %63s failed with error -%d", intf, &e) == 2) {
		snprintf(drv, 64, "%.*s", (int)(p - s), s);
		*err = e;
		return !strchr(drv, ' ') && e > 0;
	}
	p = strstr(s, ": probe with driver ");
	if (p &&
	    sscanf(p, ": probe with driver %63s failed with error -%d", drv,
		   &e) == 2) {
		const char *sp = memrchr(s, ' ', (size_t)(p - s));

		snprintf(intf, 64, "%.*s", (int)(p - (sp ? sp + 1 : s)),
			 sp ? sp + 1 : s);
		*err = e;
		return e > 0;
	}
	p = strstr(s, "probe of ");
	if (p &&
	    sscanf(p, "probe of %63s returned %d after", intf, &e) == 2 && e) {
		drv[0] = '\0';
		*err = e < 0 ? -e : e;
		return true;
	}
	return false;
}

int klog_errno_of_text(const char *t)
{
	const char *p = strstr(t, "write error: ");
	int e;

	if (!p)
		return -1;
	p += 13;
	for (e = 1; e < 134; e++)
		if (!strncmp(p, strerror(e), strlen(strerror(e))))
			return e;
	return -1;
}
