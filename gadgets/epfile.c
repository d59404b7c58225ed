// SPDX-License-Identifier: GPL-2.0
/*
 * epfile.c - the files endpoints read (`source file`) and write (`sink
 * file`, and an isochronous endpoint's `sizes file`), device.h has the
 * contract.
 *
 * Paths are the script's, relative to the server's working directory.  A
 * source file is read whole at attach (at most GDEV_SOURCE_FILE_MAX
 * bytes), so serving it never blocks the event loop on a disk; a sink is
 * written as data arrives, with O_APPEND, in arrival order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "log.h"

static int file_load(struct gdev_file *f, const char *path)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	/* the size is the file system's word: still bounded */
	if (!S_ISREG(st.st_mode) || st.st_size > GDEV_SOURCE_FILE_MAX) {
		ret = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		goto out;
	}
	f->data = malloc(st.st_size ? st.st_size : 1);
	if (!f->data) {
		ret = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, f->data + got, st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		if (!n)
			break;		/* shrank meanwhile: what is there */
		got += n;
	}
	f->len = got;
out:
	close(fd);
	return ret;
}

static const char *file_path(const struct gdev_file *f)
{
	return f->sizes ? f->ep->beh.sizes_path : f->ep->beh.path;
}

static int file_open(struct gdev_file *f, const struct gd_endpoint *ep,
		     bool sizes)
{
	f->ep = ep;
	f->sizes = sizes;
	f->fd = -1;
	if (!sizes && ep->beh.mode == GD_EP_SOURCE)
		return file_load(f, ep->beh.path);
	f->fd = open(file_path(f), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
		     O_CLOEXEC, 0644);
	return f->fd < 0 ? -errno : 0;
}

/* the endpoint's file of each kind: its data (0), its sizes (1) */
static bool has_file(const struct gd_endpoint *ep, bool sizes)
{
	if (sizes)
		return ep->beh.sizes_path;
	return ep->beh.path && (ep->beh.mode == GD_EP_SINK ||
				(ep->beh.mode == GD_EP_SOURCE &&
				 ep->beh.src == GD_SRC_FILE));
}

static int add_file(struct gdev *dev, const struct gd_endpoint *ep,
		    bool sizes)
{
	struct gdev_file *f;
	int ret;

	f = realloc(dev->files, (dev->n_files + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	dev->files = f;
	f = &dev->files[dev->n_files++];
	memset(f, 0, sizeof(*f));
	ret = file_open(f, ep, sizes);
	if (ret)
		log_err("ep 0x%02x (line %d): %s \"%s\": %s",
			ep->bEndpointAddress, ep->line,
			f->fd < 0 && (sizes || ep->beh.mode == GD_EP_SINK) ?
			"cannot create" : "cannot read", file_path(f),
			strerror(-ret));
	return ret;
}

int gdev_files_open(struct gdev *dev)
{
	const struct gd_device *m = dev->model;
	const struct gd_endpoint *ep;
	size_t c, a, e, k;
	int ret;

	for (c = 0; c < m->n_configs; c++) {
		for (a = 0; a < m->configs[c].n_alts; a++) {
			for (e = 0; e < m->configs[c].alts[a].n_eps; e++) {
				ep = &m->configs[c].alts[a].eps[e];
				for (k = 0; k < 2; k++) {
					if (!has_file(ep, k))
						continue;
					ret = add_file(dev, ep, k);
					if (ret)
						goto err;
				}
			}
		}
	}
	return 0;
err:
	gdev_files_close(dev);
	return ret;
}

void gdev_files_close(struct gdev *dev)
{
	size_t i;

	for (i = 0; i < dev->n_files; i++) {
		if (dev->files[i].fd >= 0)
			close(dev->files[i].fd);
		free(dev->files[i].data);
	}
	free(dev->files);
	dev->files = NULL;
	dev->n_files = 0;
}

static struct gdev_file *find_file(struct gdev *dev,
				   const struct gd_endpoint *ep, bool sizes)
{
	size_t i;

	for (i = 0; i < dev->n_files; i++)
		if (dev->files[i].ep == ep && dev->files[i].sizes == sizes)
			return &dev->files[i];
	return NULL;
}

struct gdev_file *gdev_file_of(struct gdev *dev, const struct gd_endpoint *ep)
{
	return find_file(dev, ep, false);
}

struct gdev_file *gdev_sizes_of(struct gdev *dev, const struct gd_endpoint *ep)
{
	return find_file(dev, ep, true);
}

void gdev_file_read(const struct gdev_file *f, bool repeat, uint64_t *off,
		    uint8_t *dst, size_t n)
{
	size_t pos, chunk;

	while (n) {
		if (!f || !f->len || (!repeat && *off >= f->len)) {
			memset(dst, 0, n);
			*off += n;
			return;
		}
		pos = repeat ? *off % f->len : *off;
		chunk = f->len - pos < n ? f->len - pos : n;
		memcpy(dst, f->data + pos, chunk);
		dst += chunk;
		n -= chunk;
		*off += chunk;
	}
}

void gdev_file_write(struct gdev_file *f, const uint8_t *src, size_t n)
{
	ssize_t w;

	while (f && f->fd >= 0 && !f->failed && n) {
		w = write(f->fd, src, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			log_err("ep 0x%02x: writing \"%s\": %s; dropping its data from now on",
				f->ep->bEndpointAddress, file_path(f),
				w < 0 ? strerror(errno) : "nothing written");
			f->failed = true;
			return;
		}
		src += w;
		n -= w;
	}
}
