// SPDX-License-Identifier: GPL-2.0
/*
 * emit.c - one imported device to a gadget script, proven by a round trip.
 *
 * The script spells out every field of every standard descriptor, so a
 * reviewer reads the device as the dump showed it.  Class-specific and
 * unknown descriptors stay as `raw` bytes at the place they had.  What
 * the script language cannot say structurally (a descriptor too short, a
 * duplicate endpoint, an IAD out of place) is demoted to `raw` too, so
 * the bytes still come out equal; each demotion is a comment.
 *
 * After writing, the script is parsed (script.c) and its descriptors
 * generated (desc.c); they must equal the dump's bytes.  A configuration
 * that still differs is written again as one raw block; if even that
 * fails, imp_emit() reports the difference instead of a wrong script.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "desc.h"
#include "import.h"
#include "script.h"

#define DT_DEVICE	0x01
#define DT_CONFIG	0x02
#define DT_STRING	0x03
#define DT_INTERFACE	0x04
#define DT_ENDPOINT	0x05
#define DT_IAD		0x0b
#define DT_BOS		0x0f
#define DT_SS_EP_COMP	0x30

#define BYTES_PER_LINE	16

struct out {
	char *buf;
	size_t len;
	size_t cap;
	int line;		/* lines written so far */
	bool oom;
};

static void __attribute__((format(printf, 2, 3)))
out(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	if (o->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->oom = true;
		return;
	}
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;

		while (cap < o->len + n + 1)
			cap *= 2;
		p = realloc(o->buf, cap);
		if (!p) {
			o->oom = true;
			return;
		}
		o->buf = p;
		o->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(o->buf + o->len, n + 1, fmt, ap);
	va_end(ap);
	for (p = o->buf + o->len; *p; p++)
		if (*p == '\n')
			o->line++;
	o->len += n;
}

/* `kw 01 02 ...`, continued with `\` every 16 bytes; a run longer than a
 * byte list may hold is split into several statements (raw appends). */
static void out_bytes(struct out *o, int depth, const char *kw,
		      const uint8_t *p, size_t n, const char *comment)
{
	size_t i, chunk;

	do {
		chunk = n > GD_MAX_BLOB ? GD_MAX_BLOB : n;
		out(o, "%*s%s", depth * 4, "", kw);
		for (i = 0; i < chunk; i++) {
			if (i && i % BYTES_PER_LINE == 0)
				out(o, " \\\n%*s", depth * 4 + (int)strlen(kw), "");
			out(o, " %02x", p[i]);
		}
		if (comment && *comment)
			out(o, "\t# %s", comment);
		out(o, "\n");
		p += chunk;
		n -= chunk;
		comment = NULL;
	} while (n);
}

/* a script string: printable ASCII as is, the rest escaped; UTF-8 bytes
 * >= 0x80 are kept (the parser reads them as UTF-8) */
static void out_quoted(struct out *o, const char *s)
{
	const unsigned char *p;

	out(o, "\"");
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			out(o, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			out(o, "\\x%02x", *p);
		else
			out(o, "%c", *p);
	}
	out(o, "\"");
}

static uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

/* ---- speed ---- */

struct ep_census {
	bool bulk64, bulk512, bulk1024, iso, bulk;
	bool all_int_small;	/* every endpoint interrupt, <= 8 bytes */
	size_t n;
};

static void census_config(const struct imp_blob *c, struct ep_census *ec)
{
	size_t pos = 0;

	while (pos + 2 <= c->len && c->data[pos] >= 2 &&
	       c->data[pos] <= c->len - pos) {
		const uint8_t *p = c->data + pos;

		if (p[1] == DT_ENDPOINT && p[0] >= 7) {
			unsigned int t = p[3] & 3, mps = le16(p + 4) & 0x7ff;

			ec->n++;
			if (t == 2) {
				ec->bulk = true;
				ec->bulk64 |= mps == 64;
				ec->bulk512 |= mps == 512;
				ec->bulk1024 |= mps == 1024;
			}
			if (t == 1)
				ec->iso = true;
			if (t != 3 || mps > 8)
				ec->all_int_small = false;
		}
		pos += p[0];
	}
}

static const char *const speed_names[] = {
	[USBIP_SPEED_LOW] = "low", [USBIP_SPEED_FULL] = "full",
	[USBIP_SPEED_HIGH] = "high", [USBIP_SPEED_SUPER] = "super",
};

static enum usbip_speed guess_speed(const struct imp_dev *d, char *why,
				    size_t whylen)
{
	const uint8_t *dd = d->device.data;
	uint16_t bcd = le16(dd + 2);
	struct ep_census ec = { .all_int_small = true };
	size_t i;

	for (i = 0; i < d->n_configs; i++)
		census_config(&d->configs[i], &ec);
	if ((bcd >= 0x0300 && dd[7] == 9) || ec.bulk1024) {
		snprintf(why, whylen, "bcdUSB %x.%02x with bMaxPacketSize0 %u%s",
			 bcd >> 8, bcd & 0xff, dd[7],
			 ec.bulk1024 ? " and 1024-byte bulk endpoints" : "");
		return USBIP_SPEED_SUPER;
	}
	if (ec.bulk512) {
		snprintf(why, whylen, "512-byte bulk endpoints");
		return USBIP_SPEED_HIGH;
	}
	if (bcd >= 0x0200 && !ec.bulk64 && dd[7] == 64) {
		snprintf(why, whylen, "bcdUSB %x.%02x, bMaxPacketSize0 64 and no full-speed bulk endpoint",
			 bcd >> 8, bcd & 0xff);
		return USBIP_SPEED_HIGH;
	}
	if (dd[7] == 8 && bcd < 0x0200 && ec.all_int_small && !ec.bulk &&
	    !ec.iso) {
		snprintf(why, whylen, "bMaxPacketSize0 8 and only small interrupt endpoints, as a low-speed device has");
		return USBIP_SPEED_LOW;
	}
	snprintf(why, whylen, "bcdUSB %x.%02x, bMaxPacketSize0 %u%s",
		 bcd >> 8, bcd & 0xff, dd[7],
		 ec.bulk64 ? ", 64-byte bulk endpoints" : "");
	return USBIP_SPEED_FULL;
}

/* ---- configurations ---- */

