// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs.c - the `descriptors` file of a USB device in sysfs.
 *
 * The file holds the 18-byte device descriptor and then every
 * configuration's full bytes (wTotalLength each), as the kernel read them
 * from the device (drivers/usb/core/sysfs.c, read_descriptors()): the
 * most faithful dump there is.  When the file sits in its device folder
 * (or a copy of one), the sibling attributes add what it lacks: the
 * strings (manufacturer, product, serial, configuration, each interface's
 * `interface`), speed, busnum/devnum, bos_descriptors, and which driver
 * each interface of the active configuration was bound to.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"

/*
 * Bug reports often paste the file as text: `xxd`, `hexdump -C`, `od -A x
 * -t x1` or bare hex bytes.  hexdump_text() turns such text back into the
 * bytes.  Per line: a first word ending in `:` (xxd) or of more than 4 hex
 * digits followed by more words is an offset; words of 2 hex digits, or 4
 * (xxd's pairs), are bytes; the ASCII column is not read: hexdump -C puts
 * it behind `|`, xxd behind column 50 (its hex area is padded to there).
 * Returns 0 with *out filled, or -EINVAL with err at the first bad word.
 */
#define XXD_HEX_END	50

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int hex_line(const char *path, int line, const char *p,
		    const char *end, struct imp_blob *out,
		    struct imp_error *err)
{
	const char *q = p, *w;
	bool first = true;
	size_t wl, k;

	for (;;) {
		while (q < end && blank(*q))
			q++;
		if (q >= end || *q == '|')
			return 0;
		w = q;
		while (q < end && !blank(*q))
			q++;
		wl = q - w;
		if (first) {
			first = false;
			if (w[wl - 1] == ':') {		/* xxd: stop at its column */
				if (end - p > XXD_HEX_END)
					end = p + XXD_HEX_END;
				continue;
			}
			if (wl > 4)	/* hexdump, od; alone: the closing line */
				continue;
		}
		for (k = 0; k < wl; k++)
			if (util_hexval(w[k]) < 0)
				break;
		if ((wl != 2 && wl != 4) || k != wl)
			return imp_err(err, "%s:%d: '%.*s' is not a hex byte of a descriptor dump",
				       path, line, (int)(wl > 20 ? 20 : wl), w);
		for (k = 0; k < wl; k += 2)
			if (imp_blob_put8(out, util_hexval(w[k]) << 4 |
					  util_hexval(w[k + 1])))
				return imp_err(err, "%s: out of memory", path);
	}
}

static int hexdump_text(const char *path, const uint8_t *buf, size_t len,
			struct imp_blob *out, struct imp_error *err)
{
	size_t pos = 0;
	int line = 0, ret;

	while (pos < len) {
		const char *p = (const char *)buf + pos;
		const char *eol = memchr(p, '\n', len - pos);
		size_t n = eol ? (size_t)(eol - p) : len - pos;

		line++;
		pos += n + (eol ? 1 : 0);
		ret = hex_line(path, line, p, p + n, out, err);
		if (ret)
			return ret;
	}
	return 0;
}

static bool is_binary_dump(const uint8_t *buf, size_t len)
{
	return len >= 18 && buf[0] == 18 && buf[1] == 0x01;
}

/* text whose first hex bytes are a device descriptor: 12 01 */
static bool is_text_dump(const uint8_t *buf, size_t len)
{
	struct imp_blob b = { 0 };
	bool ok;

	/* the first lines are enough to tell */
	hexdump_text("", buf, len > 1024 ? 1024 : len, &b, NULL);
	ok = b.len >= 2 && b.data[0] == 18 && b.data[1] == 0x01;
	imp_blob_free(&b);
	return ok;
}

static bool sysfs_sniff(const char *path, const uint8_t *buf, size_t len)
{
	(void)path;
	return is_binary_dump(buf, len) || is_text_dump(buf, len);
}

