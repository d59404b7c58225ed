// SPDX-License-Identifier: GPL-2.0
/*
 * desc.c - descriptor generator: the model (model.h) in, bytes out.
 *
 * One small emitter per descriptor type writes the fields little-endian at
 * a cursor (struct desc_out) and checks the room before every write, so a
 * too small dst gives -ENOSPC and nothing is ever written past dst + len
 * (bytes before that may have been written).  Lengths and counts are
 * computed here; a model *_override >= 0 is emitted verbatim instead (its
 * low 8 or 16 bits, as wide as the field), because a malformed descriptor
 * is how a script reproduces a bind bug.
 *
 * Overridden bLength: the emitter still writes its descriptor's natural
 * size (the standard fields only) and puts the override in bLength.  The
 * host then sees a descriptor that claims to be shorter or longer than it
 * is, while the bytes that follow stay exactly where the model puts them,
 * so the rest of the chain is predictable.  One exception, the endpoint:
 * bLength_override 9 asks for the audio-style 9-byte endpoint (bRefresh and
 * bSynchAddress 0), which is a different natural size, not a lie.
 *
 * Every descriptor or set is at most GD_DESC_MAX bytes (wLength and
 * wTotalLength are 16 bits); a model that would produce more gets
 * -EOVERFLOW.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <linux/usb/ch9.h>

#include "desc.h"

/* USB 2.0 9.6.2; <linux/usb/ch9.h> has the struct but no size macro */
#define DESC_QUALIFIER_SIZE	10
/* USB 2.0 9.6.7: wMaxPacketSize bits 10:0 are the size, 12:11 HS mult */
#define DESC_MPS_SIZE_MASK	0x07ff
/* UTF-16 code units in a string descriptor: (255 - 2) / 2 */
#define DESC_STRING_MAX_UNITS	126

/* the write cursor: dst[0..len) is the caller's, pos never exceeds len */
struct desc_out {
	uint8_t *dst;
	size_t len;
	size_t pos;
};

/* Take n bytes at the cursor: a pointer to them, NULL when they do not fit. */
static uint8_t *out_take(struct desc_out *o, size_t n)
{
	uint8_t *p;

	if (n > o->len - o->pos)
		return NULL;
	p = o->dst + o->pos;
	o->pos += n;
	return p;
}

static int out_blob(struct desc_out *o, const struct gd_blob *b)
{
	uint8_t *p;

	if (!b->len)
		return 0;
	/* a blob without bytes is a model bug, not something to copy from */
	if (!b->data)
		return -EINVAL;
	p = out_take(o, b->len);
	if (!p)
		return -ENOSPC;
	memcpy(p, b->data, b->len);
	return 0;
}

/* The result of a whole descriptor or set: its length as an int. */
static int out_result(const struct desc_out *o, size_t start)
{
	size_t n = o->pos - start;

	return n > GD_DESC_MAX ? -EOVERFLOW : (int)n;
}

static uint8_t blength(int override, uint8_t natural)
{
	return override >= 0 ? (uint8_t)override : natural;
}

static bool is_super(const struct gd_device *dev)
{
	return dev->speed >= USBIP_SPEED_SUPER;
}

static bool has_other_speed(const struct gd_device *dev)
{
	return dev->speed == USBIP_SPEED_HIGH && dev->qualifier;
}

static uint8_t num_configurations(const struct gd_device *dev)
{
	if (dev->bNumConfigurations_override >= 0)
		return (uint8_t)dev->bNumConfigurations_override;
	return (uint8_t)dev->n_configs;
}

static void bit_set(uint8_t *map, uint8_t bit)
{
	map[bit / 8] |= 1u << (bit % 8);
}

static bool bit_test(const uint8_t *map, uint8_t bit)
{
	return map[bit / 8] & (1u << (bit % 8));
}