struct cfg_state {
	struct out *o;
	const struct imp_dev *d;
	enum usbip_speed speed;
	bool in_alt;		/* an interface block is open */
	bool in_ep;		/* an endpoint block is open */
	bool ep_comp;		/* the open endpoint has its companion */
	bool ep_extra;		/* ... and raw after it already */
	bool alt_dead;		/* the last interface was demoted to raw */
	int alt_neps;		/* structured endpoints of the open interface */
	int alt_neps_said;	/* its bNumEndpoints */
	uint8_t alt_eps[GD_MAX_ENDPOINTS];
	const uint8_t *alt_desc;	/* the open interface descriptor */
	uint8_t seen_if[32];	/* bitmap of interface numbers */
	uint16_t seen_alt[GD_MAX_ALTS];	/* (number << 8 | alt) */
	size_t n_alts;
	size_t n_iads;
	unsigned int n_if;	/* distinct interface numbers */
	int demoted;		/* descriptors written as raw by demotion */
};

static int depth_now(const struct cfg_state *s)
{
	return 2 + s->in_alt + s->in_ep;
}

static void close_ep(struct cfg_state *s)
{
	if (!s->in_ep)
		return;
	if (!s->ep_comp && s->speed == USBIP_SPEED_SUPER)
		out(s->o, "%*scompanion off\n", 16, "");
	s->in_ep = false;
	out(s->o, "%*s}\n", 12, "");
}

static void close_alt(struct cfg_state *s)
{
	close_ep(s);
	if (!s->in_alt)
		return;
	if (s->alt_neps != s->alt_neps_said)
		out(s->o, "%*sbNumEndpoints %d\t# the dump says %d, %d follow\n",
		    12, "", s->alt_neps_said, s->alt_neps_said, s->alt_neps);
	s->in_alt = false;
	out(s->o, "%*s}\n", 8, "");
}

static void raw_here(struct cfg_state *s, const uint8_t *p, size_t n,
		     const char *why)
{
	if (s->in_ep)
		s->ep_extra = true;
	out_bytes(s->o, depth_now(s), "raw", p, n, why);
}

/* What a raw descriptor is, for the comment beside it: the class of the
 * interface it follows tells what its subtype means. */
struct subtype_name {
	uint8_t cls, sub;	/* interface class and subclass (0xff: any) */
	uint8_t type, subtype;
	const char *name;
};

static const struct subtype_name subtype_names[] = {
	/* CDC 1.2 table 13 */
	{ 0x02, 0xff, 0x24, 0x00, "CDC header" },
	{ 0x02, 0xff, 0x24, 0x01, "CDC call management" },
	{ 0x02, 0xff, 0x24, 0x02, "CDC ACM" },
	{ 0x02, 0xff, 0x24, 0x06, "CDC union" },
	{ 0x02, 0xff, 0x24, 0x0f, "CDC Ethernet networking" },
	{ 0x02, 0xff, 0x24, 0x1a, "CDC NCM" },
	{ 0x02, 0xff, 0x24, 0x1b, "CDC MBIM" },
	/* audio 1.0 / 2.0: control (subclass 1) and streaming (2) */
	{ 0x01, 0x01, 0x24, 0x01, "audio control header" },
	{ 0x01, 0x01, 0x24, 0x02, "audio input terminal" },
	{ 0x01, 0x01, 0x24, 0x03, "audio output terminal" },
	{ 0x01, 0x01, 0x24, 0x04, "audio mixer unit" },
	{ 0x01, 0x01, 0x24, 0x05, "audio selector unit" },
	{ 0x01, 0x01, 0x24, 0x06, "audio feature unit" },
	{ 0x01, 0x01, 0x24, 0x0a, "audio clock source" },
	{ 0x01, 0x02, 0x24, 0x01, "audio streaming general" },
	{ 0x01, 0x02, 0x24, 0x02, "audio format type" },
	{ 0x01, 0xff, 0x25, 0x01, "audio isochronous endpoint" },
	{ 0x01, 0x03, 0x24, 0x01, "MIDI streaming header" },
	{ 0x01, 0x03, 0x24, 0x02, "MIDI IN jack" },
	{ 0x01, 0x03, 0x24, 0x03, "MIDI OUT jack" },
	{ 0x01, 0x03, 0x25, 0x01, "MIDI endpoint" },
	/* UVC 1.5: control (subclass 1) and streaming (2) */
	{ 0x0e, 0x01, 0x24, 0x01, "video control header" },
	{ 0x0e, 0x01, 0x24, 0x02, "video input terminal" },
	{ 0x0e, 0x01, 0x24, 0x03, "video output terminal" },
	{ 0x0e, 0x01, 0x24, 0x04, "video selector unit" },
	{ 0x0e, 0x01, 0x24, 0x05, "video processing unit" },
	{ 0x0e, 0x01, 0x24, 0x06, "video extension unit" },
	{ 0x0e, 0x01, 0x25, 0x03, "video interrupt endpoint" },
	{ 0x0e, 0x02, 0x24, 0x01, "video streaming input header" },
	{ 0x0e, 0x02, 0x24, 0x03, "video still image frame" },
	{ 0x0e, 0x02, 0x24, 0x04, "video format: uncompressed" },
	{ 0x0e, 0x02, 0x24, 0x05, "video frame: uncompressed" },
	{ 0x0e, 0x02, 0x24, 0x06, "video format: MJPEG" },
	{ 0x0e, 0x02, 0x24, 0x07, "video frame: MJPEG" },
	{ 0x0e, 0x02, 0x24, 0x0d, "video color matching" },
};

static const char *class_desc_name(const uint8_t *alt, const uint8_t *p)
{
	size_t i;

	if (alt && p[0] >= 3)
		for (i = 0; i < sizeof(subtype_names) / sizeof(subtype_names[0]); i++) {
			const struct subtype_name *n = &subtype_names[i];

			if (n->cls == alt[5] &&
			    (n->sub == 0xff || n->sub == alt[6]) &&
			    n->type == p[1] && n->subtype == p[2])
				return n->name;
		}
	switch (p[1]) {
	case 0x21:
		if (alt && alt[5] == 0x03)
			return "HID";
		if (alt && alt[5] == 0x0b)
			return "CCID";
		if (alt && alt[5] == 0xfe && alt[6] == 0x01)
			return "DFU functional";
		return "class-specific (0x21)";
	case 0x24: return "class-specific interface";
	case 0x25: return "class-specific endpoint";
	case DT_SS_EP_COMP: return "SuperSpeed endpoint companion";
	case 0x31: return "SuperSpeedPlus isochronous endpoint companion";
	case 0x0b: return "interface association";
	case 0x09: return "OTG";
	case 0x0a: return "debug";
	default: return "";
	}
}