/* a sibling attribute's text without its trailing newline, or NULL */
static char *attr(const char *dir, const char *name)
{
	char path[PATH_MAX];
	uint8_t *buf;
	size_t len;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return NULL;
	if (access(path, R_OK) || imp_read_file(path, &buf, &len, NULL))
		return NULL;
	if (len && buf[len - 1] == '\n')
		buf[--len] = 0;
	if (strlen((char *)buf) != len) {	/* NUL inside: not text */
		free(buf);
		return NULL;
	}
	return (char *)buf;
}

static void set_string_attr(struct imp_dev *d, const char *dir,
			    const char *name, uint8_t index)
{
	char *s;

	if (!index)
		return;
	s = attr(dir, name);
	if (!s) {
		imp_note(d, "string %u: no `%s` beside the file; the index points at nothing",
			 index, name);
		return;
	}
	imp_set_string(d, index, s);
	free(s);
}

static enum usbip_speed speed_of(const char *s)
{
	if (!strcmp(s, "1.5"))
		return USBIP_SPEED_LOW;
	if (!strcmp(s, "12"))
		return USBIP_SPEED_FULL;
	if (!strcmp(s, "480"))
		return USBIP_SPEED_HIGH;
	if (!strcmp(s, "5000") || !strcmp(s, "10000") || !strcmp(s, "20000"))
		return USBIP_SPEED_SUPER;
	return USBIP_SPEED_UNKNOWN;
}

/* iInterface of interface intf (alternate setting alt) in config c */
static int iinterface(const struct imp_blob *c, unsigned int intf,
		      unsigned int alt)
{
	size_t pos = 0;

	while (pos + 2 <= c->len && c->data[pos] >= 2 &&
	       c->data[pos] <= c->len - pos) {
		const uint8_t *p = c->data + pos;

		if (p[1] == 0x04 && p[0] >= 9 && p[2] == intf && p[3] == alt)
			return p[8];
		pos += p[0];
	}
	return -1;
}

/* the interfaces of the active configuration: `<dev>:<cfg>.<intf>/` */
static void read_interfaces(struct imp_dev *d, const char *dir,
			    const char *devname, int cfg_index)
{
	char sub[PATH_MAX + 256], link[PATH_MAX + 272], target[PATH_MAX];
	struct dirent *de;
	size_t n = strlen(devname);
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	while ((de = readdir(dp))) {
		unsigned int cfg, intf, alt = 0;
		char *s, tail;
		ssize_t l;
		int idx;

		if (strncmp(de->d_name, devname, n) || de->d_name[n] != ':' ||
		    sscanf(de->d_name + n + 1, "%u.%u%c", &cfg, &intf, &tail) != 2 ||
		    intf >= GD_MAX_INTERFACES)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		s = attr(sub, "bAlternateSetting");
		if (s) {
			alt = strtoul(s, NULL, 10);
			free(s);
		}
		idx = cfg_index >= 0 ?
		      iinterface(&d->configs[cfg_index], intf, alt) : -1;
		s = attr(sub, "interface");
		if (s && idx > 0 && !d->strings[idx])
			imp_set_string(d, idx, s);
		free(s);
		snprintf(link, sizeof(link), "%s/driver", sub);
		l = readlink(link, target, sizeof(target) - 1);
		d->driver_known = true;
		if (l > 0) {
			target[l] = 0;
			s = strrchr(target, '/');
			free(d->driver[intf]);
			d->driver[intf] = strdup(s ? s + 1 : target);
		}
	}
	closedir(dp);
}

static int read_bytes(const char *path, const uint8_t *buf, size_t len,
		      struct imp_set *set, struct imp_error *err);

static int sysfs_read(const char *path, const uint8_t *buf, size_t len,
		      struct imp_set *set, struct imp_error *err)
{
	struct imp_blob b = { 0 };
	int ret;

	if (is_binary_dump(buf, len))
		return read_bytes(path, buf, len, set, err);
	ret = hexdump_text(path, buf, len, &b, err);
	if (!ret)
		ret = read_bytes(path, b.data, b.len, set, err);
	imp_blob_free(&b);
	return ret;
}