/* ---- device (USB 2.0 9.6.1) ---- */
static int emit_device(struct desc_out *o, const struct gd_device *dev)
{
	uint8_t *p = out_take(o, USB_DT_DEVICE_SIZE);

	if (!p)
		return -ENOSPC;
	p[0] = blength(dev->bLength_override, USB_DT_DEVICE_SIZE);
	p[1] = USB_DT_DEVICE;
	put_le16(p + 2, dev->bcdUSB);
	p[4] = dev->bDeviceClass;
	p[5] = dev->bDeviceSubClass;
	p[6] = dev->bDeviceProtocol;
	p[7] = dev->bMaxPacketSize0;
	put_le16(p + 8, dev->idVendor);
	put_le16(p + 10, dev->idProduct);
	put_le16(p + 12, dev->bcdDevice);
	p[14] = dev->iManufacturer;
	p[15] = dev->iProduct;
	p[16] = dev->iSerialNumber;
	p[17] = num_configurations(dev);
	return 0;
}

/* ---- interface association (USB 2.0 IAD ECN) ---- */
static int emit_iad(struct desc_out *o, const struct gd_iad *iad)
{
	uint8_t *p = out_take(o, USB_DT_INTERFACE_ASSOCIATION_SIZE);

	if (!p)
		return -ENOSPC;
	p[0] = blength(iad->bLength_override,
		       USB_DT_INTERFACE_ASSOCIATION_SIZE);
	p[1] = USB_DT_INTERFACE_ASSOCIATION;
	p[2] = iad->bFirstInterface;
	p[3] = iad->bInterfaceCount;
	p[4] = iad->bFunctionClass;
	p[5] = iad->bFunctionSubClass;
	p[6] = iad->bFunctionProtocol;
	p[7] = iad->iFunction;
	return 0;
}

/* ---- interface (USB 2.0 9.6.5) ---- */
static int emit_interface(struct desc_out *o, const struct gd_alt *alt)
{
	uint8_t *p = out_take(o, USB_DT_INTERFACE_SIZE);

	if (!p)
		return -ENOSPC;
	p[0] = blength(alt->bLength_override, USB_DT_INTERFACE_SIZE);
	p[1] = USB_DT_INTERFACE;
	p[2] = alt->bInterfaceNumber;
	p[3] = alt->bAlternateSetting;
	p[4] = alt->bNumEndpoints_override >= 0 ?
	       (uint8_t)alt->bNumEndpoints_override : (uint8_t)alt->n_eps;
	p[5] = alt->bInterfaceClass;
	p[6] = alt->bInterfaceSubClass;
	p[7] = alt->bInterfaceProtocol;
	p[8] = alt->iInterface;
	return 0;
}

/*
 * A high-speed endpoint as the same device shows it at full speed (the
 * other-speed configuration, USB 2.0 9.6.4 and 5.6-5.8):
 * - bulk: wMaxPacketSize 64, the only full-speed bulk size worth offering;
 * - interrupt: min(64, size); bInterval from the high-speed exponent
 *   (2^(b-1) microframes) to full-speed frames, 2^(b-1) / 8 rounded down,
 *   at least 1 and at most 255 (bInterval 0 or > 16 is treated as 1 or 16);
 * - isochronous: min(1023, size); bInterval stays an exponent, in frames
 *   instead of microframes: b - 3, at least 1;
 * - control: min(64, size); bInterval unchanged.
 * The high-bandwidth bits 12:11 are dropped: full speed has none.
 */
static void ep_full_speed(const struct gd_endpoint *ep, uint16_t *mps,
			  uint8_t *interval)
{
	uint16_t size = ep->wMaxPacketSize & DESC_MPS_SIZE_MASK;
	unsigned int b = ep->bInterval;

	*interval = ep->bInterval;
	switch (ep->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK) {
	case USB_ENDPOINT_XFER_BULK:
		*mps = 64;
		break;
	case USB_ENDPOINT_XFER_INT:
		*mps = size < 64 ? size : 64;
		if (b < 1)
			b = 1;
		if (b > 16)
			b = 16;
		b = (1u << (b - 1)) / 8;
		*interval = b < 1 ? 1 : b > 255 ? 255 : b;
		break;
	case USB_ENDPOINT_XFER_ISOC:
		*mps = size < 1023 ? size : 1023;
		*interval = b > 4 ? b - 3 : 1;
		break;
	default:
		*mps = size < 64 ? size : 64;
		break;
	}
}