static bool interface_ok(struct cfg_state *s, const uint8_t *p, char *why,
			 size_t whylen)
{
	uint16_t key;
	size_t i;

	/* p[0] bytes are there, at least 2: nothing past them is read */
	if (p[0] < 9) {
		snprintf(why, whylen, "interface descriptor of %u bytes", p[0]);
		return false;
	}
	key = p[2] << 8 | p[3];
	for (i = 0; i < s->n_alts; i++)
		if (s->seen_alt[i] == key) {
			snprintf(why, whylen, "interface %u alternate setting %u given twice",
				 p[2], p[3]);
			return false;
		}
	if (s->n_alts >= GD_MAX_ALTS ||
	    ((p[2] >= 32 || !(s->seen_if[p[2] / 8] & (1 << (p[2] % 8)))) &&
	     s->n_if >= GD_MAX_INTERFACES)) {
		snprintf(why, whylen, "more interfaces than a script holds");
		return false;
	}
	return true;
}

static bool endpoint_ok(struct cfg_state *s, const uint8_t *p, char *why,
			size_t whylen)
{
	unsigned int t;
	int i;

	if (!s->in_alt) {
		snprintf(why, whylen, "endpoint outside an interface");
		return false;
	}
	/* as for an interface: only p[0] bytes are there */
	if (p[0] < 7 || (p[0] == 9 && (p[7] || p[8]))) {
		/* the generator writes bRefresh/bSynchAddress as 0 */
		snprintf(why, whylen, "endpoint descriptor of %u bytes%s", p[0],
			 p[0] == 9 ? " with bRefresh/bSynchAddress set" : "");
		return false;
	}
	t = p[3] & 3;
	if (!(p[2] & 0x0f) || (p[2] & 0x70)) {
		snprintf(why, whylen, "bEndpointAddress 0x%02x", p[2]);
		return false;
	}
	for (i = 0; i < s->alt_neps; i++)
		if (s->alt_eps[i] == p[2]) {
			snprintf(why, whylen, "endpoint 0x%02x twice in one interface",
				 p[2]);
			return false;
		}
	if (s->alt_neps >= GD_MAX_ENDPOINTS) {
		snprintf(why, whylen, "more than %d endpoints", GD_MAX_ENDPOINTS);
		return false;
	}
	if (s->speed == USBIP_SPEED_LOW && (t == 1 || t == 2)) {
		snprintf(why, whylen, "a %s endpoint on a low-speed device",
			 t == 1 ? "isochronous" : "bulk");
		return false;
	}
	return true;
}

static const char *const ep_types[] = { "control", "iso", "bulk", "interrupt" };

static void emit_endpoint(struct cfg_state *s, const uint8_t *p,
			  const struct imp_dev *d)
{
	struct out *o = s->o;
	size_t i, j;

	close_ep(s);
	s->in_ep = true;
	s->ep_comp = false;
	s->ep_extra = false;
	s->alt_eps[s->alt_neps++] = p[2];
	out(o, "%*sendpoint {\n", 12, "");
	out(o, "%*sbEndpointAddress 0x%02x\n", 16, "", p[2]);
	if (p[3] & ~3u)
		out(o, "%*sbmAttributes 0x%02x\t# %s\n", 16, "", p[3],
		    ep_types[p[3] & 3]);
	else
		out(o, "%*stype %s\n", 16, "", ep_types[p[3] & 3]);
	out(o, "%*swMaxPacketSize 0x%04x\n", 16, "", le16(p + 4));
	out(o, "%*sbInterval %u\n", 16, "", p[6]);
	if (p[0] != 7)
		out(o, "%*sbLength %u\n", 16, "", p[0]);
	if (p[0] > 9 || p[0] == 8)
		raw_here(s, p + 7, p[0] - 7, "the rest of the endpoint descriptor");

	/* recorded IN data: a sequence, one packet per URB (bulk and
	 * interrupt only; the first interface descriptor with the address) */
	if (!(p[2] & 0x80) || ((p[3] & 3) != 2 && (p[3] & 3) != 3))
		return;
	for (i = 0; i < d->n_seqs; i++) {
		const struct imp_seq *q = &d->seqs[i];

		if (q->ep != p[2] || !q->n_packets)
			continue;
		out(o, "%*ssequence {\t# IN data as recorded, then NAK\n", 16, "");
		for (j = 0; j < q->n_packets; j++) {
			size_t n = q->packets[j].len;

			if (n > GD_MAX_BLOB)
				n = GD_MAX_BLOB;
			if (!n)
				out(o, "%*spacket\t# zero-length\n", 20, "");
			else
				out_bytes(o, 5, "packet", q->packets[j].data,
					  n, n < q->packets[j].len ?
					  "cut to 4096 bytes" : NULL);
		}
		out(o, "%*s}\n", 16, "");
		break;
	}
}

static void emit_companion(struct cfg_state *s, const uint8_t *p)
{
	struct out *o = s->o;

	s->ep_comp = true;
	out(o, "%*scompanion {\n", 16, "");
	out(o, "%*sbMaxBurst %u\n", 20, "", p[2]);
	out(o, "%*sbmAttributes 0x%02x\n", 20, "", p[3]);
	out(o, "%*swBytesPerInterval %u\n", 20, "", le16(p + 4));
	if (p[0] != 6)
		out(o, "%*sbLength %u\n", 20, "", p[0]);
	out(o, "%*s}\n", 16, "");
	if (p[0] > 6)
		raw_here(s, p + 6, p[0] - 6, "the rest of the companion");
}

static void emit_interface(struct cfg_state *s, const uint8_t *p)
{
	struct out *o = s->o;

	close_alt(s);
	s->in_alt = true;
	s->alt_desc = p;
	s->alt_dead = false;
	s->alt_neps = 0;
	s->alt_neps_said = p[4];
	s->seen_alt[s->n_alts++] = p[2] << 8 | p[3];
	if (p[2] >= 32 || !(s->seen_if[p[2] / 8] & (1 << (p[2] % 8)))) {
		s->n_if++;
		if (p[2] < 32)
			s->seen_if[p[2] / 8] |= 1 << (p[2] % 8);
	}
	out(o, "%*sinterface {\n", 8, "");
	out(o, "%*sbInterfaceNumber %u\n", 12, "", p[2]);
	out(o, "%*sbAlternateSetting %u\n", 12, "", p[3]);
	out(o, "%*sbInterfaceClass 0x%02x\n", 12, "", p[5]);
	out(o, "%*sbInterfaceSubClass 0x%02x\n", 12, "", p[6]);
	out(o, "%*sbInterfaceProtocol 0x%02x\n", 12, "", p[7]);
	if (p[8])
		out(o, "%*siInterface %u\n", 12, "", p[8]);
	if (p[0] != 9) {
		out(o, "%*sbLength %u\n", 12, "", p[0]);
		raw_here(s, p + 9, p[0] - 9, "the rest of the interface descriptor");
	}
}

