/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpio.h - write newc cpio archives (the initramfs format the kernel
 * unpacks, Documentation/driver-api/early-userspace/buffer-format.rst).
 *
 * Each call appends one or more entries to c->fd.  The first error sticks
 * in c->err (negative errno) and makes every later call a no-op, so a
 * writer checks once, after cpio_trailer().
 */
#ifndef USBRIG_CPIO_H
#define USBRIG_CPIO_H

#include <stddef.h>
#include <stdint.h>

struct cpio {
	int fd;
	uint32_t ino;		/* the last inode number given */
	int err;		/* 0, or the first error */
};

/* An entry's header and name; mode holds the type bits (S_IFDIR...). */
void cpio_header(struct cpio *c, const char *name, uint32_t mode,
		 uint32_t size, uint32_t mtime, uint32_t rmaj, uint32_t rmin);
/* An entry with the bytes data[len] as its contents (a symlink's target). */
void cpio_data(struct cpio *c, const char *name, uint32_t mode,
	       const void *data, size_t len);
/* The host file src (followed if a link) as name. */
void cpio_file(struct cpio *c, const char *name, const char *src);
/* Write dir (host path) as name (image path, "" for the root) and all
 * below it, sorted so the image is reproducible. */
void cpio_tree(struct cpio *c, const char *dir, const char *name);
/* The closing TRAILER!!! entry. */
void cpio_trailer(struct cpio *c);

#endif /* USBRIG_CPIO_H */
