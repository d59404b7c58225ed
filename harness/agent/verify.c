// SPDX-License-Identifier: GPL-2.0
/*
 * verify.c - read an attached device's descriptors back through libusb and
 * compare them byte for byte with what the gadget script serves.
 *
 * The reference is `usbrig-gadget --dump SCRIPT`: one line per descriptor
 * set, "LABEL: 12 01 ...", LABEL one of device, config N,
 * other-speed-config N, qualifier, bos, string N; '#' lines are comments.
 * Each is fetched with its own GET_DESCRIPTOR (USB 2.0 9.4.3) of exactly
 * the dumped length, so a configuration is read at full wTotalLength and
 * the request really reaches the gadget (usbfs does not answer from the
 * kernel's cache).  The device node is opened directly and wrapped, so
 * libusb needs neither device discovery nor udev.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <libusb.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DESC_MAX	65535

enum {
	DT_DEVICE = 1,
	DT_CONFIG = 2,
	DT_STRING = 3,
	DT_QUALIFIER = 6,
	DT_OTHER_SPEED = 7,
	DT_BOS = 15,
};

struct ref {
	char label[48];
	int type;
	int index;
	uint8_t *bytes;
	size_t len;
};

static int parse_label(const char *label, int *type, int *index)
{
	*index = 0;
	if (!strcmp(label, "device"))
		*type = DT_DEVICE;
	else if (sscanf(label, "config %d", index) == 1)
		*type = DT_CONFIG;
	else if (sscanf(label, "other-speed-config %d", index) == 1)
		*type = DT_OTHER_SPEED;
	else if (!strcmp(label, "qualifier"))
		*type = DT_QUALIFIER;
	else if (!strcmp(label, "bos"))
		*type = DT_BOS;
	else if (sscanf(label, "string %d", index) == 1)
		*type = DT_STRING;
	else
		return -1;
	return *index >= 0 && *index <= 255 ? 0 : -1;
}

/* One dump line into r; 0, or -1 when it is not a hex line. */
static int parse_line(char *line, struct ref *r)
{
	char *colon = strchr(line, ':'), *p, *end;
	size_t cap = 64;

	if (line[0] == '#' || !colon)
		return -1;
	*colon = '\0';
	if (parse_label(line, &r->type, &r->index))
		return -1;
	strfmt(r->label, sizeof(r->label), "%s", line);
	r->bytes = malloc(cap);
	r->len = 0;
	if (!r->bytes)
		return -1;
	for (p = colon + 1;;) {
		unsigned long v;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		v = strtoul(p, &end, 16);
		if (end != p + 2 || v > 0xff || r->len == DESC_MAX) {
			free(r->bytes);
			return -1;	/* an error line, not bytes */
		}
		if (r->len == cap) {
			uint8_t *n = realloc(r->bytes, cap * 2);

			if (!n) {
				free(r->bytes);
				return -1;
			}
			r->bytes = n;
			cap *= 2;
		}
		r->bytes[r->len++] = (uint8_t)v;
		p = end;
	}
	return r->len ? 0 : (free(r->bytes), -1);
}

static int timeout_ms(uint64_t deadline_us)
{
	uint64_t t = now_us();

	if (t >= deadline_us)
		return 1;
	t = (deadline_us - t) / 1000;
	return t > 5000 ? 5000 : (int)t + 1;
}