/* An IAD is structural when the generator would put it where it is: right
 * before the first descriptor of interface bFirstInterface, which follows
 * (after other such IADs) and is itself structural. */
static bool iad_ok(struct cfg_state *s, const uint8_t *buf, size_t len,
		   size_t pos)
{
	const uint8_t *p = buf + pos;
	char why[128];
	size_t q = pos;

	if (p[0] != 8 || s->n_iads >= GD_MAX_IADS)
		return false;
	while (q + 2 <= len && buf[q] >= 2 && buf[q] <= len - q &&
	       buf[q + 1] == DT_IAD)
		q += buf[q];
	if (q + 2 > len || buf[q] < 2 || buf[q] > len - q ||
	    buf[q + 1] != DT_INTERFACE || buf[q] < 9 ||
	    buf[q + 2] != p[2])
		return false;
	if (p[2] < 32 && (s->seen_if[p[2] / 8] & (1 << (p[2] % 8))))
		return false;
	return interface_ok(s, buf + q, why, sizeof(why));
}

static void emit_iad(struct cfg_state *s, const uint8_t *p)
{
	struct out *o = s->o;

	close_alt(s);
	s->n_iads++;
	out(o, "%*siad {\n", 8, "");
	out(o, "%*sbFirstInterface %u\n", 12, "", p[2]);
	out(o, "%*sbInterfaceCount %u\n", 12, "", p[3]);
	out(o, "%*sbFunctionClass 0x%02x\n", 12, "", p[4]);
	out(o, "%*sbFunctionSubClass 0x%02x\n", 12, "", p[5]);
	out(o, "%*sbFunctionProtocol 0x%02x\n", 12, "", p[6]);
	if (p[7])
		out(o, "%*siFunction %u\n", 12, "", p[7]);
	out(o, "%*s}\n", 8, "");
}

static void config_header(struct out *o, const uint8_t *h, size_t len)
{
	out(o, "        bConfigurationValue %u\n", h[5]);
	if (h[6])
		out(o, "        iConfiguration %u\n", h[6]);
	out(o, "        bmAttributes 0x%02x\n", h[7]);
	out(o, "        bMaxPower %u\n", h[8]);
	if (h[0] != 9)
		out(o, "        bLength %u\n", h[0]);
	if (le16(h + 2) != len)
		out(o, "        wTotalLength %u\t# the dump holds %zu bytes\n",
		    le16(h + 2), len);
}

/* the whole configuration after its header as raw bytes: always exact */
static void emit_config_raw(struct out *o, const struct imp_blob *c,
			    const char *why)
{
	const uint8_t *h = c->data;

	out(o, "    config {\t# served as raw bytes: %s\n", why);
	config_header(o, h, c->len);
	out(o, "        bNumInterfaces %u\n", h[4]);
	if (c->len > 9)
		out_bytes(o, 2, "raw", h + 9, c->len - 9, NULL);
	out(o, "    }\n");
}

static void emit_config(struct out *o, const struct imp_dev *d,
			const struct imp_blob *c, enum usbip_speed speed)
{
	struct cfg_state s = { .o = o, .d = d, .speed = speed };
	const uint8_t *buf = c->data;
	size_t len = c->len, pos;
	char why[160];

	out(o, "    config {\n");
	config_header(o, buf, len);
	/* bLength may claim more than the dump holds */
	pos = buf[0] < len ? buf[0] : len;
	if (pos > 9)
		out_bytes(o, 2, "raw", buf + 9, pos - 9,
			  "the rest of the configuration descriptor");
	while (pos < len) {
		const uint8_t *p = buf + pos;

		if (len - pos < 2 || p[0] < 2 || p[0] > len - pos) {
			close_ep(&s);
			raw_here(&s, p, len - pos,
				 "bytes that are no whole descriptor");
			break;
		}
		why[0] = 0;
		if (p[1] == DT_INTERFACE && interface_ok(&s, p, why, sizeof(why))) {
			emit_interface(&s, p);
		} else if (p[1] == DT_INTERFACE) {
			s.alt_dead = true;
			s.demoted++;
			raw_here(&s, p, p[0], why);
		} else if (p[1] == DT_ENDPOINT && !s.alt_dead &&
			   endpoint_ok(&s, p, why, sizeof(why))) {
			emit_endpoint(&s, p, d);
		} else if (p[1] == DT_SS_EP_COMP && s.in_ep && !s.ep_comp &&
			   !s.ep_extra && p[0] >= 6) {
			/* right after its endpoint: nothing raw came between */
			emit_companion(&s, p);
		} else if (p[1] == DT_IAD && iad_ok(&s, buf, len, pos)) {
			emit_iad(&s, p);
		} else {
			if (why[0])
				s.demoted++;
			raw_here(&s, p, p[0],
				 why[0] ? why : class_desc_name(s.alt_desc, p));
		}
		pos += p[0];
	}
	close_alt(&s);
	/* bNumInterfaces is overridden only when the interfaces written as
	 * structure count otherwise */
	if (buf[4] != s.n_if)
		out(o, "        bNumInterfaces %u\t# %u written as structure\n",
		    buf[4], s.n_if);
	out(o, "    }\n");
}

/* ---- the device ---- */

static bool is_standard_handled(const uint8_t *setup)
{
	uint8_t type = setup[0], req = setup[1];

	if ((type & 0x60) != 0)		/* class or vendor: a rule */
		return false;
	/* standard GET_DESCRIPTOR to an interface or endpoint (HID report,
	 * HID, physical): the device answers it, not stdreq.c */
	if (req == 6 && (type & 0x1f) != 0)
		return false;
	return true;
}

static bool same_answer(const struct imp_ctrl *a, const struct imp_ctrl *b)
{
	return a->stall == b->stall && a->data.len == b->data.len &&
	       (!a->data.len || !memcmp(a->data.data, b->data.data, a->data.len));
}

/* times 0: the last run of answers (after `later` ones, if any) */
static void emit_rule(struct out *o, const struct imp_ctrl *c, size_t times,
		      bool later)
{
	const uint8_t *s = c->setup;

	if (times)
		out(o, "    control {\t# %s (%zu time%s)\n", c->where, times,
		    times > 1 ? "s" : "");
	else if (later)
		out(o, "    control {\t# %s (from then on)\n", c->where);
	else
		out(o, "    control {\t# %s\n", c->where);
	out(o, "        bmRequestType 0x%02x; bRequest 0x%02x; wValue 0x%04x; wIndex 0x%04x\n",
	    s[0], s[1], le16(s + 2), le16(s + 4));
	if (c->stall)
		out(o, "        stall\n");
	else if ((s[0] & 0x80) && c->data.len)
		out_bytes(o, 2, "reply", c->data.data,
			  c->data.len > GD_MAX_BLOB ? GD_MAX_BLOB : c->data.len,
			  NULL);
	else
		out(o, "        ack\n");
	if (times)
		out(o, "        times %zu\n", times);
	out(o, "    }\n");
}