/* ---- SuperSpeed endpoint companion (USB 3.2 9.6.7) ---- */
static int emit_ss_companion(struct desc_out *o,
			     const struct gd_ss_companion *ss)
{
	uint8_t *p = out_take(o, USB_DT_SS_EP_COMP_SIZE);

	if (!p)
		return -ENOSPC;
	p[0] = blength(ss->bLength_override, USB_DT_SS_EP_COMP_SIZE);
	p[1] = USB_DT_SS_ENDPOINT_COMP;
	p[2] = ss->bMaxBurst;
	p[3] = ss->bmAttributes;
	put_le16(p + 4, ss->wBytesPerInterval);
	return 0;
}

/* ---- endpoint (USB 2.0 9.6.6), then its companion and extra ---- */
static int emit_endpoint(struct desc_out *o, const struct gd_device *dev,
			 const struct gd_endpoint *ep, bool full_speed_view)
{
	uint8_t size = ep->bLength_override == USB_DT_ENDPOINT_AUDIO_SIZE ?
		       USB_DT_ENDPOINT_AUDIO_SIZE : USB_DT_ENDPOINT_SIZE;
	uint16_t mps = ep->wMaxPacketSize;
	uint8_t interval = ep->bInterval;
	uint8_t *p = out_take(o, size);
	int ret;

	if (!p)
		return -ENOSPC;
	if (full_speed_view)
		ep_full_speed(ep, &mps, &interval);
	p[0] = blength(ep->bLength_override, USB_DT_ENDPOINT_SIZE);
	p[1] = USB_DT_ENDPOINT;
	p[2] = ep->bEndpointAddress;
	p[3] = ep->bmAttributes;
	put_le16(p + 4, mps);
	p[6] = interval;
	if (size == USB_DT_ENDPOINT_AUDIO_SIZE) {
		p[7] = 0;	/* bRefresh */
		p[8] = 0;	/* bSynchAddress */
	}
	/* companions exist only at super speed (USB 3.2 9.6.7) */
	if (ep->ss.present && is_super(dev) && !full_speed_view) {
		ret = emit_ss_companion(o, &ep->ss);
		if (ret)
			return ret;
	}
	return out_blob(o, &ep->extra);
}

/*
 * ---- configuration (USB 2.0 9.6.3) and everything it returns ----
 * Order: config, config.extra, then per interface descriptor in model
 * order: the IADs whose bFirstInterface is its number when it is the first
 * descriptor with that number, the interface, alt.extra, then per endpoint:
 * endpoint, SS companion, endpoint.extra.  IADs naming an interface that
 * does not exist come last, so a script's dangling IAD still reaches the
 * host instead of vanishing.
 */
static int emit_config(struct desc_out *o, const struct gd_device *dev,
		       const struct gd_config *cfg, uint8_t type,
		       bool full_speed_view)
{
	uint8_t seen[32] = { 0 };
	size_t start = o->pos;
	size_t i, j, k;
	uint8_t *h;
	int ret;

	h = out_take(o, USB_DT_CONFIG_SIZE);
	if (!h)
		return -ENOSPC;
	h[0] = blength(cfg->bLength_override, USB_DT_CONFIG_SIZE);
	h[1] = type;
	put_le16(h + 2, 0);	/* wTotalLength: known at the end */
	/* distinct bInterfaceNumber values: alternate settings share one */
	h[4] = cfg->bNumInterfaces_override >= 0 ?
	       (uint8_t)cfg->bNumInterfaces_override :
	       (uint8_t)gd_config_num_interfaces(cfg);
	h[5] = cfg->bConfigurationValue;
	h[6] = cfg->iConfiguration;
	h[7] = cfg->bmAttributes;
	h[8] = cfg->bMaxPower;

	ret = out_blob(o, &cfg->extra);
	if (ret)
		return ret;

	for (i = 0; i < cfg->n_alts; i++) {
		const struct gd_alt *alt = &cfg->alts[i];

		if (!bit_test(seen, alt->bInterfaceNumber)) {
			bit_set(seen, alt->bInterfaceNumber);
			for (j = 0; j < cfg->n_iads; j++) {
				if (cfg->iads[j].bFirstInterface !=
				    alt->bInterfaceNumber)
					continue;
				ret = emit_iad(o, &cfg->iads[j]);
				if (ret)
					return ret;
			}
		}
		ret = emit_interface(o, alt);
		if (ret)
			return ret;
		ret = out_blob(o, &alt->extra);
		if (ret)
			return ret;
		for (k = 0; k < alt->n_eps; k++) {
			ret = emit_endpoint(o, dev, &alt->eps[k],
					    full_speed_view);
			if (ret)
				return ret;
		}
	}

	for (j = 0; j < cfg->n_iads; j++) {
		if (bit_test(seen, cfg->iads[j].bFirstInterface))
			continue;
		ret = emit_iad(o, &cfg->iads[j]);
		if (ret)
			return ret;
	}

	ret = out_result(o, start);
	if (ret < 0)
		return ret;
	put_le16(h + 2, cfg->wTotalLength_override >= 0 ?
		 (uint16_t)cfg->wTotalLength_override : (uint16_t)ret);
	return ret;
}

