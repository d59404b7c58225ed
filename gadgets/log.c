// SPDX-License-Identifier: GPL-2.0
/* log.c - the one log sink (see log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

enum log_level log_threshold = GLOG_WARN;

static const char *const level_names[] = {
	[GLOG_ERR] = "error",
	[GLOG_WARN] = "warn",
	[GLOG_INFO] = "info",
	[GLOG_DBG] = "debug",
};

void log_init_from_env(void)
{
	const char *v = getenv("USBRIG_LOG");
	unsigned int i;

	if (!v)
		return;
	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (!strcmp(v, level_names[i]))
			log_threshold = i;
}

void log_msg(enum log_level lvl, const char *func, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (!log_enabled(lvl))
		return;
	n = snprintf(line, sizeof(line), "usbrig-gadget: %s: %s: ",
		     level_names[lvl], func);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* one fputs per line so lines of concurrent writers do not interleave */
	strncat(line, "\n", sizeof(line) - strlen(line) - 1);
	fputs(line, stderr);
}