static int read_bytes(const char *path, const uint8_t *buf, size_t len,
		      struct imp_set *set, struct imp_error *err)
{
	char dir[PATH_MAX], where[PATH_MAX + 16];
	const char *slash = strrchr(path, '/');
	char *s, *devname;
	struct imp_dev *d;
	size_t pos = 18;
	int active = -1, ret;
	unsigned int i;

	if (len < 18 || buf[0] != 18 || buf[1] != 0x01)
		return imp_err(err, "%s: offset 0: not a sysfs descriptors file (it starts with the 18-byte device descriptor, 12 01 ...)",
			       path);
	snprintf(where, sizeof(where), "%s: offset 0", path);
	d = imp_dev_new(set, where);
	if (!d)
		return imp_err(err, "%s: out of memory", path);
	if (imp_blob_put(&d->device, buf, 18))
		return imp_err(err, "%s: out of memory", path);
	while (pos < len) {
		size_t total;

		if (len - pos < 9 || buf[pos + 1] != 0x02)
			return imp_err(err, "%s: offset %zu: expected a configuration descriptor (09 02 ...), found %zu byte(s) of something else",
				       path, pos, len - pos < 9 ? len - pos : 2);
		total = buf[pos + 2] | buf[pos + 3] << 8;
		if (total < 9)
			return imp_err(err, "%s: offset %zu: configuration with wTotalLength %zu",
				       path, pos, total);
		if (total > len - pos)
			return imp_err(err, "%s: offset %zu: configuration of %zu bytes, only %zu left: the file is cut short",
				       path, pos, total, len - pos);
		if (d->n_configs >= GD_MAX_CONFIGS)
			return imp_err(err, "%s: offset %zu: more than %d configurations",
				       path, pos, GD_MAX_CONFIGS);
		if (imp_blob_put(&d->configs[d->n_configs++], buf + pos, total))
			return imp_err(err, "%s: out of memory", path);
		pos += total;
	}
	if (!d->n_configs)
		return imp_err(err, "%s: offset 18: no configuration descriptor after the device descriptor",
			       path);

	/* the folder the file is in: its siblings are the device's attributes */
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	set_string_attr(d, dir, "manufacturer", buf[14]);
	set_string_attr(d, dir, "product", buf[15]);
	set_string_attr(d, dir, "serial", buf[16]);
	s = attr(dir, "speed");
	if (s) {
		d->speed = speed_of(s);
		free(s);
	} else {
		imp_note(d, "no `speed` beside the file: the speed is guessed");
	}
	s = attr(dir, "busnum");
	if (s) {
		d->busnum = atoi(s);
		free(s);
	}
	s = attr(dir, "devnum");
	if (s) {
		d->devnum = atoi(s);
		free(s);
	}
	s = attr(dir, "bConfigurationValue");
	for (i = 0; s && i < d->n_configs; i++)
		if (d->configs[i].data[5] == strtoul(s, NULL, 10))
			active = i;
	free(s);
	if (active >= 0)
		set_string_attr(d, dir, "configuration",
				d->configs[active].data[6]);
	{
		char bos[PATH_MAX + 32];
		uint8_t *b;
		size_t bl;

		snprintf(bos, sizeof(bos), "%s/bos_descriptors", dir);
		if (!access(bos, R_OK) && !imp_read_file(bos, &b, &bl, NULL)) {
			if (bl >= 5 && b[1] == 0x0f)
				ret = imp_blob_put(&d->bos, b, bl);
			else
				ret = 0;
			free(b);
			if (ret)
				return imp_err(err, "%s: out of memory", path);
		}
	}
	/* the device's own name is the folder's: 1-1, 2-1.4, ... */
	devname = strrchr(dir, '/');
	devname = devname ? devname + 1 : dir;
	read_interfaces(d, dir, devname, active);
	return 0;
}

const struct imp_reader imp_reader_sysfs = {
	.name = "sysfs",
	.summary = "a device's sysfs `descriptors` file, binary or as a hex dump (xxd, hexdump -C, od), with its sibling attributes when present",
	.sniff = sysfs_sniff,
	.read = sysfs_read,
};