/*
 * A driver on another kernel writes registers the capture never shows (a
 * divisor for another baud rate, a register its version sets and the
 * capturing one did not).  When the device took every vendor or class
 * OUT request of the capture without a STALL, the nearest guess for one
 * it was not seen to get is that it takes it too: one catch-all `ack`
 * rule per such bmRequestType, after every recorded rule.  IN requests
 * get none (no data can be made up); they STALL as before.
 */
static void emit_out_catchall(struct out *o, const struct imp_dev *d)
{
	uint8_t types[8];
	size_t n = 0, i, k;

	for (i = 0; i < d->n_ctrls; i++) {
		const uint8_t *s = d->ctrls[i].setup;

		if ((s[0] & 0x80) || !(s[0] & 0x60) || (s[0] & 0x60) == 0x60)
			continue;
		if (d->ctrls[i].stall)
			return;		/* the device refuses some: no guess */
		for (k = 0; k < n && types[k] != s[0]; k++)
			;
		if (k == n && n < sizeof(types))
			types[n++] = s[0];
	}
	for (k = 0; k < n; k++) {
		out(o, "    control {\t# guess: the device took every %s OUT request of the dump, so it takes the others too\n",
		    (types[k] & 0x60) == 0x40 ? "vendor" : "class");
		out(o, "        bmRequestType 0x%02x\n        ack\n    }\n",
		    types[k]);
	}
}

/*
 * Recorded transfers as rules, in capture order of each request's first
 * appearance.  A request the device answered differently over time (a
 * status register polled until a bit comes up) becomes one rule per run
 * of equal answers, each but the last with `times` its run's length, so
 * the replay answers in the order the device did and then keeps its last
 * answer.  Requests differ by bmRequestType, bRequest, wValue and wIndex
 * (what a rule matches on); wLength does not count.
 */
static void emit_rules(struct out *o, const struct imp_dev *d)
{
	size_t i, j, k;

	for (i = 0; i < d->n_ctrls; i++) {
		const struct imp_ctrl *c = &d->ctrls[i];
		bool seen = false, later = false;

		if (is_standard_handled(c->setup))
			continue;
		for (j = 0; j < i && !seen; j++)
			seen = !memcmp(d->ctrls[j].setup, c->setup, 6);
		if (seen)
			continue;
		for (j = i; j < d->n_ctrls; ) {
			const struct imp_ctrl *first = &d->ctrls[j];
			size_t n = 0, next = d->n_ctrls;

			/* the run of equal answers starting at j */
			for (k = j; k < d->n_ctrls; k++) {
				if (memcmp(d->ctrls[k].setup, c->setup, 6))
					continue;
				if (!same_answer(&d->ctrls[k], first)) {
					next = k;
					break;
				}
				n++;
			}
			emit_rule(o, first, next < d->n_ctrls ? n : 0, later);
			later = true;
			j = next;
		}
	}
	emit_out_catchall(o, d);
}

static bool valid_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t units = 0;

	while (*p) {
		unsigned int c = *p, n = 0, k;

		if (c < 0x80)
			n = 0;
		else if ((c & 0xe0) == 0xc0)
			n = 1;
		else if ((c & 0xf0) == 0xe0)
			n = 2;
		else if ((c & 0xf8) == 0xf0)
			n = 3;
		else
			return false;
		for (k = 1; k <= n; k++)
			if ((p[k] & 0xc0) != 0x80)
				return false;
		units += n == 3 ? 2 : 1;
		p += n + 1;
	}
	return units <= 126;
}

/* A string descriptor from a capture, as text when the generator would
 * give back exactly these bytes: type 3, bLength even and whole, UTF-16LE
 * with no NUL and no lone surrogate.  Returns malloc'd UTF-8 or NULL. */
static char *string_text(const struct imp_blob *b)
{
	size_t i, n;
	char *t, *q;

	if (b->len < 2 || b->data[0] != b->len || b->data[1] != DT_STRING ||
	    b->len % 2)
		return NULL;
	n = (b->len - 2) / 2;
	t = malloc(n * 3 + 1);
	if (!t)
		return NULL;
	q = t;
	for (i = 0; i < n; i++) {
		unsigned int u = le16(b->data + 2 + 2 * i), lo;

		if (!u)
			goto bad;
		if (u >= 0xd800 && u < 0xdc00) {
			if (i + 1 >= n)
				goto bad;
			lo = le16(b->data + 4 + 2 * i);
			if (lo < 0xdc00 || lo >= 0xe000)
				goto bad;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			i++;
		} else if (u >= 0xdc00 && u < 0xe000) {
			goto bad;
		}
		if (u < 0x80) {
			*q++ = u;
		} else if (u < 0x800) {
			*q++ = 0xc0 | u >> 6;
			*q++ = 0x80 | (u & 0x3f);
		} else if (u < 0x10000) {
			*q++ = 0xe0 | u >> 12;
			*q++ = 0x80 | ((u >> 6) & 0x3f);
			*q++ = 0x80 | (u & 0x3f);
		} else {
			*q++ = 0xf0 | u >> 18;
			*q++ = 0x80 | ((u >> 12) & 0x3f);
			*q++ = 0x80 | ((u >> 6) & 0x3f);
			*q++ = 0x80 | (u & 0x3f);
		}
	}
	*q = 0;
	return t;
bad:
	free(t);
	return NULL;
}

static void emit_strings(struct out *o, const struct imp_dev *d)
{
	size_t i;

	if (d->n_langids) {
		out(o, "    langids");
		for (i = 0; i < d->n_langids; i++)
			out(o, " 0x%04x", d->langids[i]);
		out(o, "\n");
	}
	for (i = 1; i < 256; i++) {
		char *t = d->string_raw[i].len ?
			  string_text(&d->string_raw[i]) : NULL;

		if (t && valid_text(t)) {
			out(o, "    string %zu ", i);
			out_quoted(o, t);
			out(o, "\n");
		} else if (d->string_raw[i].len) {
			char label[16];

			snprintf(label, sizeof(label), "string %zu raw", i);
			out_bytes(o, 1, label, d->string_raw[i].data,
				  d->string_raw[i].len, NULL);
		} else if (d->strings[i] && valid_text(d->strings[i])) {
			out(o, "    string %zu ", i);
			out_quoted(o, d->strings[i]);
			out(o, "\n");
		}
		free(t);
	}
}

