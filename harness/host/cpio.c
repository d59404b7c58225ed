// SPDX-License-Identifier: GPL-2.0
/*
 * cpio.c - write newc cpio archives (see cpio.h).
 */
#define _GNU_SOURCE
#include "cpio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/fsutil.h"

static void cpio_raw(struct cpio *c, const void *p, size_t len)
{
	if (!c->err)
		c->err = fs_write_all(c->fd, p, len);
}

static void cpio_pad(struct cpio *c, size_t len)
{
	static const char zero[4];

	if (len & 3)
		cpio_raw(c, zero, 4 - (len & 3));
}

void cpio_header(struct cpio *c, const char *name, uint32_t mode,
			uint32_t size, uint32_t mtime, uint32_t rmaj,
			uint32_t rmin)
{
	char hdr[111];
	size_t nlen = strlen(name) + 1;

	snprintf(hdr, sizeof(hdr),
		 "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 ++c->ino, mode, 0u, 0u, S_ISDIR(mode) ? 2u : 1u, mtime, size,
		 0u, 0u, rmaj, rmin, (uint32_t)nlen, 0u);
	cpio_raw(c, hdr, 110);
	cpio_raw(c, name, nlen);
	cpio_pad(c, 110 + nlen);
}

void cpio_data(struct cpio *c, const char *name, uint32_t mode,
		      const void *data, size_t len)
{
	cpio_header(c, name, mode, (uint32_t)len, 0, 0, 0);
	cpio_raw(c, data, len);
	cpio_pad(c, len);
}

void cpio_file(struct cpio *c, const char *name, const char *src)
{
	char buf[65536];
	struct stat st;
	off_t done = 0;
	int fd;

	if (c->err)
		return;
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		c->err = -errno;
		if (fd >= 0)
			close(fd);
		return;
	}
	if (st.st_size > UINT32_MAX) {
		c->err = -EFBIG;
		close(fd);
		return;
	}
	cpio_header(c, name, S_IFREG | (st.st_mode & 07777),
		    (uint32_t)st.st_size, (uint32_t)st.st_mtim.tv_sec, 0, 0);
	while (!c->err && done < st.st_size) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* the file shrank under us: the image would lie */
			c->err = n < 0 ? -errno : -EIO;
			break;
		}
		if (n > st.st_size - done)
			n = (ssize_t)(st.st_size - done);
		cpio_raw(c, buf, (size_t)n);
		done += n;
	}
	close(fd);
	cpio_pad(c, (size_t)st.st_size);
}

/* Write dir (host path) as name (image path, "" for the root) and all
 * below it, sorted so the image is reproducible. */
void cpio_tree(struct cpio *c, const char *dir, const char *name)
{
	struct dirent **ents;
	int n, i;

	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		c->err = -errno;
		return;
	}
	for (i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		char src[PATH_MAX], dst[PATH_MAX], link[PATH_MAX];
		struct stat st;
		ssize_t l;

		if (!strcmp(d, ".") || !strcmp(d, "..") || c->err)
			goto next;
		if (snprintf(src, sizeof(src), "%s/%s", dir, d) >=
		    (int)sizeof(src) ||
		    snprintf(dst, sizeof(dst), "%s%s%s", name,
			     *name ? "/" : "", d) >= (int)sizeof(dst)) {
			c->err = -ENAMETOOLONG;
			goto next;
		}
		if (lstat(src, &st)) {
			c->err = -errno;
			goto next;
		}
		if (S_ISDIR(st.st_mode)) {
			cpio_header(c, dst, S_IFDIR | (st.st_mode & 07777), 0,
				    0, 0, 0);
			cpio_tree(c, src, dst);
		} else if (S_ISLNK(st.st_mode)) {
			l = readlink(src, link, sizeof(link));
			if (l < 0 || l == sizeof(link)) {
				c->err = l < 0 ? -errno : -ENAMETOOLONG;
				goto next;
			}
			cpio_data(c, dst, S_IFLNK | 0777, link, (size_t)l);
		} else if (S_ISREG(st.st_mode)) {
			cpio_file(c, dst, src);
		}
next:
		free(ents[i]);
	}
	free(ents);
}

void cpio_trailer(struct cpio *c)
{
	cpio_header(c, "TRAILER!!!", 0, 0, 0, 0, 0);
}
