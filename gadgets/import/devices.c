// SPDX-License-Identifier: GPL-2.0
/*
 * devices.c - /sys/kernel/debug/usb/devices (once /proc/bus/usb/devices)
 * as imp_devs.
 *
 * One block per device, each line a letter and a colon (the formats are in
 * drivers/usb/core/devices.c and Documentation/driver-api/usb):
 *
 *   T:  Bus=01 Lev=01 Prnt=01 Port=00 Cnt=01 Dev#=  2 Spd=12   MxCh= 0
 *   B:  Alloc=  0/900 us ( 0%), #Int=  0, #Iso=  0         (root hubs)
 *   D:  Ver= 2.00 Cls=00(>ifc ) Sub=00 Prot=00 MxPS= 8 #Cfgs=  1
 *   P:  Vendor=0403 ProdID=6001 Rev= 6.00
 *   S:  Manufacturer=FTDI  (also Product=, SerialNumber=)
 *   C:* #Ifs= 1 Cfg#= 1 Atr=a0 MxPwr= 90mA      (* : the active one)
 *   A:  FirstIf#= 0 IfCount= 2 Cls=02(comm.) Sub=02 Prot=01
 *   I:* If#= 0 Alt= 0 #EPs= 2 Cls=ff(vend.) Sub=ff Prot=ff Driver=ftdi_sio
 *   E:  Ad=81(I) Atr=02(Bulk) MxPS=  64 Ivl=0ms
 *
 * What the file does not hold, and what is done instead (each noted):
 * string indexes (Manufacturer, Product, SerialNumber get 1, 2, 3;
 * iConfiguration and iInterface 0), class-specific descriptors and the
 * extra bytes of audio endpoints (the configurations are skeletons), BOS
 * and SuperSpeed endpoint companions.  MxPS of a high-speed periodic
 * endpoint is the packet size times the transactions per microframe;
 * Ivl is bInterval decoded for the device's speed, and is encoded back
 * the same way; MxPwr is bMaxPower times 2 (times 8 at SuperSpeed).
 *
 * The I: lines of the active configuration name the bound driver, or
 * "(none)": that is the outcome the reporter saw.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

#define DV_MAX_LINE	1024

#define USB_DT_DEVICE		1
#define USB_DT_CONFIG		2
#define USB_DT_INTERFACE	4
#define USB_DT_ENDPOINT		5
#define USB_DT_IAD		11

struct dv_iad {
	uint8_t desc[8];
	bool placed;
};

/* the device block being read */
struct dv_block {
	struct imp_dev *d;
	const char *path;
	size_t line;			/* of the T: line */
	enum usbip_speed speed;
	bool fast;			/* high speed or more: 125 us units */
	bool have_d, have_p, have_s[4];
	uint8_t dev[18];
	unsigned int n_cfgs;		/* #Cfgs= */
	size_t n_c_lines;
	bool any_active;

	/* the configuration being rebuilt; NULL when none, or skipped */
	struct imp_blob *cfg;
	bool cfg_skip;
	bool cfg_active;
	struct dv_iad iads[GD_MAX_IADS];
	size_t n_iads;

	/* the interface being rebuilt */
	bool if_open;
	size_t if_line;
	unsigned int if_num, if_alt, if_eps, if_eps_seen;
};

struct dv_line {
	const char *path;
	size_t no;
	char text[DV_MAX_LINE + 1];
	char tag;			/* T B D P S C A I E */
	bool star;			/* "C:*", "I:*" */
	const char *rest;		/* after the tag */
};

static int line_err(const struct dv_line *l, struct imp_error *err,
		    const char *what)
{
	return imp_err(err, "%s:%zu: %s", l->path, l->no, what);
}

/* where "Key=" is in the line, as a word of its own; its value after the
 * blanks the kernel pads numbers with */
static const char *field(const struct dv_line *l, const char *key)
{
	const char *p = l->rest;
	size_t n = strlen(key);

	while ((p = strstr(p, key))) {
		if (p == l->rest || p[-1] == ' ' || p[-1] == '\t') {
			p += n;
			while (*p == ' ')
				p++;
			return p;
		}
		p += n;
	}
	return NULL;
}