static const char *speed_word(enum usbip_speed s)
{
	return s < sizeof(speed_names) / sizeof(speed_names[0]) &&
	       speed_names[s] ? speed_names[s] : "full";
}

struct plan {
	enum usbip_speed speed;
	const char *speed_why;		/* NULL: from the dump */
	bool raw[GD_MAX_CONFIGS];	/* write configuration i as raw */
	bool qual_rule;			/* serve the dump's qualifier by a rule */
	char raw_why[GD_MAX_CONFIGS][600];
};

static int write_script(const struct imp_set *set, const struct imp_dev *d,
			const struct imp_emit_opts *opts,
			const struct plan *pl, struct out *o,
			int cfg_lines[GD_MAX_CONFIGS][2])
{
	const uint8_t *dd = d->device.data;
	uint16_t bcd = le16(dd + 2);
	bool lsusb = set->format && !strcmp(set->format, "lsusb");
	size_t i;

	out(o, "# Imported by usbrig-import from %s (%s), device at %s.\n",
	    set->path ? set->path : "?", set->format ? set->format : "?",
	    d->where);
	out(o, "# Review before use: every field below is as the dump gave it, unless\n"
	       "# a note says otherwise.\n");
	if (d->driver_known) {
		out(o, "# Reported outcome (the dump's own words):");
		for (i = 0; i < GD_MAX_INTERFACES; i++)
			if (d->driver[i])
				out(o, " interface %zu: %s;", i, d->driver[i]);
		out(o, "\n");
	}
	if (pl->speed_why)
		out(o, "# guess: speed %s, because %s (the dump does not say)\n",
		    speed_word(pl->speed), pl->speed_why);
	for (i = 0; i < d->n_notes; i++)
		out(o, "# note: %s\n", d->notes[i]);
	out(o, "\ndevice {\n");
	if (opts && opts->name) {
		out(o, "    name ");
		out_quoted(o, opts->name);
		out(o, "\n");
	} else {
		out(o, "    name \"import-%04x-%04x\"\n", le16(dd + 8),
		    le16(dd + 10));
	}
	out(o, "    speed %s\n", speed_word(pl->speed));
	out(o, "    bcdUSB 0x%04x\n", bcd);
	out(o, "    bDeviceClass 0x%02x\n", dd[4]);
	out(o, "    bDeviceSubClass 0x%02x\n", dd[5]);
	out(o, "    bDeviceProtocol 0x%02x\n", dd[6]);
	out(o, "    bMaxPacketSize0 %u\n", dd[7]);
	out(o, "    idVendor 0x%04x\n", le16(dd + 8));
	out(o, "    idProduct 0x%04x\n", le16(dd + 10));
	out(o, "    bcdDevice 0x%04x\n", le16(dd + 12));
	if (dd[14])
		out(o, "    iManufacturer %u\n", dd[14]);
	if (dd[15])
		out(o, "    iProduct %u\n", dd[15]);
	if (dd[16])
		out(o, "    iSerialNumber %u\n", dd[16]);
	if (dd[17] != d->n_configs)
		out(o, "    bNumConfigurations %u\t# the dump has %zu\n", dd[17],
		    d->n_configs);
	if (dd[0] != 18)
		out(o, "    bLength %u\n", dd[0]);
	emit_strings(o, d);

	if (pl->speed == USBIP_SPEED_HIGH)
		out(o, "    qualifier %s\n",
		    d->qualifier.len || !lsusb ? "on" : "off");

	if (d->bos.len >= 5) {
		out(o, "    bos {\n        generated off\n");
		if (d->bos.len > 5)
			out_bytes(o, 2, "raw", d->bos.data + 5,
				  d->bos.len - 5, NULL);
		if (le16(d->bos.data + 2) != d->bos.len)
			out(o, "        wTotalLength %u\n", le16(d->bos.data + 2));
		out(o, "        bNumDeviceCaps %u\n", d->bos.data[4]);
		if (d->bos.data[0] != 5)
			out(o, "        bLength %u\n", d->bos.data[0]);
		if (d->bos.data[1] != DT_BOS)
			out(o, "        bDescriptorType 0x%02x\t# not BOS (0x0f)\n",
			    d->bos.data[1]);
		out(o, "    }\n");
	} else if (bcd >= 0x0201) {
		out(o, "    bos %s\n", lsusb ? "off" : "on");
	}

	for (i = 0; i < d->n_configs; i++) {
		cfg_lines[i][0] = o->line + 1;
		if (pl->raw[i])
			emit_config_raw(o, &d->configs[i], pl->raw_why[i]);
		else
			emit_config(o, d, &d->configs[i], pl->speed);
		cfg_lines[i][1] = o->line;
	}
	/* The generated DEVICE_QUALIFIER repeats the device descriptor's
	 * fields; a device whose own says otherwise gets it by a rule (an
	 * explicit bmRequestType matches standard requests too). */
	if (pl->qual_rule) {
		out(o, "    control {\t# the device qualifier as the dump shows it\n");
		out(o, "        bmRequestType 0x80; bRequest 0x06; wValue 0x0600; wIndex 0x0000\n");
		out_bytes(o, 2, "reply", d->qualifier.data, d->qualifier.len,
			  NULL);
		out(o, "    }\n");
	}
	emit_rules(o, d);
	out(o, "}\n");
	return o->oom ? -ENOMEM : 0;
}

/* compare what the script serves with the dump; -EINVAL and err on the
 * first difference, *bad_cfg set when it is in a configuration */
static int compare(const struct imp_dev *d, const struct gd_device *dev,
		   const struct plan *pl, int *bad_cfg, struct imp_error *err)
{
	static uint8_t buf[GD_DESC_MAX + 1];
	size_t i, k;
	int n;

	*bad_cfg = -1;
	n = desc_device(dev, buf, sizeof(buf));
	if (n != 18 || memcmp(buf, d->device.data, 18))
		return imp_err(err, "the device descriptor differs");
	for (i = 0; i < d->n_configs; i++) {
		const struct imp_blob *c = &d->configs[i];

		n = desc_config(dev, i, DT_CONFIG, buf, sizeof(buf));
		if (n < 0 || (size_t)n != c->len || memcmp(buf, c->data, n)) {
			for (k = 0; n >= 0 && k < (size_t)n && k < c->len &&
			     buf[k] == c->data[k]; k++)
				;
			*bad_cfg = i;
			return imp_err(err, "configuration %zu differs at byte %zu (%d bytes generated, %zu in the dump)",
				       i + 1, k, n, c->len);
		}
	}
	if (d->bos.len >= 5) {
		n = desc_bos(dev, buf, sizeof(buf));
		if (n < 0 || (size_t)n != d->bos.len ||
		    memcmp(buf, d->bos.data, n))
			return imp_err(err, "the BOS descriptor differs");
	}
	if (d->qualifier.len && !pl->qual_rule) {
		n = desc_qualifier(dev, buf, sizeof(buf));
		if (n < 0 || (size_t)n != d->qualifier.len ||
		    memcmp(buf, d->qualifier.data, n))
			return -EAGAIN;
	}
	return 0;
}