/* ---- device qualifier (USB 2.0 9.6.2) ---- */
static int emit_qualifier(struct desc_out *o, const struct gd_device *dev)
{
	uint8_t *p = out_take(o, DESC_QUALIFIER_SIZE);

	if (!p)
		return -ENOSPC;
	p[0] = DESC_QUALIFIER_SIZE;
	p[1] = USB_DT_DEVICE_QUALIFIER;
	put_le16(p + 2, dev->bcdUSB);
	p[4] = dev->bDeviceClass;
	p[5] = dev->bDeviceSubClass;
	p[6] = dev->bDeviceProtocol;
	p[7] = 64;	/* ep0 at full speed */
	/* other-speed configurations: the same ones, override included */
	p[8] = num_configurations(dev);
	p[9] = 0;	/* bReserved */
	return 0;
}

/* ---- BOS (USB 3.2 9.6.2) and the generated capabilities ---- */
static int emit_usb2_ext_cap(struct desc_out *o, const struct gd_device *dev)
{
	uint8_t *p = out_take(o, USB_DT_USB_EXT_CAP_SIZE);
	uint32_t attr = dev->bcdUSB >= 0x0201 ? USB_LPM_SUPPORT : 0;

	if (!p)
		return -ENOSPC;
	p[0] = USB_DT_USB_EXT_CAP_SIZE;
	p[1] = USB_DT_DEVICE_CAPABILITY;
	p[2] = USB_CAP_TYPE_EXT;
	put_le16(p + 3, attr & 0xffff);	/* bmAttributes, 32 bits */
	put_le16(p + 5, attr >> 16);
	return 0;
}

/*
 * SuperSpeed USB device capability with values any host accepts: no LTM,
 * full/high/5 Gbps supported, fully functional from full speed, U1 exit
 * 10 us and U2 exit 2047 us (the largest each field allows, so the host
 * never schedules a wake-up we could not meet; we never enter U1/U2).
 */
static int emit_ss_cap(struct desc_out *o)
{
	uint8_t *p = out_take(o, USB_DT_USB_SS_CAP_SIZE);

	if (!p)
		return -ENOSPC;
	p[0] = USB_DT_USB_SS_CAP_SIZE;
	p[1] = USB_DT_DEVICE_CAPABILITY;
	p[2] = USB_SS_CAP_TYPE;
	p[3] = 0;	/* bmAttributes: no LTM */
	put_le16(p + 4, USB_FULL_SPEED_OPERATION | USB_HIGH_SPEED_OPERATION |
		 USB_5GBPS_OPERATION);
	p[6] = 1;	/* bFunctionalitySupport: full speed */
	p[7] = 10;	/* bU1devExitLat, us */
	put_le16(p + 8, 0x07ff);	/* bU2DevExitLat, us */
	return 0;
}

/* descriptors in a raw run, by its bLength chain, up to the first break */
static unsigned int count_chain(const struct gd_blob *b)
{
	unsigned int n = 0;
	size_t pos = 0;

	if (!b->data)
		return 0;
	while (pos < b->len) {
		uint8_t l = b->data[pos];

		if (!l || l > b->len - pos)
			break;
		pos += l;
		n++;
	}
	return n;
}

