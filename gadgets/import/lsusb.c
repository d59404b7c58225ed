// SPDX-License-Identifier: GPL-2.0
/*
 * lsusb.c - `lsusb -v` text, as people paste it into bug reports.
 *
 * lsusb prints each descriptor as a block: a title line ("Interface
 * Descriptor:") and one line per field, `name value [text]`, in the order
 * the bytes lie in the descriptor (usbutils 007 to 017 all keep that order;
 * they differ in spacing, in decimal versus hex for some totals, and in the
 * class descriptors they decode).  The bytes are rebuilt from the fields:
 *
 * - the standard descriptors (device, configuration, interface, endpoint,
 *   association, SuperSpeed companion, qualifier) by field name, so a line
 *   lost from a paste leaves one field at a default instead of shifting
 *   the others;
 * - every other descriptor field by field, the width from the name's
 *   Hungarian prefix (b i = 1, w bcd id = 2, t = 3, dw = 4, guid = 16; bm
 *   as wide as the hex it is printed in, or the block's bControlSize), the
 *   whole made exactly bLength long;
 * - raw bytes where lsusb prints them (`** UNRECOGNIZED: 05 24 ...`);
 * - HID report descriptors from their `Item(...)` lines, or, when lsusb
 *   could not read them (`** UNAVAILABLE **`), a boot or vendor-defined
 *   one of the length the HID descriptor announces.
 *
 * What lsusb drops is put back where the rest of the text pins it down
 * (UVC's class-specific status endpoint, still-image pattern counts, the
 * SuperSpeed companion's wBytesPerInterval, UAS pipe descriptors printed
 * as a name); configurations and the BOS are made self-consistent
 * (wTotalLength, bNumInterfaces, bNumEndpoints, bNumDeviceCaps); a paste
 * cut short is completed.  Every such repair is noted.  `lsusb -t` lines
 * in the same paste, or 018's "Negotiated speed:", give the speed, and
 * `lsusb -t` the bound drivers.  Quoted-printable pastes (mail) are
 * decoded first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "lsusb.h"

#define LX_LINE_MAX	1024	/* longer lines are cut: no field is that long */
#define LX_DESC_ROOM	320	/* one descriptor: bLength <= 255, plus what
				 * lsusb prints past a short one */
#define LX_REPORT_MAX	8192	/* lsusb's own limit for a report descriptor */
#define LX_TREE_MAX	512	/* `lsusb -t` lines kept */

/* ---- values as lsusb prints them ---- */

enum lx_vkind { V_NONE, V_DEC, V_HEX, V_DOT, V_GUID };

struct lx_val {
	enum lx_vkind kind;
	unsigned long v;	/* DEC, HEX: the value; DOT: the integer part */
	unsigned int ndig;	/* HEX: digits printed */
	char ip[12], fp[12];	/* DOT: integer and fraction as printed */
	uint8_t guid[16];
	const char *rest;	/* the text after the value */
};

static const char *skip_sp(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}": lsusb's get_guid() prints the
 * first three fields little-endian */
static const char *parse_guid(const char *s, uint8_t g[16])
{
	static const uint8_t order[16] = { 3, 2, 1, 0, 5, 4, 7, 6,
					   8, 9, 10, 11, 12, 13, 14, 15 };
	unsigned int i = 0;

	if (*s++ != '{')
		return NULL;
	while (i < 16) {
		int hi, lo;

		if (*s == '-')
			s++;
		hi = util_hexval(s[0]);
		lo = hi < 0 ? -1 : util_hexval(s[1]);
		if (lo < 0)
			return NULL;
		g[order[i++]] = hi << 4 | lo;
		s += 2;
	}
	return *s == '}' ? s + 1 : NULL;
}

/* one value at s: 0x.., decimal, a.b (bcd, MHz, tenths), {guid} */
static bool parse_val(const char *s, struct lx_val *v)
{
	unsigned long n = 0;
	const char *p;
	size_t k;

	memset(v, 0, sizeof(*v));
	s = skip_sp(s);
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		p = s + 2;
		if (util_hexval(*p) < 0 && *p == ' ')	/* "0x 9": %2x */
			p = skip_sp(p);
		for (; util_hexval(*p) >= 0 && v->ndig < 16; p++, v->ndig++)
			n = n << 4 | util_hexval(*p);
		if (!v->ndig)
			return false;
		v->kind = V_HEX;
		v->v = n;
		v->rest = p;
		return true;
	}
	if (*s == '{') {
		p = parse_guid(s, v->guid);
		if (!p)
			return false;
		v->kind = V_GUID;
		v->rest = p;
		return true;
	}
	/* bcd is printed %2x.%02x: "f0.33" starts with a letter */
	for (p = s; util_hexval(*p) >= 0 && p - s < 5; p++)
		;
	if ((p == s || p - s > 4 || *p != '.' || util_hexval(p[1]) < 0) &&
	    (*s < '0' || *s > '9'))
		return false;
	p = s;
	for (k = 0; *p >= '0' && *p <= '9' && k < 10; p++, k++)
		n = n * 10 + (*p - '0');
	if (*p != '.' && util_hexval(*p) >= 0)
		for (; util_hexval(*p) >= 0; p++)
			;
	if (*p == '.' && util_hexval(p[1]) >= 0) {
		snprintf(v->ip, sizeof(v->ip), "%.*s", (int)(p - s), s);
		s = ++p;
		while (util_hexval(*p) >= 0 && p - s < 10)
			p++;
		snprintf(v->fp, sizeof(v->fp), "%.*s", (int)(p - s), s);
		v->kind = V_DOT;
		v->v = n;
		v->rest = p;
		return true;
	}
	v->kind = V_DEC;
	v->v = n;
	v->rest = p;
	return true;
}

static unsigned long hex_of(const char *s)
{
	unsigned long n = 0;

	for (; util_hexval(*s) >= 0; s++)
		n = n << 4 | util_hexval(*s);
	return n;
}

/* ---- descriptors being rebuilt ---- */

struct lx_desc {
	bool open;
	enum lx_kind kind;
	unsigned int line;
	uint8_t b[LX_DESC_ROOM];
	size_t len;		/* sequential kinds: bytes so far */
	uint32_t seen;		/* fixed kinds: slots read, a bit each */
	int blength;		/* printed bLength; -1 not (yet) printed */
	unsigned int ctl_size;	/* last bControlSize: width of bm* fields */
	bool overflow;
};

/* the HID descriptor of the current interface, for its report */
struct lx_hid {
	bool valid;
	uint8_t intf, subclass, proto;
	uint16_t rlen;		/* wDescriptorLength of the report */
	size_t rlen_off;	/* where it lies in the configuration */
};

struct lx_tree {
	int bus, dev, intf;
	enum usbip_speed speed;
	char driver[64];
};

enum lx_target {
	T_NONE,		/* descriptors here belong to nothing: dropped */
	T_CONFIG,	/* the configuration being read */
	T_BOS,
	T_HUB,		/* the hub class descriptor: a recorded transfer */
	T_OTG,		/* printed before the configurations it lies in */
};

struct lx {
	const char *path;
	struct imp_set *set;
	struct imp_error *err;
	unsigned int line;		/* the line being read, from 1 */
	int ret;			/* first allocation failure */

	struct imp_dev *d;		/* the device being read */
	int bus, dev;			/* from the last `Bus .. Device ..:` */
	unsigned int bus_line;		/* its line; 0: none pending */
	bool saw_bus;
	bool qp;			/* the paste was quoted-printable */
	unsigned int unusable_line;	/* first device dropped as unusable */