static int check_input(const struct imp_set *set, const struct imp_dev *d,
		       struct imp_error *err)
{
	size_t i;

	if (d->device.len < 18 || d->device.data[1] != DT_DEVICE)
		return imp_err(err, "%s: no complete device descriptor for this device (%zu bytes)",
			       d->where, d->device.len);
	if (!d->n_configs)
		return imp_err(err, "%s: no configuration descriptor for this device",
			       d->where);
	for (i = 0; i < d->n_configs; i++) {
		const struct imp_blob *c = &d->configs[i];
		size_t j;

		if (c->len < 9 || c->data[1] != DT_CONFIG || c->data[0] < 9)
			return imp_err(err, "%s: configuration %zu is not a configuration descriptor (%zu bytes)",
				       d->where, i + 1, c->len);
		if (c->len > GD_DESC_MAX)
			return imp_err(err, "%s: configuration %zu has %zu bytes, more than 65535",
				       d->where, i + 1, c->len);
		if (!c->data[5])
			return imp_err(err, "%s: configuration %zu has bConfigurationValue 0, which no host can select",
				       d->where, i + 1);
		for (j = 0; j < i; j++)
			if (d->configs[j].data[5] == c->data[5])
				return imp_err(err, "%s: configurations %zu and %zu share bConfigurationValue %u",
					       d->where, j + 1, i + 1, c->data[5]);
	}
	(void)set;
	return 0;
}

/*
 * A reader that knows a descriptor set is cut short (usbmon text keeps 32
 * bytes per URB) sets d->truncated.  The nearest valid device is what is
 * left: the trailing partial descriptor dropped, and wTotalLength,
 * bNumInterfaces and each bNumEndpoints made to agree with what remains
 * (a device whose counts promise what is not there fails enumeration for
 * a reason the real one did not have).  Descriptors that were not cut are
 * never touched, however they disagree with themselves.
 */
/* Endpoints an interface declares that the cut took away: the nearest
 * valid guess is the missing half of a bulk pair (a bulk IN without an OUT
 * gets an OUT at the next number, and the other way round), else an
 * interrupt IN; the packet size is the bulk one the interface has, else
 * the speed's.  Appends at most `missing` 7-byte endpoints to c. */
static int guess_endpoints(struct imp_dev *d, struct imp_blob *c, size_t i,
			   size_t intf_at, unsigned int missing)
{
	bool bulk_in = false, bulk_out = false;
	unsigned int top = 0, mps = 64, k;
	size_t pos = intf_at + c->data[intf_at];

	for (; pos + 7 <= c->len && c->data[pos] >= 2; pos += c->data[pos]) {
		const uint8_t *p = c->data + pos;

		if (p[1] != DT_ENDPOINT || p[0] < 7)
			continue;	/* its fields would be the next one's */
		if ((p[3] & 3) == 2) {
			bulk_in |= p[2] & 0x80;
			bulk_out |= !(p[2] & 0x80);
			mps = le16(p + 4);
		}
		if ((p[2] & 0x0f) > top)
			top = p[2] & 0x0f;
	}
	for (k = 0; k < missing && top < 15; k++) {
		uint8_t ep[7] = { 7, DT_ENDPOINT, 0, 0, mps & 0xff, mps >> 8, 0 };
		const char *what;

		top++;
		if (bulk_in && !bulk_out) {
			ep[2] = top;
			ep[3] = 2;
			bulk_out = true;
			what = "bulk OUT, the pair of the bulk IN";
		} else if (bulk_out && !bulk_in) {
			ep[2] = 0x80 | top;
			ep[3] = 2;
			bulk_in = true;
			what = "bulk IN, the pair of the bulk OUT";
		} else {
			ep[2] = 0x80 | top;
			ep[3] = 3;
			ep[4] = 16;
			ep[5] = 0;
			ep[6] = 8;
			what = "interrupt IN, 16 bytes";
		}
		if (imp_blob_put(c, ep, sizeof(ep)))
			return -ENOMEM;
		imp_note(d, "configuration %zu: interface %u declares an endpoint the dump lost: guessed as 0x%02x, %s",
			 i + 1, c->data[intf_at + 2], ep[2], what);
	}
	return k;
}

static int repair_config(struct imp_dev *d, size_t i)
{
	struct imp_blob *c = &d->configs[i];
	uint8_t seen[32] = { 0 };
	size_t pos = c->data[0], keep, last_if = 0;
	unsigned int n_if = 0, neps = 0, said_eps = 0;
	uint16_t said = le16(c->data + 2);
	int added;

	if (said <= c->len)
		return 0;
	/* a bLength past the bytes held: not even the header is whole */
	if (pos > c->len)
		pos = c->len;
	keep = pos;
	while (pos + 2 <= c->len && c->data[pos] >= 2 &&
	       c->data[pos] <= c->len - pos) {
		const uint8_t *p = c->data + pos;

		if (p[1] == DT_INTERFACE && p[0] >= 9) {
			if (last_if)
				c->data[last_if + 4] = neps;
			last_if = pos;
			neps = 0;
			said_eps = p[4];
			if (p[2] >= 32 || !(seen[p[2] / 8] & (1 << (p[2] % 8)))) {
				n_if++;
				if (p[2] < 32)
					seen[p[2] / 8] |= 1 << (p[2] % 8);
			}
		} else if (p[1] == DT_ENDPOINT && last_if) {
			neps++;
		}
		pos += p[0];
		keep = pos;
	}
	imp_note(d, "configuration %zu: the dump holds %zu of its %u bytes: served as the %zu bytes of whole descriptors in it, with wTotalLength, bNumInterfaces and bNumEndpoints counting those",
		 i + 1, c->len, said, keep);
	c->len = keep;
	/* the cut interface: what it declares and lost, guessed */
	if (last_if && said_eps > neps) {
		added = guess_endpoints(d, c, i, last_if, said_eps - neps);
		if (added < 0)
			return added;
		neps += added;
	}
	if (last_if)
		c->data[last_if + 4] = neps;
	c->data[2] = c->len & 0xff;
	c->data[3] = c->len >> 8;
	c->data[4] = n_if;
	return 0;
}