static int emit_bos(struct desc_out *o, const struct gd_device *dev)
{
	const struct gd_bos *bos = &dev->bos;
	size_t start = o->pos;
	unsigned int ncaps = 0;
	uint8_t *h;
	int ret;

	h = out_take(o, USB_DT_BOS_SIZE);
	if (!h)
		return -ENOSPC;
	h[0] = bos->bLength_override >= 0 ?
	       (uint8_t)bos->bLength_override : USB_DT_BOS_SIZE;
	h[1] = bos->bDescriptorType_override >= 0 ?
	       (uint8_t)bos->bDescriptorType_override : USB_DT_BOS;
	put_le16(h + 2, 0);	/* wTotalLength: known at the end */
	if (bos->generated_caps) {
		ret = emit_usb2_ext_cap(o, dev);
		if (ret)
			return ret;
		ncaps++;
		if (is_super(dev)) {
			ret = emit_ss_cap(o);
			if (ret)
				return ret;
			ncaps++;
		}
	}
	ret = out_blob(o, &bos->extra);
	if (ret)
		return ret;
	ncaps += count_chain(&bos->extra);

	ret = out_result(o, start);
	if (ret < 0)
		return ret;
	put_le16(h + 2, bos->wTotalLength_override >= 0 ?
		 (uint16_t)bos->wTotalLength_override : (uint16_t)ret);
	h[4] = bos->bNumDeviceCaps_override >= 0 ?
	       (uint8_t)bos->bNumDeviceCaps_override : (uint8_t)ncaps;
	return ret;
}

/* ---- strings (USB 2.0 9.6.7) ---- */

/*
 * Decode one UTF-8 sequence from s[0..n), n >= 1: the bytes consumed and
 * the code point in *cp.  An ill-formed sequence (overlong, surrogate,
 * beyond U+10FFFF, truncated, stray continuation) becomes one U+FFFD for
 * its maximal well-formed prefix (Unicode 15.0, 3.9 "U+FFFD Substitution of
 * Maximal Subparts"), so each bad spot costs one replacement character;
 * *bad (when given) is then set.
 */