static int num_at(const char *p, int base, unsigned long max,
		  unsigned long *v, const char **end)
{
	unsigned long r = 0;
	size_t n = 0;

	for (; isxdigit((unsigned char)*p); p++, n++) {
		int c = (unsigned char)*p;
		int d = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;

		if (d >= base)
			break;
		r = r * base + d;
		if (r > max)
			return -ERANGE;
	}
	if (!n)
		return -EINVAL;
	*v = r;
	if (end)
		*end = p;
	return 0;
}

static int field_num(const struct dv_line *l, const char *key, int base,
		     unsigned long max, unsigned long *v, struct imp_error *err)
{
	const char *p = field(l, key);
	char msg[80];

	if (!p || num_at(p, base, max, v, NULL)) {
		snprintf(msg, sizeof(msg), "%s missing or not a %s number up to %lu",
			 key, base == 16 ? "hex" : "decimal", max);
		return line_err(l, err, msg);
	}
	return 0;
}

/* "2.00", " 6.00": bcd as the kernel prints it, %2x.%02x */
static int field_bcd(const struct dv_line *l, const char *key, uint16_t *v,
		     struct imp_error *err)
{
	const char *p = field(l, key);
	unsigned long hi, lo;
	char msg[80];

	if (!p || num_at(p, 16, 0xff, &hi, &p) || *p++ != '.' ||
	    !isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]) ||
	    num_at(p, 16, 0xff, &lo, NULL)) {
		snprintf(msg, sizeof(msg), "%s missing or not a version like 2.00",
			 key);
		return line_err(l, err, msg);
	}
	*v = hi << 8 | lo;
	return 0;
}

