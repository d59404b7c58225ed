/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log.h - one log sink for the gadget server.
 *
 * Lines go to stderr as "usbrig-gadget: <level>: <func>: message".  The
 * level comes from -v (repeatable) or USBRIG_LOG=error|warn|info|debug.
 * Tests grep the stable prefix.
 */
#ifndef USBRIG_LOG_H
#define USBRIG_LOG_H

/* GLOG_: no clash with <syslog.h>'s LOG_ERR, LOG_WARNING, ... */
enum log_level { GLOG_ERR, GLOG_WARN, GLOG_INFO, GLOG_DBG };

extern enum log_level log_threshold;

void log_init_from_env(void);
void log_msg(enum log_level lvl, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_enabled(lvl) ((lvl) <= log_threshold)
#define log_err(...)  log_msg(GLOG_ERR, __func__, __VA_ARGS__)
#define log_warn(...) do { if (log_enabled(GLOG_WARN)) log_msg(GLOG_WARN, __func__, __VA_ARGS__); } while (0)
#define log_info(...) do { if (log_enabled(GLOG_INFO)) log_msg(GLOG_INFO, __func__, __VA_ARGS__); } while (0)
#define log_dbg(...)  do { if (log_enabled(GLOG_DBG)) log_msg(GLOG_DBG, __func__, __VA_ARGS__); } while (0)

#endif /* USBRIG_LOG_H */