static size_t utf8_next(const uint8_t *s, size_t n, uint32_t *cp, bool *bad)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;
	uint32_t v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		if (c == 0xed)
			hi = 0x9f;	/* UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		if (c == 0xf4)
			hi = 0x8f;	/* beyond U+10FFFF */
	} else {
		*cp = 0xfffd;
		if (bad)
			*bad = true;
		return 1;
	}
	for (i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*cp = 0xfffd;
			if (bad)
				*bad = true;
			return i;
		}
		v = v << 6 | (s[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = v;
	return need + 1;
}

long desc_utf16_units(const char *str, size_t n)
{
	const uint8_t *s = (const uint8_t *)str;
	size_t pos = 0;
	bool bad = false;
	long units = 0;
	uint32_t cp;

	while (pos < n) {
		pos += utf8_next(s + pos, n - pos, &cp, &bad);
		units += cp >= 0x10000 ? 2 : 1;
	}
	return bad ? -1 : units;
}

/* A UTF-8 string as a string descriptor, cut at 126 UTF-16 units (bLength
 * is 8 bits) without splitting a surrogate pair. */
static int emit_utf16_string(struct desc_out *o, const char *str)
{
	const uint8_t *s = (const uint8_t *)str;
	size_t n = strlen(str), pos = 0;
	unsigned int units = 0;
	uint8_t *h, *p;
	uint32_t cp;

	h = out_take(o, 2);
	if (!h)
		return -ENOSPC;
	while (pos < n) {
		pos += utf8_next(s + pos, n - pos, &cp, NULL);
		if (cp < 0x10000) {
			if (units + 1 > DESC_STRING_MAX_UNITS)
				break;
			p = out_take(o, 2);
			if (!p)
				return -ENOSPC;
			put_le16(p, cp);
			units++;
		} else {
			if (units + 2 > DESC_STRING_MAX_UNITS)
				break;
			p = out_take(o, 4);
			if (!p)
				return -ENOSPC;
			cp -= 0x10000;
			put_le16(p, 0xd800 | cp >> 10);
			put_le16(p + 2, 0xdc00 | (cp & 0x3ff));
			units += 2;
		}
	}
	h[0] = 2 + 2 * units;
	h[1] = USB_DT_STRING;
	return 0;
}

static int emit_langids(struct desc_out *o, const struct gd_device *dev)
{
	size_t n = dev->n_langids, i;
	uint8_t *p;

	if (n > GD_MAX_LANGIDS)	/* the array's size, whatever the count says */
		n = GD_MAX_LANGIDS;
	p = out_take(o, 2 + 2 * n);
	if (!p)
		return -ENOSPC;
	p[0] = 2 + 2 * n;
	p[1] = USB_DT_STRING;
	for (i = 0; i < n; i++)
		put_le16(p + 2 + 2 * i, dev->langids[i]);
	return 0;
}

/* ---- public API: desc.h ---- */

int desc_device(const struct gd_device *dev, uint8_t *dst, size_t len)
{
	struct desc_out o = { dst, len, 0 };
	int ret = emit_device(&o, dev);

	return ret ? ret : out_result(&o, 0);
}

int desc_config(const struct gd_device *dev, size_t idx, uint8_t type,
		uint8_t *dst, size_t len)
{
	struct desc_out o = { dst, len, 0 };

	if (type != USB_DT_CONFIG && type != USB_DT_OTHER_SPEED_CONFIG)
		return -EINVAL;
	if (idx >= dev->n_configs)
		return -ENOENT;
	if (type == USB_DT_OTHER_SPEED_CONFIG && !has_other_speed(dev))
		return -ENOENT;
	return emit_config(&o, dev, &dev->configs[idx], type,
			   type == USB_DT_OTHER_SPEED_CONFIG);
}

/* string_raw[i] wins over strings[i] (index 0 included); n_langids == 0
 * means the device has no string descriptors at all. */
int desc_string(const struct gd_device *dev, uint8_t index, uint8_t *dst,
		size_t len)
{
	struct desc_out o = { dst, len, 0 };
	int ret;

	if (!dev->n_langids)
		return -ENOENT;
	if (dev->string_raw[index].len)
		ret = out_blob(&o, &dev->string_raw[index]);
	else if (!index)
		ret = emit_langids(&o, dev);
	else if (dev->strings[index])
		ret = emit_utf16_string(&o, dev->strings[index]);
	else
		return -ENOENT;
	return ret ? ret : out_result(&o, 0);
}

int desc_qualifier(const struct gd_device *dev, uint8_t *dst, size_t len)
{
	struct desc_out o = { dst, len, 0 };
	int ret;

	if (!has_other_speed(dev))
		return -ENOENT;
	ret = emit_qualifier(&o, dev);
	return ret ? ret : out_result(&o, 0);
}

int desc_bos(const struct gd_device *dev, uint8_t *dst, size_t len)
{
	struct desc_out o = { dst, len, 0 };

	if (!dev->bos.present)
		return -ENOENT;
	return emit_bos(&o, dev);
}

int desc_check_chain(const uint8_t *buf, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		uint8_t l = buf[pos];

		/* a descriptor holds at least bLength and bDescriptorType
		 * (USB 2.0 9.5); usbcore rejects less the same way */
		if (l < 2 || l > len - pos)
			return -EINVAL;
		pos += l;
	}
	return 0;
}

/* ---- desc_dump: one hex line per descriptor set, '#' lines decode ---- */

static const char *speed_name(enum usbip_speed speed)
{
	switch (speed) {
	case USBIP_SPEED_LOW:
		return "low";
	case USBIP_SPEED_FULL:
		return "full";
	case USBIP_SPEED_HIGH:
		return "high";
	case USBIP_SPEED_WIRELESS:
		return "wireless";
	case USBIP_SPEED_SUPER:
		return "super";
	default:
		return "unknown";
	}
}

static void dump_hex(FILE *out, const char *label, const uint8_t *b, size_t n)
{
	size_t i;

	fprintf(out, "%s:", label);
	for (i = 0; i < n; i++)
		fprintf(out, " %02x", b[i]);
	fputc('\n', out);
}

static const char *xfer_name(uint8_t attr)
{
	static const char *const names[] = { "control", "isoc", "bulk", "int" };

	return names[attr & USB_ENDPOINT_XFERTYPE_MASK];
}

