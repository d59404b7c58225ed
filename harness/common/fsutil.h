/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsutil.h - file and folder helpers both ends of the harness use.
 *
 * Negative errno for failure, 0 for success (STYLE.md).  A path that does
 * not fit its buffer is an error (-ENAMETOOLONG), never cut: a cut path
 * names some other file.
 */
#ifndef USBRIG_FSUTIL_H
#define USBRIG_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Create path and every missing folder above it, each with mode (like
 * `mkdir -p`).  0 (also when it exists), -ENAMETOOLONG when path is
 * PATH_MAX bytes or more, or the errno of the mkdir() that failed.
 */
int fs_mkdir_p(const char *path, mode_t mode);

/*
 * The whole of the file at path, read to its end whatever read() returns
 * at a time, NUL-terminated, in a malloc'd buffer (*len: its length
 * without the NUL; len may be NULL).  NULL with errno set on failure:
 * EFBIG when the file holds more than max bytes.
 */
char *fs_read_file(const char *path, size_t max, size_t *len);

/* Write all len bytes of buf to fd, whatever write() takes at a time.
 * 0 or -errno. */
int fs_write_all(int fd, const void *buf, size_t len);

/* A small file (sysfs, procfs) in one read(2), NUL-terminated, trailing
 * newlines and spaces cut: its length, or -errno. */
int fs_read_small(const char *path, char *buf, size_t size);

/* val written to path in one write(2), as sysfs takes it (oflags: O_TRUNC,
 * ...): 0 or -errno. */
int fs_write_small(const char *path, const char *val, int oflags);

/* Remove path and all below it (like `rm -rf`; links are not followed).
 * Best effort: what cannot be removed stays. */
void fs_rm_rf(const char *path);

/*
 * Run argv[0] (a path: no PATH search) with stdout to out_path and stderr
 * to err_path (truncated; NULL: inherited) and wait for it.  Its exit
 * status (0..255), -ENOEXEC when it could not be run, -EINTR when it died
 * of a signal, or another -errno.
 */
int fs_run_cmd(char *const argv[], const char *out_path,
	       const char *err_path);

#endif /* USBRIG_FSUTIL_H */