/* a cut string descriptor: bLength made to say what is there (whole
 * UTF-16 units), so it is a valid, shorter string */
static void repair_string(struct imp_dev *d, unsigned int i)
{
	struct imp_blob *b = &d->string_raw[i];

	if (b->len < 2 || b->data[0] <= b->len)
		return;
	b->len &= ~(size_t)1;
	imp_note(d, "string %u: the dump holds %zu of its %u bytes: served as the %zu-byte string it has",
		 i, b->len, b->data[0], b->len);
	b->data[0] = b->len;
}

static void repair_bos(struct imp_dev *d)
{
	struct imp_blob *b = &d->bos;
	size_t pos = 5, n = 0;
	uint16_t said;

	if (b->len < 5)
		return;
	said = le16(b->data + 2);
	if (said <= b->len)
		return;
	while (pos + 2 <= b->len && b->data[pos] >= 2 &&
	       b->data[pos] <= b->len - pos) {
		pos += b->data[pos];
		n++;
	}
	b->len = pos;
	b->data[2] = pos & 0xff;
	b->data[3] = pos >> 8;
	b->data[4] = n;
	imp_note(d, "BOS: the dump holds %zu of its %u bytes: served as the %zu whole capabilities it has",
		 pos, said, n);
}

/* a copy of d whose cut descriptor sets are repaired; the copy owns its
 * config and BOS blobs and the notes it adds (free with repaired_free) */
static int repaired_copy(const struct imp_dev *d, struct imp_dev *r)
{
	size_t i;

	*r = *d;
	memset(r->configs, 0, sizeof(r->configs));
	memset(&r->bos, 0, sizeof(r->bos));
	memset(r->string_raw, 0, sizeof(r->string_raw));
	for (i = 0; i < 256; i++)
		if (imp_blob_put(&r->string_raw[i], d->string_raw[i].data,
				 d->string_raw[i].len))
			return -ENOMEM;
	for (i = 0; i < d->n_configs; i++)
		if (imp_blob_put(&r->configs[i], d->configs[i].data,
				 d->configs[i].len))
			return -ENOMEM;
	if (imp_blob_put(&r->bos, d->bos.data, d->bos.len))
		return -ENOMEM;
	if (!d->truncated)
		return 0;
	for (i = 0; i < r->n_configs; i++)
		if (r->configs[i].len >= 9 && repair_config(r, i))
			return -ENOMEM;
	repair_bos(r);
	for (i = 1; i < 256; i++)
		repair_string(r, i);
	return 0;
}

static void repaired_free(const struct imp_dev *d, struct imp_dev *r)
{
	size_t i;

	for (i = 0; i < GD_MAX_CONFIGS; i++)
		imp_blob_free(&r->configs[i]);
	for (i = 0; i < 256; i++)
		imp_blob_free(&r->string_raw[i]);
	imp_blob_free(&r->bos);
	for (i = d->n_notes; i < r->n_notes; i++)
		free(r->notes[i]);
}

static int emit_dev(const struct imp_set *set, const struct imp_dev *d,
		    const struct imp_emit_opts *opts, char **text,
		    struct imp_error *err);

int imp_emit(const struct imp_set *set, const struct imp_dev *d,
	     const struct imp_emit_opts *opts, char **text,
	     struct imp_error *err)
{
	struct imp_dev r;
	int ret;

	ret = check_input(set, d, err);
	if (ret)
		return ret;
	ret = repaired_copy(d, &r);
	if (!ret)
		ret = emit_dev(set, &r, opts, text, err);
	else
		ret = imp_err(err, "%s: out of memory", d->where);
	repaired_free(d, &r);
	return ret;
}

static int emit_dev(const struct imp_set *set, const struct imp_dev *d,
		    const struct imp_emit_opts *opts, char **text,
		    struct imp_error *err)
{
	int cfg_lines[GD_MAX_CONFIGS][2];
	struct plan pl = { 0 };
	char why[160];
	size_t round, i;
	int ret;

	pl.speed = d->speed;
	if (pl.speed == USBIP_SPEED_UNKNOWN || pl.speed == USBIP_SPEED_WIRELESS ||
	    pl.speed > USBIP_SPEED_SUPER) {
		pl.speed = guess_speed(d, why, sizeof(why));
		pl.speed_why = why;
	}

	/* each round either proves the script or writes one more
	 * configuration as raw bytes */
	for (round = 0; round <= d->n_configs + 1; round++) {
		struct out o = { 0 };
		struct script_error se;
		struct gd_device *dev = NULL;
		int bad = -1;

		ret = write_script(set, d, opts, &pl, &o, cfg_lines);
		if (ret) {
			free(o.buf);
			return imp_err(err, "%s: out of memory", d->where);
		}
		ret = script_parse("import", o.buf, o.len, &dev, &se);
		if (ret == -EINVAL) {
			for (i = 0; i < d->n_configs; i++)
				if (se.line >= cfg_lines[i][0] &&
				    se.line <= cfg_lines[i][1])
					bad = i;
			if (bad < 0 || pl.raw[bad]) {
				ret = imp_err(err, "%s: the script written for this device does not load (%s); please report this with the dump",
					      d->where, se.msg);
				free(o.buf);
				return ret;
			}
			snprintf(pl.raw_why[bad], sizeof(pl.raw_why[bad]),
				 "as structure it did not load: %s", se.msg);
			pl.raw[bad] = true;
			free(o.buf);
			continue;
		}
		if (ret) {
			free(o.buf);
			return imp_err(err, "%s: out of memory", d->where);
		}
		ret = compare(d, dev, &pl, &bad, err);
		gd_model_free(dev);
		if (!ret) {
			*text = o.buf;
			return 0;
		}
		free(o.buf);
		if (ret == -EAGAIN) {
			pl.qual_rule = true;
			continue;
		}
		if (bad < 0 || pl.raw[bad]) {
			char msg[sizeof(err->msg)];

			snprintf(msg, sizeof(msg), "%s", err->msg);
			return imp_err(err, "%s: the script written for this device does not reproduce it: %s; please report this with the dump",
				       d->where, msg);
		}
		snprintf(pl.raw_why[bad], sizeof(pl.raw_why[bad]),
			 "as structure it came out different: %s", err->msg);
		pl.raw[bad] = true;
	}
	return imp_err(err, "%s: no script reproduces this device", d->where);
}