/* Decode one descriptor p[0..n) that the chain walk found whole. */
static void dump_decode_one(FILE *out, const uint8_t *p, size_t n)
{
	switch (p[1]) {
	case USB_DT_CONFIG:
	case USB_DT_OTHER_SPEED_CONFIG:
		if (n < USB_DT_CONFIG_SIZE)
			break;
		fprintf(out, "wTotalLength %u bNumInterfaces %u bConfigurationValue %u iConfiguration %u bmAttributes %02x bMaxPower %u\n",
			get_le16(p + 2), p[4], p[5], p[6], p[7], p[8]);
		return;
	case USB_DT_INTERFACE_ASSOCIATION:
		if (n < USB_DT_INTERFACE_ASSOCIATION_SIZE)
			break;
		fprintf(out, "iad: bFirstInterface %u bInterfaceCount %u function %02x/%02x/%02x iFunction %u\n",
			p[2], p[3], p[4], p[5], p[6], p[7]);
		return;
	case USB_DT_INTERFACE:
		if (n < USB_DT_INTERFACE_SIZE)
			break;
		fprintf(out, "interface %u alt %u: bNumEndpoints %u class %02x/%02x/%02x iInterface %u\n",
			p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
		return;
	case USB_DT_ENDPOINT:
		if (n < USB_DT_ENDPOINT_SIZE)
			break;
		fprintf(out, "endpoint %02x %s %s: wMaxPacketSize %u",
			p[2], p[2] & USB_DIR_IN ? "in" : "out",
			xfer_name(p[3]), get_le16(p + 4) & DESC_MPS_SIZE_MASK);
		if (get_le16(p + 4) >> 11)	/* high-bandwidth / reserved */
			fprintf(out, " x%u", (get_le16(p + 4) >> 11) + 1);
		fprintf(out, " bInterval %u\n", p[6]);
		return;
	case USB_DT_SS_ENDPOINT_COMP:
		if (n < USB_DT_SS_EP_COMP_SIZE)
			break;
		fprintf(out, "ss companion: bMaxBurst %u bmAttributes %02x wBytesPerInterval %u\n",
			p[2], p[3], get_le16(p + 4));
		return;
	case USB_DT_BOS:
		if (n < USB_DT_BOS_SIZE)
			break;
		fprintf(out, "wTotalLength %u bNumDeviceCaps %u\n",
			get_le16(p + 2), p[4]);
		return;
	case USB_DT_DEVICE_CAPABILITY:
		if (n < 3)
			break;
		fprintf(out, "capability %02x%s: %zu bytes\n", p[2],
			p[2] == USB_CAP_TYPE_EXT ? " (usb 2.0 extension)" :
			p[2] == USB_SS_CAP_TYPE ? " (superspeed)" : "", n);
		return;
	}
	fprintf(out, "descriptor type %02x: %zu bytes\n", p[1], n);
}

/* '#' lines for a descriptor set, walked by bLength as the host does. */
static void dump_decode_chain(FILE *out, const char *label, const uint8_t *b,
			      size_t n)
{
	size_t pos = 0;

	while (pos < n) {
		uint8_t l = b[pos];

		if (pos)
			fputs("#   ", out);
		else
			fprintf(out, "# %s: ", label);
		if (l < 2 || l > n - pos) {
			fprintf(out, "bLength %u at offset %zu breaks the chain (%zu bytes left)\n",
				l, pos, n - pos);
			return;
		}
		dump_decode_one(out, b + pos, l);
		pos += l;
	}
}

static void dump_decode_device(FILE *out, const uint8_t *p, size_t n)
{
	if (n < USB_DT_DEVICE_SIZE)
		return;
	fprintf(out, "# device: bLength %u bcdUSB %04x class %02x/%02x/%02x bMaxPacketSize0 %u idVendor %04x idProduct %04x bcdDevice %04x iManufacturer %u iProduct %u iSerialNumber %u bNumConfigurations %u\n",
		p[0], get_le16(p + 2), p[4], p[5], p[6], p[7],
		get_le16(p + 8), get_le16(p + 10), get_le16(p + 12),
		p[14], p[15], p[16], p[17]);
}

static void dump_decode_qualifier(FILE *out, const uint8_t *p, size_t n)
{
	if (n < DESC_QUALIFIER_SIZE)
		return;
	fprintf(out, "# qualifier: bcdUSB %04x class %02x/%02x/%02x bMaxPacketSize0 %u bNumConfigurations %u\n",
		get_le16(p + 2), p[4], p[5], p[6], p[7], p[8]);
}

/* The string as text: printable ASCII as is, the rest as \uXXXX. */
static void dump_decode_string(FILE *out, uint8_t index, const uint8_t *p,
			       size_t n)
{
	size_t i;

	fprintf(out, "# string %u: ", index);
	if (n < 2 || p[1] != USB_DT_STRING) {
		fprintf(out, "raw, %zu bytes\n", n);
		return;
	}
	if (!index) {
		fputs("langids", out);
		for (i = 2; i + 1 < n; i += 2)
			fprintf(out, " %04x", get_le16(p + i));
		fputc('\n', out);
		return;
	}
	fputc('"', out);
	for (i = 2; i + 1 < n; i += 2) {
		uint16_t u = get_le16(p + i);

		if (u >= 0x20 && u < 0x7f && u != '"' && u != '\\')
			fputc(u, out);
		else
			fprintf(out, "\\u%04x", u);
	}
	fputs("\"\n", out);
}

/*
 * A failure to generate one descriptor is reported in a '#' line and the
 * dump goes on with the others; the first such error is returned.
 */
static void dump_error(FILE *out, const char *label, int err, int *first)
{
	fprintf(out, "# %s: cannot generate: %s\n", label, strerror(-err));
	if (!*first)
		*first = err;
}

int desc_dump(const struct gd_device *dev, FILE *out)
{
	char label[48];
	uint8_t *buf;
	int first = 0, n;
	size_t i;

	buf = malloc(GD_DESC_MAX);
	if (!buf)
		return -ENOMEM;

	fprintf(out, "# %s: %04x:%04x %s\n", dev->name ? dev->name : "gadget",
		dev->idVendor, dev->idProduct, speed_name(dev->speed));

	n = desc_device(dev, buf, GD_DESC_MAX);
	if (n >= 0) {
		dump_decode_device(out, buf, n);
		dump_hex(out, "device", buf, n);
	} else {
		dump_error(out, "device", n, &first);
	}

	for (i = 0; i < dev->n_configs; i++) {
		snprintf(label, sizeof(label), "config %zu", i);
		n = desc_config(dev, i, USB_DT_CONFIG, buf, GD_DESC_MAX);
		if (n < 0) {
			dump_error(out, label, n, &first);
			continue;
		}
		dump_decode_chain(out, label, buf, n);
		dump_hex(out, label, buf, n);
	}

	for (i = 0; has_other_speed(dev) && i < dev->n_configs; i++) {
		snprintf(label, sizeof(label), "other-speed-config %zu", i);
		n = desc_config(dev, i, USB_DT_OTHER_SPEED_CONFIG, buf,
				GD_DESC_MAX);
		if (n < 0) {
			dump_error(out, label, n, &first);
			continue;
		}
		dump_decode_chain(out, label, buf, n);
		dump_hex(out, label, buf, n);
	}

	n = desc_qualifier(dev, buf, GD_DESC_MAX);
	if (n >= 0) {
		dump_decode_qualifier(out, buf, n);
		dump_hex(out, "qualifier", buf, n);
	} else if (n != -ENOENT) {
		dump_error(out, "qualifier", n, &first);
	}

	n = desc_bos(dev, buf, GD_DESC_MAX);
	if (n >= 0) {
		dump_decode_chain(out, "bos", buf, n);
		dump_hex(out, "bos", buf, n);
	} else if (n != -ENOENT) {
		dump_error(out, "bos", n, &first);
	}

	for (i = 0; i < 256; i++) {
		snprintf(label, sizeof(label), "string %zu", i);
		n = desc_string(dev, i, buf, GD_DESC_MAX);
		if (n == -ENOENT)
			continue;
		if (n < 0) {
			dump_error(out, label, n, &first);
			continue;
		}
		dump_decode_string(out, i, buf, n);
		dump_hex(out, label, buf, n);
	}

	free(buf);
	if (ferror(out))
		return -EIO;
	return first;
}