int verify_descriptors(const struct gadget *g, uint64_t deadline_us,
		       char *saw, size_t size)
{
	char *const argv[] = { "/usr/bin/usbrig-gadget", "--dump",
			       (char *)g->script, NULL };
	struct ref refs[300];
	struct proc_res r;
	libusb_context *ctx = NULL;
	libusb_device_handle *h = NULL;
	char path[PATH_MAX], busnum[16], devnum[16], *line, *save = NULL;
	uint16_t langid = 0x0409;
	uint8_t *buf = NULL;
	int n = 0, i, fd = -1, ret = -1, got;

	if (proc_run(argv, deadline_us, &r)) {
		strfmt(saw, size, "cannot run usbrig-gadget --dump");
		return -1;
	}
	if (r.status) {
		strfmt(saw, size, "usbrig-gadget --dump %s: status %d: %s",
			 g->script, r.status, tail_lines(r.out, 3));
		proc_res_free(&r);
		return -1;
	}
	for (line = strtok_r(r.out, "\n", &save); line && n < 300;
	     line = strtok_r(NULL, "\n", &save))
		if (!parse_line(line, &refs[n]))
			n++;
	proc_res_free(&r);
	for (i = 0; i < n; i++)
		if (refs[i].type == DT_STRING && refs[i].index == 0 &&
		    refs[i].len >= 4)
			langid = (uint16_t)(refs[i].bytes[2] |
					    refs[i].bytes[3] << 8);

	strfmt(path, sizeof(path), "/sys/bus/usb/devices/%s/busnum", g->dev);
	fd = open(path, O_RDONLY);
	got = fd >= 0 ? (int)read(fd, busnum, sizeof(busnum) - 1) : -1;
	if (fd >= 0)
		close(fd);
	busnum[got > 0 ? got : 0] = '\0';
	strfmt(path, sizeof(path), "/sys/bus/usb/devices/%s/devnum", g->dev);
	fd = open(path, O_RDONLY);
	got = fd >= 0 ? (int)read(fd, devnum, sizeof(devnum) - 1) : -1;
	if (fd >= 0)
		close(fd);
	devnum[got > 0 ? got : 0] = '\0';
	strfmt(path, sizeof(path), "/dev/bus/usb/%03d/%03d", atoi(busnum),
		 atoi(devnum));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		strfmt(saw, size, "verify: %s: %s", path, strerror(errno));
		goto out;
	}
	libusb_set_option(NULL, LIBUSB_OPTION_NO_DEVICE_DISCOVERY);
	if (libusb_init(&ctx)) {
		strfmt(saw, size, "verify: libusb_init failed");
		goto out;
	}
	got = libusb_wrap_sys_device(ctx, (intptr_t)fd, &h);
	if (got) {
		strfmt(saw, size, "verify: libusb_wrap_sys_device(%s): %s",
			 path, libusb_error_name(got));
		goto out;
	}
	buf = malloc(DESC_MAX);
	if (!buf)
		goto out;
	if (!n) {
		strfmt(saw, size, "verify: usbrig-gadget --dump printed no descriptors");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct ref *f = &refs[i];
		uint16_t windex = f->type == DT_STRING && f->index ? langid : 0;
		size_t k;

		got = libusb_control_transfer(h, LIBUSB_ENDPOINT_IN,
					      LIBUSB_REQUEST_GET_DESCRIPTOR,
					      (uint16_t)(f->type << 8 | f->index),
					      windex, buf, (uint16_t)f->len,
					      (unsigned int)timeout_ms(deadline_us));
		if (got < 0) {
			strfmt(saw, size, "%s: GET_DESCRIPTOR(%d, %d) of %zu bytes failed: %s; the gadget serves: %zu bytes",
				 f->label, f->type, f->index, f->len,
				 libusb_error_name(got), f->len);
			goto out;
		}
		for (k = 0; k < (size_t)got && k < f->len; k++)
			if (buf[k] != f->bytes[k])
				break;
		if (k < f->len) {
			if (k < (size_t)got)
				strfmt(saw, size, "%s differs at offset %zu: device 0x%02x, gadget 0x%02x",
					 f->label, k, buf[k], f->bytes[k]);
			else
				strfmt(saw, size, "%s: device returned %d bytes, the gadget serves %zu",
					 f->label, got, f->len);
			goto out;
		}
	}
	out_diag("verify %s (%s): %d descriptor sets equal", g->id, g->dev, n);
	ret = 0;
out:
	free(buf);
	if (h)
		libusb_close(h);
	if (ctx)
		libusb_exit(ctx);
	if (fd >= 0)
		close(fd);
	for (i = 0; i < n; i++)
		free(refs[i].bytes);
	return ret;
}