	enum lx_target target;
	int cfg;			/* configuration being read; -1 none */
	uint16_t cfg_total[GD_MAX_CONFIGS];	/* wTotalLength as printed */
	unsigned int cfg_line[GD_MAX_CONFIGS];
	struct lx_desc cur;
	bool hdr_pending;		/* a title not known here: the next
					 * bLength starts a new descriptor */
	uint8_t intf, if_class, if_sub, if_proto;	/* current interface */
	uint8_t ep_attr;		/* last endpoint: its companion, and a
					 * cut one after it */
	uint16_t ep_wmax;
	size_t uvc_ep_end[GD_MAX_CONFIGS];	/* after a UVC status endpoint */
	uint16_t uvc_ep_wmax[GD_MAX_CONFIGS];	/* its wMaxPacketSize */
	enum usbip_speed pend_speed;	/* 018's "Negotiated speed:" */
	uint8_t otg[3];
	bool have_otg;

	struct lx_hid hid;
	bool in_report;
	struct imp_blob report;
	unsigned int report_line;
	int report_depth;
	bool report_bad;

	struct lx_tree tree[LX_TREE_MAX];
	size_t n_tree;
	int tree_bus;
};

static void lx_note(struct lx *lx, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void lx_note(struct lx *lx, unsigned int line, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	if (!lx->d)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	imp_note(lx->d, "%s:%u: %s", lx->path, line, buf);
}

static void lx_put(struct lx *lx, struct imp_blob *b, const void *p, size_t n)
{
	if (imp_blob_put(b, p, n) && !lx->ret)
		lx->ret = -ENOMEM;
}

static uint16_t dev_bcd_usb(const struct lx *lx)
{
	const struct imp_blob *b = &lx->d->device;

	return b->len >= 4 ? (b->data[2] | b->data[3] << 8) : 0;
}

/* ---- field names ---- */

/*
 * The field at the start of s: its name (with any "( 0)" or "[0]" index)
 * into name, its base (without the index) into base.  Returns the length
 * taken from s, 0 when s does not start with a field name.
 */
static size_t field_name(const char *s, char *name, size_t nmax, char *base,
			 size_t bmax)
{
	const char *p = s, *open;
	size_t n, b;

	while (*p && *p != ' ' && *p != '\t')
		p++;
	/* "bmaControls( 0)", UAC's "tSamFreq[ 0]": a bracket may hold
	 * blanks */
	for (b = 0; b < 2; b++) {
		const char pair[2][2] = { { '(', ')' }, { '[', ']' } };
		const char *close;

		open = memchr(s, pair[b][0], p - s);
		if (!open || memchr(open, pair[b][1], p - open))
			continue;
		close = strchr(p, pair[b][1]);
		if (!close || close - p > 8)
			return 0;
		p = close + 1;
	}
	n = p - s;
	if (!n || n >= nmax)
		return 0;
	memcpy(name, s, n);
	name[n] = 0;
	for (b = 0; b < n && s[b] != '(' && s[b] != '['; b++)
		;
	if (!b || b >= bmax)
		return 0;
	memcpy(base, s, b);
	base[b] = 0;
	return n;
}

/* a value as the number to store in width bytes */
static unsigned long val_number(const char *base, const struct lx_val *v,
				uint8_t flags)
{
	unsigned long n = v->v;

	if (v->kind != V_DOT)
		return n;
	if (!strncmp(base, "bcd", 3))
		return hex_of(v->ip) << 8 | (hex_of(v->fp) & 0xff);
	if (flags & LX_F_TENTHS)
		return n * 10 + (v->fp[0] - '0');
	/* "15.000000MHz" (UVC, Hz) and "3.580 MHz" (CCID, kHz) */
	if (!strncmp(base, "dw", 2)) {
		unsigned long f = strtoul(v->fp, NULL, 10);

		if (strlen(v->fp) == 6)
			return n * 1000000 + f;
		if (strlen(v->fp) == 3)
			return n * 1000 + f;
	}
	return n;
}

static void put_le(uint8_t *p, unsigned long v, unsigned int width)
{
	unsigned int i;

	for (i = 0; i < width; i++, v >>= 8)
		p[i] = v & 0xff;
}

/* ---- one descriptor ---- */

static void desc_flush(struct lx *lx);

static void desc_open(struct lx *lx, enum lx_kind kind)
{
	struct lx_desc *c = &lx->cur;

	desc_flush(lx);
	memset(c, 0, sizeof(*c));
	c->open = true;
	c->kind = kind;
	c->line = lx->line;
	c->blength = -1;
	lx->hdr_pending = false;
	if (kind == LX_SSP)
		c->len = 12;	/* header, bReserved, bmAttributes, w, wReserved */
}

static void seq_put(struct lx_desc *c, unsigned long v, unsigned int width)
{
	if (c->len + width > sizeof(c->b)) {
		c->overflow = true;
		return;
	}
	put_le(c->b + c->len, v, width);
	c->len += width;
}

static void seq_bytes(struct lx_desc *c, const uint8_t *p, size_t n)
{
	if (c->len + n > sizeof(c->b)) {
		c->overflow = true;
		return;
	}
	memcpy(c->b + c->len, p, n);
	c->len += n;
}

/* a field of a fixed layout (device, configuration, ...) */
static void fixed_field(struct lx *lx, const char *base,
			const struct lx_val *v)
{
	struct lx_desc *c = &lx->cur;
	const struct lx_slot *s;
	unsigned long n = val_number(base, v, 0);
	unsigned int i;

	for (s = lx_layouts[c->kind].slots, i = 0; s->name; s++, i++)
		if (!strcmp(s->name, base))
			break;
	if (!s->name)
		return;
	if (c->kind == LX_CONFIG && !strcmp(base, "MaxPower")) {
		/* printed in mA: 2 mA units, 8 mA from USB 3.0 on */
		bool ss = dev_bcd_usb(lx) >= 0x0300;

		if ((ss && n % 8 == 0) || n / 2 > 255)
			n /= 8;
		else
			n /= 2;
	}
	if (!strcmp(base, "bLength"))
		c->blength = n;
	put_le(c->b + s->off, n, s->width);
	c->seen |= 1u << i;
}

static void ssp_field(struct lx_desc *c, const char *name, const char *base,
		      const struct lx_val *v)
{
	unsigned long n = val_number(base, v, 0);
	unsigned int i;

	if (!strcmp(base, "bLength")) {
		c->blength = n;
		c->b[0] = n;
	} else if (!strcmp(base, "bDescriptorType")) {
		c->b[1] = n;
	} else if (!strcmp(base, "bDevCapabilityType")) {
		c->b[2] = n;
	} else if (!strcmp(base, "bmAttributes")) {
		put_le(c->b + 4, n, 4);
	} else if (!strcmp(base, "wFunctionalitySupport")) {
		put_le(c->b + 8, n, 2);
	} else if (!strcmp(base, "bmSublinkSpeedAttr") &&
		   sscanf(name, "bmSublinkSpeedAttr[%u]", &i) == 1 && i < 32) {
		if (12 + 4 * (i + 1) > c->len)
			c->len = 12 + 4 * (i + 1);
		put_le(c->b + 12 + 4 * i, n, 4);
	}
}

/* a field of a descriptor read in order */
static void seq_field(struct lx *lx, const char *base, const char *text,
		      const struct lx_val *v)
{
	struct lx_desc *c = &lx->cur;
	uint8_t flags = 0;
	int width = 0;
	unsigned long n;

	width = lx_field_width(base, &flags);
	if (!width)
		return;
	if (flags & LX_F_MULTI) {
		uint8_t b[64];
		size_t k;

		if (flags & LX_F_BAREHEX) {
			k = lx_hex_bytes(text, b, sizeof(b));
		} else {
			struct lx_val t;
			const char *p = text;

			for (k = 0; k < sizeof(b) && parse_val(p, &t); k++) {
				b[k] = t.v;
				p = t.rest;
			}
		}
		seq_bytes(c, b, k < sizeof(b) ? k : sizeof(b));
		return;
	}
	if ((flags & LX_F_WORDS) && (!strncmp(skip_sp(text), "echo", 4) ||
				   !strncmp(skip_sp(text), "none", 4))) {
		seq_put(c, *skip_sp(text) == 'e' ? 0xff : 0, width);
		return;
	}
	if (flags & LX_F_BAREHEX) {
		seq_put(c, hex_of(skip_sp(text)), width);
		return;
	}
	if (!v)
		return;
	if (width == 16) {
		if (v->kind == V_GUID)
			seq_bytes(c, v->guid, 16);
		return;
	}
	n = val_number(base, v, flags);
	if (width < 0) {
		/* a bitmap: as wide as its hex, or its block's control size
		 * when that is less (lsusb pads some to 0x%08x) */
		unsigned int hw = v->kind == V_HEX ? (v->ndig + 1) / 2 : 1;

		width = c->ctl_size && c->ctl_size < hw ? c->ctl_size : hw;
		if (width > 4)
			width = 4;
	}
	if (!strcmp(base, "bControlSize") || !strcmp(base, "bElCapsSize"))
		c->ctl_size = n;
	if (!strcmp(base, "bLength") && c->len == 0)
		c->blength = n;
	if (flags & LX_F_BIGEND)
		n = (n >> 8 & 0xff) | (n & 0xff) << 8;
	seq_put(c, n, width);
}

/* the text of an i* field as the string at that index */
static void string_field(struct lx *lx, const char *base,
			 const struct lx_val *v)
{
	char text[LX_LINE_MAX];
	const char *t;
	size_t n;

	if (!lx->d || base[0] != 'i' || !(base[1] >= 'A' && base[1] <= 'Z') ||
	    v->kind != V_DEC || !v->v || v->v > 255)
		return;
	t = v->rest;
	if (*t == ' ')
		t++;
	n = strlen(t);
	if (!n || !strcmp(t, "(?\?)") || !strcmp(t, "(error)") ||
	    lx->d->strings[v->v])
		return;
	snprintf(text, sizeof(text), "%s", t);
	if (imp_set_string(lx->d, v->v, text) == -ENOMEM && !lx->ret)
		lx->ret = -ENOMEM;
}

static void desc_field(struct lx *lx, const char *name, const char *base,
		       const char *text)
{
	struct lx_desc *c = &lx->cur;
	struct lx_val v;
	bool have = parse_val(text, &v);

	if (have)
		string_field(lx, base, &v);
	/* an unknown title, or a descriptor lsusb prints without title:
	 * a second bLength starts the next descriptor */
	if (!strcmp(base, "bLength") && have &&
	    (lx->hdr_pending || !c->open || c->blength >= 0 ||
	     (c->kind < LX_SEQ && (c->seen & 1)))) {
		if (lx->target == T_NONE && c->open && c->kind == LX_DEVICE)
			return;
		desc_open(lx, LX_SEQ);
	}
	if (!c->open)
		return;
	switch (c->kind) {
	case LX_ENDPOINT:
		if (!strcmp(base, "bMaxBurst") || !strcmp(base, "MaxStreams") ||
		    !strcmp(base, "Mult")) {
			/* lsusb folds the SuperSpeed companion into the
			 * endpoint it follows */
			desc_open(lx, LX_SSCOMP);
			c->b[0] = 6;
			c->b[1] = 0x30;
			c->seen = 3;
		} else {
			if (have)
				fixed_field(lx, base, &v);
			return;
		}
		/* fall through */
	case LX_SSCOMP:
		if (!have)
			return;
		if (!strcmp(base, "MaxStreams"))	/* printed as 1 << n */
			c->b[3] = v.v > 1 ? (uint8_t)(__builtin_ctzl(v.v) & 0x1f) : 0;
		else if (!strcmp(base, "Mult"))
			c->b[3] = v.v & 3;
		else
			fixed_field(lx, base, &v);
		return;
	case LX_DEVICE:
	case LX_CONFIG:
	case LX_INTERFACE:
	case LX_IAD:
	case LX_QUALIFIER:
		if (have)
			fixed_field(lx, base, &v);
		return;
	case LX_SSP:
		if (have)
			ssp_field(c, name, base, &v);
		return;
	case LX_CDC:
		/* a version printing bLength: its own header replaces ours */
		if (!strcmp(base, "bLength") && c->len == 3 && c->blength < 0)
			c->len = 0;
		/* fall through */
	case LX_SEQ:
	case LX_HID:
		seq_field(lx, base, text, have ? &v : NULL);
		return;
	}
}

/* ---- the configuration ---- */

static struct imp_blob *cfg_blob(struct lx *lx)
{
	if (!lx->d || lx->cfg < 0)
		return NULL;
	return &lx->d->configs[lx->cfg];
}

static void cfg_append(struct lx *lx, const uint8_t *p, size_t n,
		       unsigned int line)
{
	struct imp_blob *b = cfg_blob(lx);

	if (!b) {
		lx_note(lx, line, "a descriptor outside any configuration: left out");
		return;
	}
	if (b->len + n > 0xffff) {
		lx_note(lx, line, "configuration past 65535 bytes: descriptor left out");
		return;
	}
	lx_put(lx, b, p, n);
}

/* a recorded control transfer, answered as the paste shows */
static void ctrl_at(struct lx *lx, const uint8_t setup[8], const uint8_t *p,
		    size_t n, unsigned int line)
{
	char where[4200];
	int ret;

	snprintf(where, sizeof(where), "%s:%u", lx->path, line);
	ret = imp_add_ctrl(lx->d, setup, false, p, n, where);
	if (ret && !lx->ret)
		lx->ret = ret;
}

static void target_append(struct lx *lx, const uint8_t *p, size_t n,
			  unsigned int line)
{
	uint8_t setup[8] = { 0xa0, 0x06, 0x00, 0x29, 0, 0, 0, 0 };

	switch (lx->target) {
	case T_CONFIG:
		cfg_append(lx, p, n, line);
		break;
	case T_BOS:
		lx_put(lx, &lx->d->bos, p, n);
		break;
	case T_HUB:
		/* GET_DESCRIPTOR(HUB) is a class request: a recorded reply */
		setup[3] = n > 1 ? p[1] : 0x29;
		setup[6] = n;
		ctrl_at(lx, setup, p, n, line);
		break;
	case T_OTG:
		if (n == 3) {
			memcpy(lx->otg, p, 3);
			lx->have_otg = true;
		}
		break;
	case T_NONE:
		break;
	}
}

/* the missing slots of a fixed layout, by name, for a note */
static void missing_slots(const struct lx_desc *c, char *buf, size_t len)
{
	const struct lx_slot *s;
	size_t used = 0;
	unsigned int i;

	buf[0] = 0;
	for (s = lx_layouts[c->kind].slots, i = 0; s->name; s++, i++) {
		if (c->seen & (1u << i))
			continue;
		if (c->kind == LX_ENDPOINT && i >= 6)	/* audio only */
			continue;
		if (used + strlen(s->name) + 3 < len)
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", s->name);
	}
}

static void flush_fixed(struct lx *lx)
{
	struct lx_desc *c = &lx->cur;
	const char *what = lx_layouts[c->kind].what;
	size_t size = lx_layouts[c->kind].size;
	char miss[200];

	if (!(c->seen & 1))
		c->b[0] = size;
	if (!(c->seen & 2))
		c->b[1] = lx_layouts[c->kind].type;
	if (c->b[1] != lx_layouts[c->kind].type) {
		/* libusb would not have parsed it: a damaged paste */
		lx_note(lx, c->line, "%s with bDescriptorType %u: %u taken",
			what, c->b[1], lx_layouts[c->kind].type);
		c->b[1] = lx_layouts[c->kind].type;
	}
	if (c->kind == LX_ENDPOINT && c->blength == 9)
		size = 9;
	if (c->b[0] != size) {
		lx_note(lx, c->line, "%s with bLength %u: written as %zu bytes",
			what, c->b[0], size);
		c->b[0] = size;
	}
	missing_slots(c, miss, sizeof(miss));
	switch (c->kind) {
	case LX_DEVICE:
		if (!(c->seen & (1u << 6))) {
			size_t l = strlen(miss);

			c->b[7] = 64;
			snprintf(miss + l, sizeof(miss) - l,
				 " (bMaxPacketSize0 64)");
		}
		if (miss[0] && strcmp(miss, "bNumConfigurations"))
			lx_note(lx, c->line, "device descriptor without %s in the paste: 0 taken",
				miss);
		if ((c->seen & (3u << 7)) != (3u << 7))
			break;		/* no ids: the device is unusable */
		imp_blob_free(&lx->d->device);
		lx_put(lx, &lx->d->device, c->b, 18);
		/* bNumConfigurations: made to match at the device's end */
		lx->d->device.data[17] = c->seen & (1u << 13) ? c->b[17] : 0xff;
		return;
	case LX_QUALIFIER:
		imp_blob_free(&lx->d->qualifier);
		lx_put(lx, &lx->d->qualifier, c->b, 10);
		return;
	case LX_CONFIG:
		if (miss[0])
			lx_note(lx, c->line, "configuration descriptor without %s in the paste: 0 taken",
				miss);
		if (!(c->seen & (1u << 7)))
			c->b[7] = 0x80;
		if (!(c->seen & (1u << 5)) && lx->cfg >= 0)
			c->b[5] = lx->cfg + 1;	/* selectable, distinct */
		if (lx->cfg >= 0)
			lx->cfg_total[lx->cfg] = c->seen & (1u << 2) ?
				(c->b[2] | c->b[3] << 8) : 0;
		cfg_append(lx, c->b, 9, c->line);
		if (lx->have_otg)
			cfg_append(lx, lx->otg, 3, c->line);
		return;
	case LX_INTERFACE:
		lx->intf = c->b[2];
		lx->if_class = c->b[5];
		lx->if_sub = c->b[6];
		lx->if_proto = c->b[7];
		lx->hid.valid = false;
		lx->ep_attr = 0;
		lx->ep_wmax = 0;
		break;
	case LX_ENDPOINT:
		if (!(c->seen & (1u << 3)) || !(c->seen & (1u << 4))) {
			/* cut short: like the endpoint before it, else bulk */
			if (!(c->seen & (1u << 3)))
				c->b[3] = lx->ep_wmax ? lx->ep_attr : 0x02;
			if (!(c->seen & (1u << 4)))
				put_le(c->b + 4, lx->ep_wmax ? lx->ep_wmax : 64, 2);
			lx_note(lx, c->line, "endpoint 0x%02x cut short in the paste: bmAttributes 0x%02x and wMaxPacketSize %u taken (%s)",
				c->b[2], c->b[3], c->b[4] | c->b[5] << 8,
				lx->ep_wmax ? "as the endpoint before it" :
				"a bulk endpoint");
		} else if (miss[0]) {
			lx_note(lx, c->line, "endpoint descriptor without %s in the paste: 0 taken",
				miss);
		}
		lx->ep_attr = c->b[3];
		lx->ep_wmax = c->b[4] | c->b[5] << 8;
		/* UVC's class-specific interrupt endpoint (05 25 03 ..): old
		 * lsusb prints nothing for it; cfg_fix puts it back */
		if (lx->if_class == 0x0e && lx->if_sub == 1 &&
		    (c->b[3] & 3) == 3 && (c->b[2] & 0x80) && cfg_blob(lx)) {
			lx->uvc_ep_end[lx->cfg] = cfg_blob(lx)->len + size;
			lx->uvc_ep_wmax[lx->cfg] = lx->ep_wmax;
		}
		break;
	case LX_SSCOMP:
		if (!(c->seen & (1u << 4))) {
			unsigned long bpi = 0;

			/* not printed: what a periodic endpoint moves at
			 * most per service interval */
			if (lx->ep_attr & 1)
				bpi = (unsigned long)(lx->ep_wmax & 0x7ff) *
				      (c->b[2] + 1) *
				      ((lx->ep_attr & 3) == 1 ?
				       (c->b[3] & 3) + 1 : 1);
			if (bpi > 0xffff)
				bpi = 0xffff;
			put_le(c->b + 4, bpi, 2);
			if (bpi)
				lx_note(lx, c->line, "SuperSpeed companion: lsusb prints no wBytesPerInterval; %lu taken (wMaxPacketSize x burst x mult)",
					bpi);
		}
		break;
	default:
		break;
	}
	cfg_append(lx, c->b, size, c->line);
}

static void flush_seq(struct lx *lx)
{
	struct lx_desc *c = &lx->cur;
	size_t want;

	if (c->kind == LX_CDC && c->blength < 0) {
		c->b[0] = c->len;
		want = c->len;
	} else if (c->blength > 255) {
		/* the text's number, not a byte: c->b holds no more */
		lx_note(lx, c->line, "bLength %d is more than a byte holds: descriptor left out",
			c->blength);
		return;
	} else if (c->blength >= 2) {
		want = c->blength;
	} else {
		if (c->len)
			lx_note(lx, c->line, "a descriptor without bLength in the paste: left out");
		return;
	}
	if (c->overflow)
		lx_note(lx, c->line, "descriptor longer than %zu bytes in the text: cut",
			sizeof(c->b));
	if (c->len < want) {
		lx_note(lx, c->line, "descriptor type 0x%02x: %zu of its %zu bytes in the text (lsusb does not print them all); the rest 0",
			c->b[1], c->len, want);
		memset(c->b + c->len, 0, want - c->len);
	}
	if (lx->if_class == 0x0e && lx->if_sub == 2 && c->b[1] == 0x24 &&
	    c->b[2] == 0x03 && want >= 6) {
		/* STILL_IMAGE_FRAME: lsusb before 008 printed
		 * bNumImageSizePatterns as bNumCompressionPatterns; bLength
		 * says how many compression patterns follow */
		size_t at = 5 + 4 * (size_t)c->b[4];

		if (at < want && c->b[at] != want - at - 1) {
			lx_note(lx, c->line, "still image frame: bNumCompressionPatterns %u printed, bLength leaves room for %zu: %zu taken",
				c->b[at], want - at - 1, want - at - 1);
			c->b[at] = want - at - 1;
		}
	}
	if (c->kind == LX_HID && lx->target == T_CONFIG && want >= 9) {
		struct imp_blob *b = cfg_blob(lx);
		size_t i;

		/* the report's length, to answer its GET_DESCRIPTOR */
		memset(&lx->hid, 0, sizeof(lx->hid));
		for (i = 0; b && 6 + 3 * i + 2 < want && i < c->b[5]; i++) {
			if (c->b[6 + 3 * i] != 0x22)
				continue;
			lx->hid.valid = true;
			lx->hid.intf = lx->intf;
			lx->hid.subclass = lx->if_sub;
			lx->hid.proto = lx->if_proto;
			lx->hid.rlen = c->b[7 + 3 * i] | c->b[8 + 3 * i] << 8;
			lx->hid.rlen_off = b->len + 7 + 3 * i;
			break;
		}
	}
	target_append(lx, c->b, want, c->line);
}

static void desc_flush(struct lx *lx)
{
	struct lx_desc *c = &lx->cur;

	if (!c->open)
		return;
	c->open = false;
	if (!lx->d)
		return;
	if (c->kind < LX_SEQ)
		flush_fixed(lx);
	else
		flush_seq(lx);
}

/* `** UNRECOGNIZED: 05 24 ...`: the descriptor itself */
static void raw_desc(struct lx *lx, const char *hex)
{
	uint8_t b[LX_DESC_ROOM];
	size_t n;

	desc_flush(lx);
	n = lx_hex_bytes(hex, b, sizeof(b));
	if (n > sizeof(b))
		n = sizeof(b);
	if (n < 2 || b[0] < 2) {
		lx_note(lx, lx->line, "raw descriptor of %zu byte(s) with bLength %u: left out",
			n, n ? b[0] : 0);
		return;
	}
	if (b[0] > n) {
		lx_note(lx, lx->line, "raw descriptor cut short (%zu of %u bytes): the rest 0",
			n, b[0]);
		memset(b + n, 0, b[0] - n);
	}
	target_append(lx, b, b[0], lx->line);
}

/* ---- HID report descriptors ---- */

/* one "Item(Global): Usage Page, data= [ 0x01 ] 1" line */
static void report_item(struct lx *lx, const char *s)
{
	uint8_t b[5];
	int n = lx_hid_item(s, b);

	if (n < 0 || lx->report.len + n > LX_REPORT_MAX) {
		if (!lx->report_bad)
			lx_note(lx, lx->line, "HID report item not understood: left out (the report may not parse)");
		lx->report_bad = true;
		return;
	}
	if ((b[0] & 0xfc) == 0xa0)
		lx->report_depth++;
	else if ((b[0] & 0xfc) == 0xc0 && lx->report_depth > 0)
		lx->report_depth--;
	lx_put(lx, &lx->report, b, n);
}

static void hid_record(struct lx *lx, const uint8_t *p, size_t n,
		       unsigned int line)
{
	uint8_t setup[8] = { 0x81, 0x06, 0x00, 0x22, lx->intf, 0,
			     n & 0xff, n >> 8 };

	if (lx->hid.valid)
		setup[4] = lx->hid.intf;
	ctrl_at(lx, setup, p, n, line);
}

/* make the HID descriptor announce the report we serve */
static void hid_patch_len(struct lx *lx, size_t n)
{
	struct imp_blob *b = cfg_blob(lx);

	if (!lx->hid.valid || !b || lx->hid.rlen_off + 2 > b->len)
		return;
	b->data[lx->hid.rlen_off] = n & 0xff;
	b->data[lx->hid.rlen_off + 1] = n >> 8;
}

static void hid_unavailable(struct lx *lx);

static void report_end(struct lx *lx)
{
	static const uint8_t end = 0xc0;

	if (!lx->in_report)
		return;
	lx->in_report = false;
	if (lx->d && !lx->report.len) {
		hid_unavailable(lx);
		return;
	}
	if (lx->d) {
		if (lx->report_depth > 0) {
			lx_note(lx, lx->report_line, "HID report descriptor cut short inside %d collection(s): closed",
				lx->report_depth);
			while (lx->report_depth-- > 0)
				lx_put(lx, &lx->report, &end, 1);
		}
		if (lx->hid.valid && lx->report.len != lx->hid.rlen) {
			lx_note(lx, lx->report_line, "HID report descriptor of %zu bytes in the paste, wDescriptorLength %u: the HID descriptor now says %zu",
				lx->report.len, lx->hid.rlen, lx->report.len);
			hid_patch_len(lx, lx->report.len);
		}
		if (lx->report.len)
			hid_record(lx, lx->report.data, lx->report.len,
				   lx->report_line);
	}
	imp_blob_free(&lx->report);
	lx->hid.valid = false;
}

static void hid_unavailable(struct lx *lx)
{
	const char *what;
	uint8_t *out;
	size_t len;

	if (!lx->d || !lx->hid.valid) {
		lx_note(lx, lx->line, "HID report descriptor UNAVAILABLE and no HID descriptor before it: nothing recorded");
		return;
	}
	/* as long as the HID descriptor says, or the least valid one */
	out = malloc(lx->hid.rlen > 64 ? lx->hid.rlen : 64);
	if (!out) {
		lx->ret = -ENOMEM;
		return;
	}
	len = lx_hid_synth(lx->hid.subclass, lx->hid.proto, lx->hid.rlen,
			   out, &what);
	if (len != lx->hid.rlen) {
		lx_note(lx, lx->line, "HID report descriptor UNAVAILABLE (lsusb could not read it) and wDescriptorLength %u is too short for any; %s of %zu bytes synthesized and announced instead",
			lx->hid.rlen, what, len);
		hid_patch_len(lx, len);
	} else {
		lx_note(lx, lx->line, "HID report descriptor UNAVAILABLE (lsusb could not read it): %s synthesized, padded to wDescriptorLength %zu",
			what, len);
	}
	hid_record(lx, out, len, lx->line);
	free(out);
	lx->hid.valid = false;
}

/* ---- devices ---- */


/* bNumInterfaces, bNumEndpoints and wTotalLength made to match what the
 * paste holds (a cut paste, or lsusb's own view of the bytes) */
static void cfg_fix(struct lx *lx, unsigned int i)
{
	struct imp_blob *b = &lx->d->configs[i];
	uint8_t *p;
	uint8_t seen[32] = { 0 };
	size_t pos = 9, ifpos = 0;
	unsigned int n_if = 0, n_ep = 0;
	bool in_if = false;

	/* no descriptor type after the endpoint (the end, or a 1-byte
	 * remnant) is no class-specific endpoint either */
	if (lx->uvc_ep_end[i] && lx->uvc_ep_end[i] <= b->len &&
	    lx->cfg_total[i] == b->len + 5 &&
	    (lx->uvc_ep_end[i] + 1 >= b->len ||
	     b->data[lx->uvc_ep_end[i] + 1] != 0x25)) {
		size_t at = lx->uvc_ep_end[i];
		uint8_t cs[5] = { 5, 0x25, 0x03, lx->uvc_ep_wmax[i] & 0xff,
				  lx->uvc_ep_wmax[i] >> 8 };

		lx_put(lx, b, cs, 5);
		if (b->len >= at + 5) {
			memmove(b->data + at + 5, b->data + at, b->len - at - 5);
			memcpy(b->data + at, cs, 5);
			lx_note(lx, lx->cfg_line[i], "UVC status endpoint: its class-specific descriptor (05 25 03), which lsusb does not print, put back with wMaxTransferSize %u",
				cs[3] | cs[4] << 8);
		}
	}
	p = b->data;
	for (;;) {
		bool end = pos + 2 > b->len || p[pos] < 2 ||
			   p[pos] > b->len - pos;

		if (in_if && (end || (p[pos + 1] == 0x04 && p[pos] >= 9))) {
			if (p[ifpos + 4] != n_ep) {
				lx_note(lx, lx->cfg_line[i], "interface %u alternate %u: bNumEndpoints %u, but %u endpoint(s) in the paste: set to %u",
					p[ifpos + 2], p[ifpos + 3],
					p[ifpos + 4], n_ep, n_ep);
				p[ifpos + 4] = n_ep;
			}
			in_if = false;
		}
		if (end)
			break;
		if (p[pos + 1] == 0x04 && p[pos] >= 9) {
			in_if = true;
			ifpos = pos;
			n_ep = 0;
			if (!(seen[p[pos + 2] / 8] & (1u << (p[pos + 2] % 8))))
				n_if++;
			seen[p[pos + 2] / 8] |= 1u << (p[pos + 2] % 8);
		} else if (p[pos + 1] == 0x05 && p[pos] >= 7) {
			n_ep++;
		}
		pos += p[pos];
	}
	if (p[4] != n_if) {
		lx_note(lx, lx->cfg_line[i], "configuration %u: bNumInterfaces %u, but %u interface(s) in the paste: set to %u",
			p[5], p[4], n_if, n_if);
		p[4] = n_if;
	}
	if (lx->cfg_total[i] != b->len) {
		lx_note(lx, lx->cfg_line[i], "configuration %u: wTotalLength %u printed, %zu bytes rebuilt from the paste%s: set to %zu",
			p[5], lx->cfg_total[i], b->len,
			b->len < lx->cfg_total[i] ? " (cut short?)" : "",
			b->len);
	}
	p[2] = b->len & 0xff;
	p[3] = b->len >> 8;
}

/* a configuration for a device whose paste holds none: one vendor
 * interface without endpoints, so the device still enumerates */
static void cfg_synth(struct lx *lx, unsigned int line)
{
	static const uint8_t cfg[18] = {
		0x09, 0x02, 0x12, 0x00, 0x01, 0x01, 0x00, 0x80, 0x32,
		0x09, 0x04, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00,
	};

	lx_put(lx, &lx->d->configs[0], cfg, sizeof(cfg));
	lx->d->n_configs = 1;
	lx->cfg_total[0] = sizeof(cfg);
	lx_note(lx, line, "no configuration descriptor in the paste: one with a vendor-specific interface and no endpoints made up");
}

/* the BOS: wTotalLength and bNumDeviceCaps as the paste holds them */
static void bos_fix(struct lx *lx, unsigned int line)
{
	struct imp_blob *b = &lx->d->bos;
	size_t pos = 5;
	unsigned int n = 0;

	if (!b->len)
		return;
	if (b->len < 5 || b->data[0] != 5) {
		lx_note(lx, line, "BOS descriptor of %zu bytes without its 5-byte header: left out",
			b->len);
		imp_blob_free(b);
		return;
	}
	while (pos + 3 <= b->len && b->data[pos] >= 3 &&
	       b->data[pos] <= b->len - pos) {
		n++;
		pos += b->data[pos];
	}
	if (pos != b->len) {
		lx_note(lx, line, "BOS capabilities end at byte %zu of %zu: the rest left out",
			pos, b->len);
		b->len = pos;
	}
	if (b->data[4] != n || (size_t)(b->data[2] | b->data[3] << 8) != b->len)
		lx_note(lx, line, "BOS: wTotalLength %u and bNumDeviceCaps %u printed, %zu bytes and %u capabilities in the paste: set so",
			b->data[2] | b->data[3] << 8, b->data[4], b->len, n);
	b->data[2] = b->len & 0xff;
	b->data[3] = b->len >> 8;
	b->data[4] = n;
	b->data[1] = 0x0f;
}

static void dev_end(struct lx *lx)
{
	struct imp_dev *d = lx->d;
	unsigned int i, line;

	desc_flush(lx);
	report_end(lx);
	if (!d)
		return;
	line = atoi(strrchr(d->where, ':') ? strrchr(d->where, ':') + 1 : "0");
	if (d->device.len != 18) {
		if (!lx->unusable_line)
			lx->unusable_line = line;
		imp_dev_drop(lx->set, d);
		lx->d = NULL;
		return;
	}
	if (!d->n_configs && !lx->ret)
		cfg_synth(lx, line);
	for (i = 0; i < d->n_configs; i++)
		if (d->configs[i].len >= 9)
			cfg_fix(lx, i);
	bos_fix(lx, line);
	if (d->device.data[17] != d->n_configs) {
		if (d->device.data[17] != 0xff)
			lx_note(lx, line, "bNumConfigurations %u, but %zu configuration(s) in the paste: set to %zu",
				d->device.data[17], d->n_configs, d->n_configs);
		else
			lx_note(lx, line, "bNumConfigurations not in the paste: %zu, the configurations there",
				d->n_configs);
		d->device.data[17] = d->n_configs;
	}
	lx->d = NULL;
}

static void dev_begin(struct lx *lx)
{
	char where[4200];
	unsigned int line = lx->bus_line ? lx->bus_line : lx->line;

	dev_end(lx);
	snprintf(where, sizeof(where), "%s:%u", lx->path, line);
	lx->d = imp_dev_new(lx->set, where);
	if (!lx->d) {
		if (!lx->ret)
			lx->ret = lx->set->n >= IMP_MAX_DEVICES ? -E2BIG : -ENOMEM;
		return;
	}
	if (lx->bus_line) {
		lx->d->busnum = lx->bus;
		lx->d->devnum = lx->dev;
	}
	if (lx->qp)
		lx_note(lx, line, "the paste is quoted-printable (mail): decoded first; line numbers count the decoded text");
	lx->d->speed = lx->pend_speed;
	lx->pend_speed = USBIP_SPEED_UNKNOWN;
	lx->bus_line = 0;
	lx->target = T_NONE;
	lx->cfg = -1;
	memset(lx->uvc_ep_end, 0, sizeof(lx->uvc_ep_end));
	memset(lx->uvc_ep_wmax, 0, sizeof(lx->uvc_ep_wmax));
	lx->have_otg = false;
	memset(&lx->hid, 0, sizeof(lx->hid));
	desc_open(lx, LX_DEVICE);
}

static void cfg_begin(struct lx *lx)
{
	desc_flush(lx);
	report_end(lx);
	if (!lx->d)
		return;
	if (lx->d->n_configs >= GD_MAX_CONFIGS) {
		lx_note(lx, lx->line, "more than %d configurations: the rest left out",
			GD_MAX_CONFIGS);
		lx->target = T_NONE;
		lx->cfg = -1;
		return;
	}
	lx->cfg = lx->d->n_configs++;
	lx->cfg_line[lx->cfg] = lx->line;
	lx->cfg_total[lx->cfg] = 0;
	lx->target = T_CONFIG;
	desc_open(lx, LX_CONFIG);
}

/* ---- `lsusb -t` ---- */

/* "480M", "1.5M", "5000M/x2", "480Mbps", "5Gbps" */
static enum usbip_speed tree_speed_of(const char *p)
{
	char *unit;
	double mbit = strtod(p, &unit);

	if (*unit == 'G')
		mbit *= 1000;
	if (mbit <= 0)
		return USBIP_SPEED_UNKNOWN;
	if (mbit < 2)
		return USBIP_SPEED_LOW;
	if (mbit < 100)
		return USBIP_SPEED_FULL;
	if (mbit < 1000)
		return USBIP_SPEED_HIGH;
	return USBIP_SPEED_SUPER;
}

static enum usbip_speed tree_speed(const char *s)
{
	const char *p = s + strlen(s);

	/* the last field, ", <n>M" */
	while (p > s && p[-1] != ' ')
		p--;
	return tree_speed_of(p);
}

/* "/:  Bus 02.Port 1: Dev 1, Class=root_hub, Driver=xhci_hcd/6p, 5000M"
 * "    |__ Port 1: Dev 2, If 0, Class=Human Interface Device, Driver=usbhid, 12M" */
static void tree_line(struct lx *lx, const char *s)
{
	struct lx_tree *t;
	const char *p;
	size_t n;

	p = strstr(s, "Bus ");
	if (p && !strstr(s, "|__"))
		lx->tree_bus = atoi(p + 4);
	if (lx->n_tree >= LX_TREE_MAX)
		return;
	p = strstr(s, "Dev ");
	if (!p)
		return;
	t = &lx->tree[lx->n_tree++];
	memset(t, 0, sizeof(*t));
	t->bus = lx->tree_bus;
	t->dev = atoi(p + 4);
	p = strstr(s, ", If ");
	t->intf = p ? atoi(p + 5) : -1;
	p = strstr(s, "Driver=");
	if (p) {
		p += 7;
		n = strcspn(p, ",");
		snprintf(t->driver, sizeof(t->driver), "%.*s", (int)n, p);
	}
	t->speed = tree_speed(s);
}

static void tree_apply(struct lx *lx)
{
	size_t i, j;

	for (i = 0; i < lx->n_tree; i++) {
		const struct lx_tree *t = &lx->tree[i];

		for (j = 0; j < lx->set->n; j++) {
			struct imp_dev *d = lx->set->devs[j];

			if (d->busnum != t->bus || d->devnum != t->dev)
				continue;
			if (t->speed != USBIP_SPEED_UNKNOWN)
				d->speed = t->speed;
			if (t->intf < 0 || t->intf >= GD_MAX_INTERFACES)
				continue;
			d->driver_known = true;
			if (!t->driver[0] || !strcmp(t->driver, "[none]") ||
			    !strcmp(t->driver, "(none)"))
				continue;
			free(d->driver[t->intf]);
			d->driver[t->intf] = strdup(t->driver);
		}
	}
}

/* ---- lines ---- */

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* a title line: true when it was one */
static bool title_line(struct lx *lx, const char *s)
{
	const char *p;
	int sub;

	if (!strcmp(s, "Device Descriptor:")) {
		dev_begin(lx);
		return true;
	}
	if (!lx->d)
		return false;
	if (!strcmp(s, "Configuration Descriptor:")) {
		cfg_begin(lx);
		return true;
	}
	if (!strcmp(s, "Interface Descriptor:") ||
	    !strcmp(s, "Endpoint Descriptor:") ||
	    !strcmp(s, "Interface Association:")) {
		report_end(lx);
		desc_open(lx, s[0] == 'E' ? LX_ENDPOINT :
			  s[10] == 'D' ? LX_INTERFACE : LX_IAD);
		return true;
	}
	if (!strcmp(s, "HID Device Descriptor:")) {
		report_end(lx);
		desc_open(lx, LX_HID);
		return true;
	}
	sub = lx_cdc_subtype(s);
	if (sub >= 0) {
		desc_open(lx, LX_CDC);
		lx->cur.b[1] = 0x24;
		lx->cur.b[2] = sub;
		lx->cur.len = 3;
		return true;
	}
	if (starts(s, "Report Descriptor: (length is ")) {
		desc_flush(lx);
		report_end(lx);
		lx->in_report = true;
		lx->report_line = lx->line;
		lx->report_depth = 0;
		lx->report_bad = false;
		return true;
	}
	if (!strcmp(s, "** UNAVAILABLE **")) {
		desc_flush(lx);
		hid_unavailable(lx);
		return true;
	}
	if (starts(s, "** UNRECOGNIZED:") || starts(s, "UNRECOGNIZED CDC:") ||
	    starts(s, "INTERFACE CLASS:") || starts(s, "DEVICE CLASS:") ||
	    starts(s, "INVALID CDC (")) {
		/* a pasted line may end before its ':' */
		p = strchr(s, ':');
		raw_desc(lx, p ? p + 1 : "");
		return true;
	}
	if (starts(s, "junk at descriptor end:")) {
		uint8_t b[LX_DESC_ROOM];
		size_t n = lx_hex_bytes(s + 23, b, sizeof(b));

		if (lx->cur.open && lx->cur.kind >= LX_SEQ)
			seq_bytes(&lx->cur, b, n < sizeof(b) ? n : sizeof(b));
		return true;
	}
	if (!strcmp(s, "OTG Descriptor:")) {
		desc_flush(lx);
		lx->target = T_OTG;
		desc_open(lx, LX_SEQ);
		return true;
	}
	if (!strcmp(s, "Binary Object Store Descriptor:")) {
		desc_flush(lx);
		report_end(lx);
		imp_blob_free(&lx->d->bos);
		lx->target = T_BOS;
		desc_open(lx, LX_SEQ);
		return true;
	}
	if (!strcmp(s, "SuperSpeedPlus USB Device Capability:")) {
		desc_open(lx, LX_SSP);
		return true;
	}
	if (starts(s, "Device Qualifier (for other device speed):")) {
		desc_flush(lx);
		report_end(lx);
		lx->target = T_NONE;
		desc_open(lx, LX_QUALIFIER);
		return true;
	}
	if (!strcmp(s, "Hub Descriptor:")) {
		desc_flush(lx);
		report_end(lx);
		lx->target = T_HUB;
		desc_open(lx, LX_SEQ);
		return true;
	}
	if (starts(s, "Hub Port Status:") || starts(s, "Device Status:") ||
	    starts(s, "Debug descriptor:")) {
		/* not descriptors the device is asked for at enumeration
		 * (the debug one is not served: noted) */
		desc_flush(lx);
		report_end(lx);
		lx->target = T_NONE;
		if (starts(s, "Debug"))
			lx_note(lx, lx->line, "a USB2 debug descriptor in the paste: not served");
		return true;
	}
	return false;
}

/* "Bus 001 Device 004: ID 0403:6001 ..." and -D's "Device: ID 0403:6001" */
static bool bus_line(struct lx *lx, const char *s)
{
	unsigned int bus, dev, vid, pid;
	char c;

	if (sscanf(s, "Bus %u Device %u: ID %4x:%4x%c", &bus, &dev, &vid,
		   &pid, &c) >= 4) {
		dev_end(lx);
		lx->bus = bus;
		lx->dev = dev;
		lx->bus_line = lx->line;
		lx->saw_bus = true;
		return true;
	}
	if (sscanf(s, "Device: ID %4x:%4x%c", &vid, &pid, &c) >= 2) {
		dev_end(lx);
		lx->bus_line = 0;
		lx->saw_bus = true;
		return true;
	}
	/* usbutils 018: "Negotiated speed: High Speed (480Mbps)" */
	if (starts(s, "Negotiated speed:")) {
		const char *p = strchr(s, '(');

		lx->pend_speed = p ? tree_speed_of(p + 1) : USBIP_SPEED_UNKNOWN;
		return true;
	}
	return false;
}

static void one_line(struct lx *lx, const char *s)
{
	char name[96], base[96];
	uint8_t flags;
	size_t n;

	if (!*s) {
		/* a blank line ends a report descriptor, not a device */
		report_end(lx);
		return;
	}
	if (starts(s, "/:  Bus ") || strstr(s, "|__ Port ")) {
		tree_line(lx, s);
		return;
	}
	/*
	 * Most lines are fields, so they are tried first: no bus, title,
	 * report item or UAS pipe line starts with a field's name (their
	 * first words have no Hungarian prefix).
	 */
	n = field_name(s, name, sizeof(name), base, sizeof(base));
	if (n && (lx_field_width(base, &flags) || !strcmp(base, "MaxPower") ||
		  !strcmp(base, "MaxStreams") || !strcmp(base, "Mult"))) {
		const char *text = skip_sp(s + n);

		/* a field ends a report descriptor's items */
		report_end(lx);
		if (lx->d)
			desc_field(lx, name, base, text);
		return;
	}
	if (bus_line(lx, s))
		return;
	if (lx->in_report && starts(s, "Item(")) {
		report_item(lx, s);
		return;
	}
	if (title_line(lx, s))
		return;
	if (lx->d && lx->if_class == 0x08 && lx_uas_pipe(s) >= 0) {
		uint8_t pipe[4] = { 4, 0x24, lx_uas_pipe(s), 0 };

		desc_flush(lx);
		target_append(lx, pipe, sizeof(pipe), lx->line);
		return;
	}
	/* another title ("AudioControl Interface Descriptor:"): its
	 * bLength opens the descriptor */
	n = strlen(s);
	if (n > 1 && s[n - 1] == ':' && !lx->in_report)
		lx->hdr_pending = true;
}

/* text, or where it stops being text */
static int check_text(struct lx *lx, const uint8_t *buf, size_t len)
{
	unsigned int line = 1;
	size_t i;

	for (i = 0; i < len; i++) {
		uint8_t c = buf[i];

		if (c == '\n')
			line++;
		else if (c < 0x20 && c != '\t' && c != '\r' && c != '\f' &&
			 c != '\v')
			return imp_err(lx->err, "%s:%u: binary data (byte 0x%02x at offset %zu): not `lsusb -v` text",
				       lx->path, line, c, i);
	}
	return 0;
}

/*
 * A paste that went through mail as quoted-printable ("=20" at line ends,
 * "data=3D [ 0x01 ]"): decoded into a copy.  Soft line breaks ("=" at the
 * end of a line) join lines, so line numbers may run short of the file's.
 */
static uint8_t *qp_decode(const uint8_t *buf, size_t *len)
{
	uint8_t *out;
	size_t i, o = 0;

	if (!memmem(buf, *len, "=3D", 3) && !memmem(buf, *len, "=20\n", 4))
		return NULL;
	out = malloc(*len + 1);
	if (!out)
		return NULL;
	for (i = 0; i < *len; i++) {
		if (buf[i] == '=' && i + 2 < *len && util_hexval(buf[i + 1]) >= 0 &&
		    util_hexval(buf[i + 2]) >= 0) {
			out[o++] = util_hexval(buf[i + 1]) << 4 | util_hexval(buf[i + 2]);
			i += 2;
		} else if (buf[i] == '=' && i + 1 < *len && buf[i + 1] == '\n') {
			i++;
		} else if (buf[i] == '=' && i + 2 < *len && buf[i + 1] == '\r' &&
			   buf[i + 2] == '\n') {
			i += 2;
		} else {
			out[o++] = buf[i];
		}
	}
	out[o] = 0;
	*len = o;
	return out;
}

static int lsusb_read(const char *path, const uint8_t *buf, size_t len,
		      struct imp_set *set, struct imp_error *err)
{
	uint8_t *qp = NULL;
	struct lx *lx;
	size_t pos = 0;
	int ret;

	lx = calloc(1, sizeof(*lx));
	if (!lx)
		return imp_err(err, "%s: out of memory", path);
	lx->path = path;
	lx->set = set;
	lx->err = err;
	lx->cfg = -1;
	ret = check_text(lx, buf, len);
	if (ret)
		goto out;
	qp = qp_decode(buf, &len);
	if (qp) {
		buf = qp;
		lx->qp = true;
	}
	while (pos < len && !lx->ret) {
		const uint8_t *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = (nl ? (size_t)(nl - buf) : len) - pos;
		char line[LX_LINE_MAX];
		size_t keep = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
		char *s;

		memcpy(line, buf + pos, keep);
		line[keep] = 0;
		pos += n + 1;
		lx->line++;
		/* trailing blanks stay: lsusb prints a string as the device
		 * has it, and devices pad theirs ("VIA Labs, Inc.      ") */
		while (keep && line[keep - 1] == '\r')
			line[--keep] = 0;
		/* mail and forum quoting: "> > " before each line */
		for (s = line; *s == ' ' || *s == '\t' || *s == '>'; s++)
			;
		one_line(lx, s);
	}
	lx->line++;
	dev_end(lx);
	if (lx->ret == -E2BIG) {
		ret = imp_err(err, "%s:%u: more than %d devices in one paste",
			      path, lx->line, IMP_MAX_DEVICES);
		goto out;
	}
	if (lx->ret) {
		ret = imp_err(err, "%s: out of memory", path);
		goto out;
	}
	tree_apply(lx);
	if (!set->n) {
		if (lx->unusable_line)
			ret = imp_err(err, "%s:%u: the device descriptor is cut short before idVendor/idProduct: nothing usable",
				      path, lx->unusable_line);
		else if (lx->saw_bus)
			ret = imp_err(err, "%s:1: `lsusb` lists devices but prints no descriptors: paste the output of `lsusb -v`",
				      path);
		else
			ret = imp_err(err, "%s:1: no `Device Descriptor:` block: not `lsusb -v` output",
				      path);
	}
out:
	imp_blob_free(&lx->report);
	free(lx);
	free(qp);
	return ret;
}

static bool lsusb_sniff(const char *path, const uint8_t *buf, size_t len)
{
	static const char key[] = "Device Descriptor:", bus[] = ": ID ";

	(void)path;
	if (len > 65536)
		len = 65536;
	/* text: no NUL (a binary file may still hold the words); plain
	 * `lsusb` (only "Bus 001 Device 002: ID ..." lines) counts too, so
	 * that the reader can say what is missing */
	return (memmem(buf, len, key, sizeof(key) - 1) ||
		(!memcmp(buf, "Bus ", len < 4 ? len : 4) &&
		 memmem(buf, len, bus, sizeof(bus) - 1))) &&
	       !memchr(buf, 0, len);
}

const struct imp_reader imp_reader_lsusb = {
	.name = "lsusb",
	.summary = "`lsusb -v` text as pasted (usbutils 007-018), several devices, `lsusb -t` lines for speed and drivers",
	.sniff = lsusb_sniff,
	.read = lsusb_read,
};