static void put16(uint8_t *p, unsigned int v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static int put(struct dv_block *b, const struct dv_line *l, const void *p,
	       size_t n, struct imp_error *err)
{
	if (imp_blob_put(b->cfg, p, n))
		return line_err(l, err, "configuration too large, or out of memory");
	return 0;
}

/* ---- the interval and packet size as the kernel printed them ---- */

/* usb_dump_endpoint_descriptor()'s Ivl=, for bInterval b: microseconds */
static bool interval_us(const struct dv_block *b, uint8_t attr, bool in,
			unsigned int bint, unsigned long long *us)
{
	unsigned long long iv;

	switch (attr & 3) {
	case 0:					/* control */
		iv = b->speed == USBIP_SPEED_HIGH ? bint : 0;
		break;
	case 1:					/* isochronous */
		if (!bint || bint > 32)
			return false;
		iv = 1ull << (bint - 1);
		break;
	case 2:					/* bulk */
		iv = b->speed == USBIP_SPEED_HIGH && !in ? bint : 0;
		break;
	default:				/* interrupt */
		if (b->fast) {
			if (!bint || bint > 32)
				return false;
			iv = 1ull << (bint - 1);
		} else {
			iv = bint;
		}
		break;
	}
	*us = iv * (b->fast ? 125 : 1000);
	return true;
}

static int endpoint_interval(struct dv_block *b, const struct dv_line *l,
			     uint8_t addr, uint8_t attr, uint8_t *bint,
			     struct imp_error *err)
{
	const char *p = field(l, "Ivl=");
	unsigned long long us, want;
	unsigned long v;
	unsigned int i;

	if (!p || num_at(p, 10, 0xffffffff, &v, &p) ||
	    (p[0] != 'm' && p[0] != 'u') || p[1] != 's')
		return line_err(l, err, "Ivl= missing or not like 8ms or 125us");
	want = p[0] == 'm' ? v * 1000ull : v;
	/* the first bInterval the kernel would print this way */
	for (i = 0; i < 256; i++) {
		if (interval_us(b, attr, addr & 0x80, i, &us) && us == want) {
			*bint = i;
			return 0;
		}
	}
	*bint = 0;
	imp_note(b->d, "%s:%zu: endpoint 0x%02x: no bInterval gives Ivl=%lu%cs at this speed: 0 used",
		 l->path, l->no, addr, v, p[0]);
	return 0;
}

static int endpoint_maxp(struct dv_block *b, const struct dv_line *l,
			 uint8_t addr, uint8_t attr, uint16_t *maxp,
			 struct imp_error *err)
{
	unsigned long v, k;

	if (field_num(l, "MxPS=", 10, 0xffff, &v, err))
		return -EINVAL;
	/* high-speed periodic: size x (1 + additional transactions) */
	if (b->speed != USBIP_SPEED_HIGH || !(attr & 1) || v <= 1024) {
		*maxp = v;
		return 0;
	}
	for (k = 2; k <= 3; k++) {
		if (v % k == 0 && v / k <= 1024) {
			*maxp = (k - 1) << 11 | v / k;
			imp_note(b->d, "%s:%zu: endpoint 0x%02x: MxPS=%lu read as %lu transactions of %lu bytes",
				 l->path, l->no, addr, v, k, v / k);
			return 0;
		}
	}
	return line_err(l, err, "MxPS= too large for a high-speed endpoint");
}

/* ---- the lines ---- */

static int close_interface(struct dv_block *b)
{
	if (!b->if_open)
		return 0;
	b->if_open = false;
	if (b->if_eps_seen != b->if_eps)
		imp_note(b->d, "%s:%zu: interface %u alt %u: #EPs=%u but %u E: lines follow; bNumEndpoints keeps %u",
			 b->path, b->if_line, b->if_num, b->if_alt, b->if_eps,
			 b->if_eps_seen, b->if_eps);
	return 0;
}

static int close_config(struct dv_block *b, const struct dv_line *l,
			struct imp_error *err)
{
	size_t i;

	close_interface(b);
	if (!b->cfg)
		return 0;
	/* an IAD whose first interface never came: keep it, at the end */
	for (i = 0; i < b->n_iads; i++) {
		if (b->iads[i].placed)
			continue;
		imp_note(b->d, "%s: an A: line for interface %u, which the configuration lacks: the IAD is put last",
			 b->d->where, b->iads[i].desc[2]);
		if (put(b, l, b->iads[i].desc, 8, err))
			return -EINVAL;
	}
	if (b->cfg->len > 0xffff)
		return line_err(l, err, "configuration longer than 65535 bytes");
	put16(b->cfg->data + 2, b->cfg->len);
	b->cfg = NULL;
	b->n_iads = 0;
	return 0;
}

static void block_init(struct dv_block *b, const char *path)
{
	memset(b, 0, sizeof(*b));
	b->path = path;
}

static int close_block(struct dv_block *b, const struct dv_line *l,
		       struct imp_error *err)
{
	struct imp_dev *d = b->d;
	static const char *const sname[4] = {
		NULL, "Manufacturer", "Product", "SerialNumber"
	};
	int i;

	if (!d)
		return 0;
	if (close_config(b, l, err))
		return -EINVAL;
	if (b->have_d && b->have_p) {
		for (i = 1; i <= 3; i++)
			b->dev[13 + i] = b->have_s[i] ? i : 0;
		if (imp_blob_put(&d->device, b->dev, 18))
			return line_err(l, err, "out of memory");
		if (b->have_s[1] || b->have_s[2] || b->have_s[3])
			imp_note(d, "%s: the file has no string indexes: %s%s%s%s%s%s as Linux numbers them",
				 d->where,
				 b->have_s[1] ? sname[1] : "",
				 b->have_s[1] && (b->have_s[2] || b->have_s[3]) ? ", " : "",
				 b->have_s[2] ? sname[2] : "",
				 b->have_s[2] && b->have_s[3] ? ", " : "",
				 b->have_s[3] ? sname[3] : "",
				 b->have_s[1] + b->have_s[2] + b->have_s[3] > 1 ?
				 " are given 1, 2, 3" : b->have_s[1] ?
				 " is given 1" : b->have_s[2] ? " is given 2" :
				 " is given 3");
	} else {
		imp_note(d, "%s: no %s line: no device descriptor", d->where,
			 b->have_d ? "P:" : "D:");
	}
	if (d->n_configs) {
		imp_note(d, "%s: configurations rebuilt from C:/A:/I:/E: lines, a skeleton: this format has no class-specific descriptors, no iConfiguration/iInterface (0 here), no extra endpoint bytes%s",
			 d->where, b->fast && b->speed != USBIP_SPEED_HIGH ?
			 " and no SuperSpeed endpoint companions" : "");
	}
	if (b->have_d && b->n_c_lines < b->n_cfgs)
		imp_note(d, "%s: #Cfgs=%u but %zu C: lines", d->where,
			 b->n_cfgs, b->n_c_lines);
	d->driver_known = b->any_active;
	return 0;
}

static int t_line(struct dv_block *b, struct imp_set *set,
		  const struct dv_line *l, struct imp_error *err)
{
	static const struct {
		const char *text;
		enum usbip_speed speed;
	} speeds[] = {
		{ "1.5", USBIP_SPEED_LOW },
		{ "12", USBIP_SPEED_FULL },
		{ "480", USBIP_SPEED_HIGH },
		{ "5000", USBIP_SPEED_SUPER },
		{ "10000", USBIP_SPEED_SUPER },
		{ "20000", USBIP_SPEED_SUPER },
	};
	unsigned long bus, dev;
	char w[300], spd[16];
	const char *p;
	size_t i, n;

	if (close_block(b, l, err))
		return -EINVAL;
	block_init(b, l->path);
	if (field_num(l, "Bus=", 10, 0xffff, &bus, err) ||
	    field_num(l, "Dev#=", 10, 0xffff, &dev, err))
		return -EINVAL;
	snprintf(w, sizeof(w), "%s:%zu", l->path, l->no);
	if (set->n >= IMP_MAX_DEVICES)
		return line_err(l, err, "too many devices in one file");
	b->d = imp_dev_new(set, w);
	if (!b->d)
		return line_err(l, err, "out of memory");
	b->line = l->no;
	b->d->busnum = bus;
	b->d->devnum = dev;
	p = field(l, "Spd=");
	n = p ? strcspn(p, " ") : 0;
	if (n >= sizeof(spd))
		n = 0;
	memcpy(spd, p ? p : "", n);
	spd[n] = 0;
	for (i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (!strcmp(spd, speeds[i].text))
			b->speed = speeds[i].speed;
	if (b->speed == USBIP_SPEED_UNKNOWN)
		imp_note(b->d, "%s: Spd=%s is not a speed this reader knows: unknown",
			 w, spd);
	else if (strcmp(spd, "5000") && b->speed == USBIP_SPEED_SUPER)
		imp_note(b->d, "%s: Spd=%s (SuperSpeed Plus) served as SuperSpeed, the fastest USB/IP has",
			 w, spd);
	b->d->speed = b->speed;
	b->fast = b->speed >= USBIP_SPEED_HIGH;
	return 0;
}

static int d_line(struct dv_block *b, const struct dv_line *l,
		  struct imp_error *err)
{
	unsigned long cls, sub, prot, mps, ncfg;
	uint16_t bcd;

	if (field_bcd(l, "Ver=", &bcd, err) ||
	    field_num(l, "Cls=", 16, 0xff, &cls, err) ||
	    field_num(l, "Sub=", 16, 0xff, &sub, err) ||
	    field_num(l, "Prot=", 16, 0xff, &prot, err) ||
	    field_num(l, "MxPS=", 10, 0xff, &mps, err) ||
	    field_num(l, "#Cfgs=", 10, 0xff, &ncfg, err))
		return -EINVAL;
	b->dev[0] = 18;
	b->dev[1] = USB_DT_DEVICE;
	put16(b->dev + 2, bcd);
	b->dev[4] = cls;
	b->dev[5] = sub;
	b->dev[6] = prot;
	b->dev[7] = mps;
	b->dev[17] = ncfg;
	b->n_cfgs = ncfg;
	b->have_d = true;
	return 0;
}

static int p_line(struct dv_block *b, const struct dv_line *l,
		  struct imp_error *err)
{
	unsigned long vid, pid;
	uint16_t rev;

	if (field_num(l, "Vendor=", 16, 0xffff, &vid, err) ||
	    field_num(l, "ProdID=", 16, 0xffff, &pid, err) ||
	    field_bcd(l, "Rev=", &rev, err))
		return -EINVAL;
	put16(b->dev + 8, vid);
	put16(b->dev + 10, pid);
	put16(b->dev + 12, rev);
	b->have_p = true;
	return 0;
}

static int s_line(struct dv_block *b, const struct dv_line *l,
		  struct imp_error *err)
{
	static const char *const keys[4] = {
		NULL, "Manufacturer=", "Product=", "SerialNumber="
	};
	const char *p = l->rest;
	size_t n;
	int i;

	while (*p == ' ')
		p++;
	for (i = 1; i <= 3; i++) {
		n = strlen(keys[i]);
		if (strncmp(p, keys[i], n))
			continue;
		if (imp_set_string(b->d, i, p + n))
			return line_err(l, err, "out of memory");
		b->have_s[i] = true;
		/* the kernel prints at most 100 characters (%.100s) */
		if (strlen(p + n) >= 100)
			imp_note(b->d, "%s:%zu: %.*s may be cut: the file shows at most 100 characters",
				 l->path, l->no, (int)n - 1, keys[i]);
		return 0;
	}
	return line_err(l, err, "S: line is not Manufacturer=, Product= or SerialNumber=");
}

static int c_line(struct dv_block *b, const struct dv_line *l,
		  struct imp_error *err)
{
	unsigned long nif, value, attr, ma;
	unsigned int unit = b->speed >= USBIP_SPEED_SUPER ? 8 : 2;
	uint8_t h[9];

	if (close_config(b, l, err))
		return -EINVAL;
	b->n_c_lines++;
	if (field_num(l, "#Ifs=", 10, 0xff, &nif, err) ||
	    field_num(l, "Cfg#=", 10, 0xff, &value, err) ||
	    field_num(l, "Atr=", 16, 0xff, &attr, err) ||
	    field_num(l, "MxPwr=", 10, 0xff * 8, &ma, err))
		return -EINVAL;
	if (b->d->n_configs >= GD_MAX_CONFIGS) {
		if (!b->cfg_skip)
			imp_note(b->d, "%s:%zu: configurations after the %dth left out: a gadget has at most %d",
				 l->path, l->no, GD_MAX_CONFIGS,
				 GD_MAX_CONFIGS);
		b->cfg_skip = true;
		return 0;
	}
	if (ma % unit || ma / unit > 0xff)
		imp_note(b->d, "%s:%zu: MxPwr=%lumA is not a multiple of %u mA: bMaxPower %lu",
			 l->path, l->no, ma, unit, ma / unit > 0xff ? 0xff :
			 ma / unit);
	b->cfg = &b->d->configs[b->d->n_configs++];
	b->cfg_active = l->star;
	b->any_active |= l->star;
	h[0] = 9;
	h[1] = USB_DT_CONFIG;
	put16(h + 2, 0);		/* wTotalLength: at the end */
	h[4] = nif;
	h[5] = value;
	h[6] = 0;			/* iConfiguration: not in the file */
	h[7] = attr;
	h[8] = ma / unit > 0xff ? 0xff : ma / unit;
	return put(b, l, h, 9, err);
}

static int a_line(struct dv_block *b, const struct dv_line *l,
		  struct imp_error *err)
{
	unsigned long first, count, cls, sub, prot;
	uint8_t *a;

	if (b->cfg_skip)
		return 0;
	if (!b->cfg)
		return line_err(l, err, "A: line outside a configuration (no C: line before it)");
	if (field_num(l, "FirstIf#=", 10, 0xff, &first, err) ||
	    field_num(l, "IfCount=", 10, 0xff, &count, err) ||
	    field_num(l, "Cls=", 16, 0xff, &cls, err) ||
	    field_num(l, "Sub=", 16, 0xff, &sub, err) ||
	    field_num(l, "Prot=", 16, 0xff, &prot, err))
		return -EINVAL;
	if (b->n_iads >= GD_MAX_IADS)
		return line_err(l, err, "more IADs than a configuration may have");
	a = b->iads[b->n_iads].desc;
	b->iads[b->n_iads++].placed = false;
	a[0] = 8;
	a[1] = USB_DT_IAD;
	a[2] = first;
	a[3] = count;
	a[4] = cls;
	a[5] = sub;
	a[6] = prot;
	a[7] = 0;			/* iFunction: not in the file */
	return 0;
}

static int i_line(struct dv_block *b, const struct dv_line *l,
		  struct imp_error *err)
{
	unsigned long num, alt, eps, cls, sub, prot;
	const char *drv;
	uint8_t h[9];
	size_t i, n;

	if (b->cfg_skip)
		return 0;
	if (!b->cfg)
		return line_err(l, err, "I: line outside a configuration (no C: line before it)");
	close_interface(b);
	if (field_num(l, "If#=", 10, 0xff, &num, err) ||
	    field_num(l, "Alt=", 10, 0xff, &alt, err) ||
	    field_num(l, "#EPs=", 10, 0xff, &eps, err) ||
	    field_num(l, "Cls=", 16, 0xff, &cls, err) ||
	    field_num(l, "Sub=", 16, 0xff, &sub, err) ||
	    field_num(l, "Prot=", 16, 0xff, &prot, err))
		return -EINVAL;
	/* an IAD goes right before the first interface it groups */
	for (i = 0; i < b->n_iads && !alt; i++) {
		if (b->iads[i].placed || b->iads[i].desc[2] != num)
			continue;
		if (put(b, l, b->iads[i].desc, 8, err))
			return -EINVAL;
		b->iads[i].placed = true;
	}
	h[0] = 9;
	h[1] = USB_DT_INTERFACE;
	h[2] = num;
	h[3] = alt;
	h[4] = eps;
	h[5] = cls;
	h[6] = sub;
	h[7] = prot;
	h[8] = 0;			/* iInterface: not in the file */
	if (put(b, l, h, 9, err))
		return -EINVAL;
	b->if_open = true;
	b->if_line = l->no;
	b->if_num = num;
	b->if_alt = alt;
	b->if_eps = eps;
	b->if_eps_seen = 0;

	/* the outcome: only the active configuration's interfaces exist */
	if (l->star && !b->cfg_active) {
		b->cfg_active = true;
		b->any_active = true;
	}
	drv = field(l, "Driver=");
	if (!b->cfg_active || !drv)
		return 0;
	n = strlen(drv);
	while (n && drv[n - 1] == ' ')
		n--;
	if (num >= GD_MAX_INTERFACES) {
		imp_note(b->d, "%s:%zu: interface %lu: its driver is left out (numbers above %d)",
			 l->path, l->no, num, GD_MAX_INTERFACES - 1);
		return 0;
	}
	if (!n || (n == 6 && !strncmp(drv, "(none)", 6)) || b->d->driver[num])
		return 0;
	b->d->driver[num] = strndup(drv, n);
	if (!b->d->driver[num])
		return line_err(l, err, "out of memory");
	return 0;
}

static int e_line(struct dv_block *b, const struct dv_line *l,
		  struct imp_error *err)
{
	unsigned long addr, attr;
	uint16_t maxp = 0;
	uint8_t h[7], bint = 0;

	if (b->cfg_skip)
		return 0;
	if (!b->if_open)
		return line_err(l, err, "E: line outside an interface (no I: line before it)");
	if (field_num(l, "Ad=", 16, 0xff, &addr, err) ||
	    field_num(l, "Atr=", 16, 0xff, &attr, err) ||
	    endpoint_maxp(b, l, addr, attr, &maxp, err) ||
	    endpoint_interval(b, l, addr, attr, &bint, err))
		return -EINVAL;
	h[0] = 7;
	h[1] = USB_DT_ENDPOINT;
	h[2] = addr;
	h[3] = attr;
	put16(h + 4, maxp);
	h[6] = bint;
	b->if_eps_seen++;
	return put(b, l, h, 7, err);
}

/* copies one line into l and finds its tag; false for a blank line */
static int split_line(struct dv_line *l, const char *p, const char *end,
		      struct imp_error *err)
{
	size_t n = end - p, i;

	if (n && p[n - 1] == '\r')
		n--;
	if (n > DV_MAX_LINE)
		return line_err(l, err, "line too long for a devices file");
	for (i = 0; i < n; i++) {
		unsigned char c = p[i];

		if (c != '\t' && (c < 0x20 || c == 0x7f))
			return line_err(l, err, "binary data, not a devices file");
	}
	memcpy(l->text, p, n);
	l->text[n] = 0;
	p = l->text;
	while (*p == ' ' || *p == '\t')
		p++;
	l->tag = 0;
	if (!*p)
		return 0;
	if (!strchr("TBDPSCAIE", p[0]) || p[1] != ':')
		return 1;
	l->tag = p[0];
	l->star = p[2] == '*';
	l->rest = p + 2 + (p[2] == '*');
	return 0;
}

static int devices_read(const char *path, const uint8_t *buf, size_t len,
			struct imp_set *set, struct imp_error *err)
{
	const char *p = (const char *)buf, *end = p + len, *nl, *t;
	struct dv_block *b;
	struct dv_line *l;
	int ret = 0;

	b = malloc(sizeof(*b));
	l = malloc(sizeof(*l));
	if (!b || !l) {
		ret = imp_err(err, "%s: out of memory", path);
		goto out;
	}
	block_init(b, path);
	l->path = path;
	l->no = 0;
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		l->no++;
		ret = split_line(l, p, nl, err);
		if (ret > 0) {
			t = l->text;
			while (*t == ' ' || *t == '\t')
				t++;
			/* the kernel's own remarks when its page ran out */
			if (b->d && (!strcmp(t, "(truncated)") ||
				     !strcmp(t, "(null Cfg. desc.)"))) {
				imp_note(b->d, "%s:%zu: the kernel wrote \"%s\": the block is incomplete",
					 path, l->no, t);
				ret = 0;
				continue;
			}
			ret = line_err(l, err, "not a devices line (T: B: D: P: S: C: A: I: E:)");
		}
		if (ret)
			goto out;
		if (!l->tag)
			continue;
		if (l->tag != 'T' && !b->d) {
			ret = line_err(l, err, "a device line before the first T: line");
			goto out;
		}
		switch (l->tag) {
		case 'T':
			ret = t_line(b, set, l, err);
			break;
		case 'D':
			ret = d_line(b, l, err);
			break;
		case 'P':
			ret = p_line(b, l, err);
			break;
		case 'S':
			ret = s_line(b, l, err);
			break;
		case 'C':
			ret = c_line(b, l, err);
			break;
		case 'A':
			ret = a_line(b, l, err);
			break;
		case 'I':
			ret = i_line(b, l, err);
			break;
		case 'E':
			ret = e_line(b, l, err);
			break;
		default:
			break;		/* B: a root hub's bandwidth */
		}
		if (ret)
			goto out;
	}
	ret = close_block(b, l, err);
out:
	free(b);
	free(l);
	return ret ? -EINVAL : 0;
}

/* the first line with words is a T: line */
static bool devices_sniff(const char *path, const uint8_t *buf, size_t len)
{
	const char *p = (const char *)buf, *end = p + len;
	size_t i;

	(void)path;
	while (p < end && isspace((unsigned char)*p))
		p++;
	if (end - p < 8 || strncmp(p, "T:", 2))
		return false;
	for (i = 2; p + i + 4 <= end && i < 80 && p[i] != '\n'; i++)
		if (!strncmp(p + i, "Bus=", 4))
			return true;
	return false;
}

const struct imp_reader imp_reader_devices = {
	.name = "devices",
	.summary = "/sys/kernel/debug/usb/devices (T: D: P: S: C: I: E: lines; Driver= is the bind outcome)",
	.sniff = devices_sniff,
	.read = devices_read,
};
