// SPDX-License-Identifier: GPL-2.0
/*
 * util.c - what every dump reader needs: bounded buffers, the device set,
 * notes, recorded transfers, errors, reading a file, --select.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "desc.h"
#include "import.h"

int imp_err(struct imp_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* every blob is bounded: a descriptor set is at most 64 KiB, a recorded
 * transfer at most what one URB carries in practice */
#define IMP_BLOB_MAX	(1u << 20)

int imp_blob_put(struct imp_blob *b, const void *data, size_t len)
{
	size_t cap;
	uint8_t *p;

	if (len > IMP_BLOB_MAX || b->len > IMP_BLOB_MAX - len)
		return -E2BIG;
	if (b->len + len > b->cap) {
		cap = b->cap ? b->cap : 64;
		while (cap < b->len + len)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->cap = cap;
	}
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

int imp_blob_put8(struct imp_blob *b, uint8_t v)
{
	return imp_blob_put(b, &v, 1);
}

int imp_blob_put16(struct imp_blob *b, uint16_t v)
{
	uint8_t p[2] = { v & 0xff, v >> 8 };

	return imp_blob_put(b, p, 2);
}

void imp_blob_free(struct imp_blob *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

struct imp_dev *imp_dev_new(struct imp_set *set, const char *where)
{
	struct imp_dev *d;

	if (set->n >= IMP_MAX_DEVICES)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->where = strdup(where ? where : "");
	if (!d->where) {
		free(d);
		return NULL;
	}
	d->busnum = -1;
	d->devnum = -1;
	set->devs[set->n++] = d;
	return d;
}

void imp_note(struct imp_dev *d, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (d->n_notes >= IMP_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	d->notes[d->n_notes] = strdup(buf);
	if (d->notes[d->n_notes])
		d->n_notes++;
}

int imp_add_ctrl(struct imp_dev *d, const uint8_t setup[8], bool stall,
		 const uint8_t *data, size_t len, const char *where)
{
	struct imp_ctrl *c, *v;
	int ret;

	if (d->n_ctrls >= IMP_MAX_CTRLS)
		return -E2BIG;
	v = realloc(d->ctrls, (d->n_ctrls + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	d->ctrls = v;
	c = &v[d->n_ctrls];
	memset(c, 0, sizeof(*c));
	memcpy(c->setup, setup, 8);
	c->stall = stall;
	ret = imp_blob_put(&c->data, data, len);
	if (ret)
		return ret;
	c->where = strdup(where ? where : "");
	if (!c->where) {
		imp_blob_free(&c->data);
		return -ENOMEM;
	}
	d->n_ctrls++;
	return 0;
}

int imp_add_in_packet(struct imp_dev *d, uint8_t ep, const uint8_t *data,
		      size_t len)
{
	struct imp_seq *s = NULL;
	struct imp_blob *v;
	size_t i;

	for (i = 0; i < d->n_seqs; i++)
		if (d->seqs[i].ep == ep)
			s = &d->seqs[i];
	if (!s) {
		if (d->n_seqs >= IMP_MAX_SEQS)
			return -E2BIG;
		s = &d->seqs[d->n_seqs++];
		memset(s, 0, sizeof(*s));
		s->ep = ep;
	}
	if (s->n_packets >= GD_MAX_SEQ_PACKETS)
		return -E2BIG;
	v = realloc(s->packets, (s->n_packets + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->packets = v;
	memset(&v[s->n_packets], 0, sizeof(*v));
	if (imp_blob_put(&v[s->n_packets], data, len))
		return -ENOMEM;
	s->n_packets++;
	return 0;
}

/*
 * A dump's text that is not UTF-8 was re-encoded on its way (a bug
 * tracker, a mail in Latin-1): the kernel and lsusb print strings as UTF-8.
 * Read it as Latin-1, each byte its own character, and say so.
 */
static char *latin1_to_utf8(const char *in)
{
	const unsigned char *p = (const unsigned char *)in;
	char *out = malloc(2 * strlen(in) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *p; p++) {
		if (*p < 0x80) {
			*o++ = (char)*p;
		} else {
			*o++ = (char)(0xc0 | *p >> 6);
			*o++ = (char)(0x80 | (*p & 0x3f));
		}
	}
	*o = '\0';
	return out;
}

int imp_set_string(struct imp_dev *d, uint8_t index, const char *utf8)
{
	char *s;

	if (!index)
		return -EINVAL;
	if (desc_utf16_units(utf8, strlen(utf8)) < 0) {
		s = latin1_to_utf8(utf8);
		if (s)
			imp_note(d, "string %u is not UTF-8: read as Latin-1 (\"%s\"); was the dump re-encoded?",
				 index, s);
	} else {
		s = strdup(utf8);
	}
	if (!s)
		return -ENOMEM;
	free(d->strings[index]);
	d->strings[index] = s;
	return 0;
}

int imp_read_file(const char *path, uint8_t **buf, size_t *len,
		  struct imp_error *err)
{
	uint8_t *b = NULL;
	size_t n = 0, cap = 0;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return imp_err(err, "%s: %s", path, strerror(errno));
	for (;;) {
		if (cap - n < 4096) {
			uint8_t *p;

			if (cap >= IMP_MAX_FILE) {
				close(fd);
				free(b);
				return imp_err(err, "%s: larger than %u MiB",
					       path, IMP_MAX_FILE >> 20);
			}
			cap = cap ? cap * 2 : 65536;
			p = realloc(b, cap + 1);
			if (!p) {
				close(fd);
				free(b);
				return imp_err(err, "%s: out of memory", path);
			}
			b = p;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			free(b);
			return imp_err(err, "%s: %s", path, strerror(e));
		}
		if (!r)
			break;
		n += r;
	}
	close(fd);
	if (!b) {
		b = malloc(1);
		if (!b)
			return imp_err(err, "%s: out of memory", path);
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

static void dev_free(struct imp_dev *d)
{
	size_t i, j;

	free(d->where);
	imp_blob_free(&d->device);
	for (i = 0; i < GD_MAX_CONFIGS; i++)
		imp_blob_free(&d->configs[i]);
	imp_blob_free(&d->bos);
	imp_blob_free(&d->qualifier);
	for (i = 0; i < 256; i++) {
		free(d->strings[i]);
		imp_blob_free(&d->string_raw[i]);
	}
	for (i = 0; i < d->n_ctrls; i++) {
		imp_blob_free(&d->ctrls[i].data);
		free(d->ctrls[i].where);
	}
	free(d->ctrls);
	for (i = 0; i < d->n_seqs; i++) {
		for (j = 0; j < d->seqs[i].n_packets; j++)
			imp_blob_free(&d->seqs[i].packets[j]);
		free(d->seqs[i].packets);
	}
	for (i = 0; i < GD_MAX_INTERFACES; i++)
		free(d->driver[i]);
	for (i = 0; i < d->n_notes; i++)
		free(d->notes[i]);
	free(d);
}

void imp_dev_drop(struct imp_set *set, struct imp_dev *d)
{
	size_t i;

	for (i = 0; i < set->n && set->devs[i] != d; i++)
		;
	if (i == set->n)
		return;
	memmove(&set->devs[i], &set->devs[i + 1],
		(set->n - i - 1) * sizeof(set->devs[0]));
	set->n--;
	dev_free(d);
}

void imp_set_free(struct imp_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		dev_free(set->devs[i]);
	free(set->format);
	free(set->path);
	memset(set, 0, sizeof(*set));
}

/* ---- --select ---- */

static int dev_ids(const struct imp_dev *d, unsigned int *vid,
		   unsigned int *pid)
{
	if (d->device.len < 12)
		return -ENOENT;
	*vid = d->device.data[8] | d->device.data[9] << 8;
	*pid = d->device.data[10] | d->device.data[11] << 8;
	return 0;
}

static int parse_pair(const char *s, int base, unsigned int max,
		      unsigned int *a, unsigned int *b)
{
	const char *colon = strchr(s, ':');
	unsigned long v;
	char *end;

	if (!colon || colon == s || !colon[1])
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || end != colon || v > max)
		return -EINVAL;
	*a = v;
	v = strtoul(colon + 1, &end, base);
	if (errno || *end || v > max)
		return -EINVAL;
	*b = v;
	return 0;
}

int imp_select(const struct imp_set *set, const char *sel,
	       struct imp_dev **out, struct imp_error *err)
{
	struct imp_dev *hit = NULL;
	unsigned int a, b, vid, pid;
	bool by_ids;
	size_t i, n = 0;
	char list[384] = "";

	if (!set->n)
		return imp_err(err, "%s: no USB device found in the %s dump",
			       set->path, set->format);
	if (!sel) {
		/* a capture also shows hubs the host only talked to (their
		 * class requests) and devices it never read: without
		 * --select only devices with a device descriptor count */
		for (i = 0; i < set->n; i++)
			if (set->devs[i]->device.len >= 18) {
				n++;
				hit = set->devs[i];
			}
		if (n == 1 || set->n == 1) {
			*out = n == 1 ? hit : set->devs[0];
			return 0;
		}
		n = 0;
		hit = NULL;
		by_ids = false;
	} else {
		/* 4 hex digits each side: VID:PID; else BUS:DEV (decimal) */
		by_ids = strlen(sel) == 9 && sel[4] == ':';
		if (by_ids ? parse_pair(sel, 16, 0xffff, &a, &b) :
			     parse_pair(sel, 10, 0xffff, &a, &b))
			return imp_err(err, "--select %s: expected VID:PID (4 hex digits each) or BUS:DEV (decimal)",
				       sel);
	}
	for (i = 0; i < set->n; i++) {
		const struct imp_dev *d = set->devs[i];
		bool match;
		size_t l = strlen(list);

		if (dev_ids(d, &vid, &pid))
			vid = pid = 0xffffffff;
		if (!sel)
			match = d->device.len >= 18;
		else if (by_ids)
			match = vid == a && pid == b;
		else
			match = d->busnum == (int)a && d->devnum == (int)b;
		if (!match)
			continue;
		n++;
		hit = set->devs[i];
		if (l < sizeof(list) - 64)
			snprintf(list + l, sizeof(list) - l, "%s%03d:%03d %04x:%04x (%s)",
				 l ? ", " : "", d->busnum, d->devnum,
				 vid & 0xffff, pid & 0xffff, d->where);
	}
	if (n == 1) {
		*out = hit;
		return 0;
	}
	if (!n)
		return imp_err(err, "%s: no device matches --select %s (%zu devices in the dump; --list shows them)",
			       set->path, sel, set->n);
	return imp_err(err, "%s: %zu devices match%s%s: %s; choose one with --select %s",
		       set->path, n, sel ? " --select " : "", sel ? sel : "",
		       list, by_ids || !sel ? "BUS:DEV" : "VID:PID");
}
