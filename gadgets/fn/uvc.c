// SPDX-License-Identifier: GPL-2.0
/*
 * fn/uvc.c - the uvc device function: a USB Video Class 1.0/1.1 camera
 * (interface class 0x0e) that streams an uncompressed YUY2 test pattern
 * (uvc_pattern.h), over a bulk endpoint or over isochronous alternate
 * settings.  uvcvideo binds it by its class and makes /dev/videoN.
 *
 * The descriptors are the script's (`raw` class-specific descriptors);
 * the function reads them at load: the VideoControl header (bcdUVC,
 * dwClockFrequency, baInterfaceNr), the ids of its terminals and units,
 * and on the VideoStreaming interface's alternate setting 0 the input
 * header (bEndpointAddress), one uncompressed YUY2 format and its frame
 * descriptors (sizes and frame intervals).  The streaming endpoint is a
 * bulk IN in alternate setting 0, or, when alternate setting 0 has none,
 * an isochronous IN in each of alternate settings 1.. (UVC 1.1 2.4.3).
 *
 * Requests (UVC 1.1 4.2, 4.3), class, to an interface, wIndex = entity id
 * << 8 | interface, wValue = control selector << 8:
 *  - VideoStreaming, entity 0, VS_PROBE_CONTROL (1): SET_CUR, GET_CUR,
 *    GET_MIN, GET_MAX, GET_RES, GET_DEF, GET_LEN, GET_INFO;
 *    VS_COMMIT_CONTROL (2): SET_CUR, GET_CUR, GET_LEN, GET_INFO (the
 *    others STALL, as 4.3.1.1 lists none).  26 bytes for UVC 1.0, 34 for
 *    1.1 (bcdUVC); a SET_CUR of at least 26 bytes is taken.  What the host
 *    sets is negotiated (4.3.1.1.1): the format is the one there is, a
 *    frame index that does not exist becomes the default frame, the frame
 *    interval the nearest the frame supports (0: its default); the device
 *    fills in dwMaxVideoFrameSize (2 x W x H), dwMaxPayloadTransferSize,
 *    dwClockFrequency and (1.1) bmFramingInfo = FID | EOF.  GET_MIN and
 *    GET_MAX answer the current frame with its shortest and longest
 *    interval.  A commit starts the stream (bulk); the next frame begins
 *    with a new FID.
 *  - VideoControl, entity 0, VC_REQUEST_ERROR_CODE_CONTROL (2): GET_CUR
 *    (bRequestErrorCode of the last request, 4.2.1.2), GET_INFO.
 *  - anything else to either interface STALLs, and sets the error code:
 *    5 for an entity that is not there, 6 for a control the entity does
 *    not have (the terminals declare none: bmControls is zero), 7 for a
 *    request the control does not take.  uvcvideo asks it after a STALL.
 *
 * Payloads (UVC 1.1 2.4.3.3): a header of `header` bytes (2, or 12 with
 * PTS and SCR in dwClockFrequency ticks of the stream's clock), bit FID
 * toggling from frame to frame, EOF on the last payload of a frame, then
 * frame bytes.  Frames are paced at the committed frame interval.
 *  - bulk: a payload is at most dwMaxPayloadTransferSize bytes and may
 *    span IN URBs; an URB carries bytes of one payload only, so the host
 *    sees a payload end at a short URB or at dwMaxPayloadTransferSize
 *    bytes (uvcvideo's rule); a shorter payload that fills its last URB
 *    exactly is followed by a zero-length one.  IN URBs wait (NAK) for a
 *    commit and between frames.
 *  - isochronous: every packet is a payload of its own, at most the
 *    endpoint's bytes per interval; packets between frames carry a header
 *    alone.  A frame may begin a frame interval (counted in packets) after
 *    the previous one began.  The URB completes at the bus's pace
 *    (gdev_iso_complete()).
 *
 * dwMaxPayloadTransferSize is `payload-size`, else for bulk the whole
 * frame and its header, for isochronous what a packet must carry for the
 * frame to fit in its interval, at most the largest packet an alternate
 * setting has: uvcvideo picks the smallest alternate setting with room.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <linux/usb/ch9.h>

#include "function.h"
#include "log.h"
#include "stream.h"
#include "uvc_pattern.h"

#define UVC_CLASS_VIDEO		0x0e
#define UVC_SC_CONTROL		0x01
#define UVC_SC_STREAMING	0x02

/* descriptor subtypes (UVC 1.1 A.5, A.6) */
#define UVC_CS_INTERFACE	0x24
#define UVC_VC_HEADER		0x01
#define UVC_VC_LAST_ENTITY	0x06	/* IT, OT, SU, PU, XU: 0x02..0x06 */
#define UVC_VS_INPUT_HEADER	0x01
#define UVC_VS_FORMAT_UNCOMP	0x04
#define UVC_VS_FRAME_UNCOMP	0x05

/* requests (A.8), control selectors (A.9.1, A.9.7) */
#define UVC_SET_CUR		0x01
#define UVC_GET_CUR		0x81
#define UVC_GET_MIN		0x82
#define UVC_GET_MAX		0x83
#define UVC_GET_RES		0x84
#define UVC_GET_LEN		0x85
#define UVC_GET_INFO		0x86
#define UVC_GET_DEF		0x87
#define UVC_VC_ERROR_CODE	0x02
#define UVC_VS_PROBE		0x01
#define UVC_VS_COMMIT		0x02

/* bRequestErrorCode (4.2.1.2) */
#define UVC_ERR_NONE		0x00
#define UVC_ERR_UNIT		0x05
#define UVC_ERR_CONTROL		0x06
#define UVC_ERR_REQUEST		0x07

/* GET_INFO bits (4.1.2): GET and SET supported */
#define UVC_INFO_GET		0x01
#define UVC_INFO_SET		0x02

/* payload header bmHeaderInfo (2.4.3.3) */
#define UVC_BFH_FID		0x01
#define UVC_BFH_EOF		0x02
#define UVC_BFH_PTS		0x04
#define UVC_BFH_SCR		0x08
#define UVC_BFH_EOH		0x80

/* bmFramingInfo (1.1): FID required, EOF may be present */
#define UVC_FRAMING		0x03

#define UVC_PROBE_LEN_10	26
#define UVC_PROBE_LEN_11	34
#define UVC_MAX_FRAMES		8
#define UVC_MAX_INTERVALS	16
#define UVC_FRAME_MAX		(16u << 20)	/* bytes of one frame */
#define UVC_HDR_MAX		12

static const uint8_t guid_yuy2[16] = {
	'Y', 'U', 'Y', '2', 0x00, 0x00, 0x10, 0x00,
	0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71,
};

/* One VS_FRAME_UNCOMPRESSED descriptor. */
struct uvc_frame {
	uint8_t index;			/* bFrameIndex */
	uint16_t width, height;
	uint32_t def_interval;		/* 100 ns units */
	uint8_t n_intervals;		/* 0: continuous: min, max, step */
	uint32_t intervals[UVC_MAX_INTERVALS];
};

struct uvc_cfg {
	uint8_t vc_intf, vs_intf;
	uint16_t bcd_uvc;
	uint32_t clock_hz;
	uint8_t entities[32];		/* bitmap of VC terminal/unit ids */
	uint8_t ep_addr;		/* the VS input header's endpoint */
	bool iso;
	uint32_t iso_max;		/* largest bytes per interval */
	uint32_t iso_us;		/* first isochronous alt's interval */
	uint8_t format_index;
	uint8_t def_frame_index;	/* the format's bDefaultFrameIndex */
	size_t n_frames;
	struct uvc_frame frames[UVC_MAX_FRAMES];
	const struct uvc_frame *def_frame; /* width/height, or the format's */
	uint32_t def_interval;		/* fps, or the frame's */
	enum uvc_pattern pattern;
	uint8_t hdr;			/* payload header bytes: 2 or 12 */
	uint32_t payload;		/* payload-size; 0: computed */
};

/* The probe and commit controls (UVC 1.1 Table 4-47), host order. */
struct uvc_probe {
	uint16_t hint;
	uint8_t format;
	uint8_t frame;
	uint32_t interval;
	uint16_t key_rate, p_rate, quality, window, delay;
	uint32_t max_frame;
	uint32_t max_payload;
	uint32_t clock;			/* 1.1 from here on */
	uint8_t framing, ver_pref, ver_min, ver_max;
};

/* What goes out: one frame after another. */
struct uvc_stream {
	bool on;			/* bulk: committed; iso: alt >= 1 */
	bool started;			/* a frame has begun this connection */
	uint32_t frame;			/* the frame being (or last) sent */
	bool active;			/* it has bytes left to send */
	uint32_t off;			/* its bytes sent */
	uint8_t fid;
	uint16_t w, h;			/* the stream's, from the commit */
	uint32_t size;			/* 2 W H */
	uint32_t frame_us;		/* frame interval */
	uint32_t payload;		/* dwMaxPayloadTransferSize */
	uint32_t pts;			/* clock at the frame's beginning */
	uint64_t t0_us;			/* bulk: the stream's start */
	/* bulk: the payload in progress, header included */
	uint32_t pay_len, pay_pos;
	bool zlp;			/* owe the host a zero-length URB */
	uint8_t head[UVC_HDR_MAX];
	uint64_t due_us;		/* the next frame may begin then */
	/* isochronous, counted in packets (service intervals) */
	uint64_t pkt, due_pkt;
	uint32_t pkt_us;
	/* for the log */
	uint64_t frames, bytes;
};

struct uvc_state {
	struct gdev *dev;
	struct uvc_cfg cfg;
	struct uvc_probe probe, commit;
	bool committed;
	uint8_t error;			/* bRequestErrorCode */
	struct uvc_stream s;
	struct gdev_urbq in;		/* bulk IN URBs waiting */
	struct event *timer;		/* bulk: the next frame is due */
};

static const char *const uvc_keys[] = {
	"interface", "streaming-interface", "width", "height", "fps",
	"pattern", "header", "payload-size", NULL,
};

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- descriptors ---- */

/*
 * The class-specific descriptors in an alternate setting's extra bytes,
 * one by one: 1 and *d at the next, 0 at the end, -EINVAL (err set) when
 * a bLength is below 2 or runs past the end (script bytes: distrust them).
 */
static int cs_next(const struct gd_device *m, const struct gd_alt *alt,
		   size_t *off, const uint8_t **d, struct script_error *err)
{
	const struct gd_blob *x = &alt->extra;
	const uint8_t *p;

	while (*off + 2 <= x->len) {
		p = x->data + *off;
		if (p[0] < 2 || p[0] > x->len - *off)
			return fn_error_at(m, alt->line, err, "interface %u: a descriptor at byte %zu of its raw bytes has bLength %u, past their end or below 2",
					   alt->bInterfaceNumber, *off, p[0]);
		*off += p[0];
		if (p[1] == UVC_CS_INTERFACE && p[0] >= 3) {
			*d = p;
			return 1;
		}
	}
	return 0;
}

static int parse_vc(const struct gd_device *m, const struct gd_alt *vc,
		    struct uvc_cfg *c, struct script_error *err)
{
	const uint8_t *d = NULL;
	bool header = false, listed = false;
	size_t off = 0, i, n;
	int ret;

	while ((ret = cs_next(m, vc, &off, &d, err)) > 0) {
		if (d[2] >= 0x02 && d[2] <= UVC_VC_LAST_ENTITY && d[0] >= 4)
			c->entities[d[3] / 8] |= 1u << (d[3] % 8);
		if (d[2] != UVC_VC_HEADER)
			continue;
		n = d[0] >= 12 ? d[11] : 0;
		if (d[0] < 12 || d[0] < 12 + n)
			return fn_error_at(m, vc->line, err, "interface %u: the VC_HEADER is %u bytes, needs 12 + bInCollection",
					    vc->bInterfaceNumber, d[0]);
		header = true;
		c->bcd_uvc = get_le16(d + 3);
		c->clock_hz = get_le32(d + 7);
		for (i = 0; i < n; i++)
			listed |= d[12 + i] == c->vs_intf;
	}
	if (ret < 0)
		return ret;
	if (!header)
		return fn_error_at(m, vc->line, err, "interface %u: no VC_HEADER among its raw descriptors (UVC 1.1 3.7.2)",
				    vc->bInterfaceNumber);
	if (c->bcd_uvc != 0x0100 && c->bcd_uvc != 0x0110)
		return fn_error_at(m, vc->line, err, "the VC_HEADER's bcdUVC is 0x%04x: the function speaks 1.00 and 1.10",
				    c->bcd_uvc);
	if (!listed)
		return fn_error_at(m, vc->line, err, "the VC_HEADER's baInterfaceNr does not list streaming interface %u: uvcvideo would not find it",
				    c->vs_intf);
	return 0;
}

static int parse_frame(const struct gd_device *m, int line, const uint8_t *d,
		       struct uvc_cfg *c, struct script_error *err)
{
	struct uvc_frame *f;
	unsigned int n, i;

	if (c->n_frames == UVC_MAX_FRAMES)
		return fn_error_at(m, line, err, "more than %d frame descriptors",
				    UVC_MAX_FRAMES);
	n = d[0] > 25 ? d[25] : 0;
	if (d[0] < 26 + 4 * (n ? n : 3))
		return fn_error_at(m, line, err, "frame descriptor %u: %u bytes, needs %u for its intervals",
				    d[0] > 3 ? d[3] : 0, d[0],
				    26 + 4 * (n ? n : 3));
	if (n > UVC_MAX_INTERVALS)
		return fn_error_at(m, line, err, "frame descriptor %u: more than %d intervals",
				    d[3], UVC_MAX_INTERVALS);
	f = &c->frames[c->n_frames++];
	f->index = d[3];
	f->width = get_le16(d + 5);
	f->height = get_le16(d + 7);
	f->def_interval = get_le32(d + 21);
	f->n_intervals = n;
	for (i = 0; i < (n ? n : 3); i++) {
		f->intervals[i] = get_le32(d + 26 + 4 * i);
		if (!f->intervals[i] && (n || i < 2))
			return fn_error_at(m, line, err, "frame descriptor %u: frame interval %u is 0",
					    f->index, i + 1);
	}
	if (!n && (f->intervals[0] > f->intervals[1] || !f->intervals[2]))
		return fn_error_at(m, line, err, "frame descriptor %u: continuous intervals need min <= max and a step",
				    f->index);
	if (!f->width || f->width % 2 || !f->height ||
	    2ull * f->width * f->height > UVC_FRAME_MAX)
		return fn_error_at(m, line, err, "frame descriptor %u: %ux%u: YUY2 needs an even width, and at most %u bytes a frame",
				    f->index, f->width, f->height,
				    UVC_FRAME_MAX);
	return 0;
}

static int parse_format(const struct gd_device *m, int line, const uint8_t *d,
			struct uvc_cfg *c, struct script_error *err)
{
	if (c->format_index)
		return fn_error_at(m, line, err, "a second format descriptor (%u): the function streams one",
				    d[0] > 3 ? d[3] : 0);
	if (d[0] < 27)
		return fn_error_at(m, line, err, "VS_FORMAT_UNCOMPRESSED is %u bytes, needs 27",
				    d[0]);
	if (memcmp(d + 5, guid_yuy2, sizeof(guid_yuy2)) || d[21] != 16)
		return fn_error_at(m, line, err, "format %u: the function streams YUY2 (guidFormat 59555932-0000-0010-8000-00aa00389b71, 16 bits per pixel)",
				    d[3]);
	if (!d[3])
		return fn_error_at(m, line, err, "format index 0");
	c->format_index = d[3];
	c->def_frame_index = d[22];
	return 0;
}

static int parse_vs(const struct gd_device *m, const struct gd_alt *vs,
		    struct uvc_cfg *c, struct script_error *err)
{
	const uint8_t *d = NULL;
	bool header = false;
	size_t off = 0;
	int ret = 0;

	while (!ret && (ret = cs_next(m, vs, &off, &d, err)) > 0) {
		ret = 0;
		switch (d[2]) {
		case UVC_VS_INPUT_HEADER:
			if (d[0] < 13 || d[0] < 13 + d[3] * d[12])
				return fn_error_at(m, vs->line, err, "interface %u: VS_INPUT_HEADER of %u bytes, needs 13 + bNumFormats x bControlSize",
						    vs->bInterfaceNumber, d[0]);
			header = true;
			c->ep_addr = d[6];
			break;
		case UVC_VS_FORMAT_UNCOMP:
			ret = parse_format(m, vs->line, d, c, err);
			break;
		case UVC_VS_FRAME_UNCOMP:
			if (!c->format_index)
				return fn_error_at(m, vs->line, err, "a frame descriptor before its format");
			ret = parse_frame(m, vs->line, d, c, err);
			break;
		case 0x06: case 0x07: case 0x0a: case 0x0c:
		case 0x10: case 0x11: case 0x12:
			return fn_error_at(m, vs->line, err, "a format or frame of subtype 0x%02x: the function streams uncompressed YUY2 only",
					    d[2]);
		}
	}
	if (ret < 0)
		return ret;
	if (!header)
		return fn_error_at(m, vs->line, err, "interface %u: no VS_INPUT_HEADER among its raw descriptors (write them before its first endpoint)",
				    vs->bInterfaceNumber);
	if (!c->n_frames)
		return fn_error_at(m, vs->line, err, "interface %u: no YUY2 format with a frame descriptor",
				    vs->bInterfaceNumber);
	return 0;
}

/* The alternate setting 0 of interface intf (-1: the first of subclass
 * sub) of class video in cfg. */
static const struct gd_alt *video_alt(const struct gd_config *cfg, int intf,
				      uint8_t sub)
{
	size_t i;

	for (i = 0; i < cfg->n_alts; i++) {
		const struct gd_alt *a = &cfg->alts[i];

		if (a->bAlternateSetting)
			continue;
		if (intf >= 0 ? a->bInterfaceNumber == intf :
		    a->bInterfaceClass == UVC_CLASS_VIDEO &&
		    a->bInterfaceSubClass == sub)
			return a;
	}
	return NULL;
}

static int find_interfaces(const struct gd_device *m,
			   const struct gd_config **cfg,
			   const struct gd_alt **vc, const struct gd_alt **vs,
			   struct script_error *err)
{
	const struct gd_fn_opt *ovc = fn_opt(m, "interface");
	const struct gd_fn_opt *ovs = fn_opt(m, "streaming-interface");
	uint64_t nvc = 0, nvs = 0;
	size_t i;
	int ret;

	ret = fn_opt_u64(m, "interface", 0, 255, 0, &nvc, err) ?:
	      fn_opt_u64(m, "streaming-interface", 0, 255, 0, &nvs, err);
	if (ret)
		return ret;
	*vc = NULL;
	for (i = 0; i < m->n_configs && !*vc; i++) {
		*cfg = &m->configs[i];
		*vc = video_alt(*cfg, ovc ? (int)nvc : -1, UVC_SC_CONTROL);
	}
	if (!*vc && ovc)
		return fn_opt_error(m, ovc, err, "no interface %u in any configuration",
				    (unsigned int)nvc);
	if (!*vc)
		return fn_opt_error(m, NULL, err, "no VideoControl interface (class 0x0e, subclass 1): add one or name it with 'interface N'");
	if ((*vc)->bInterfaceClass != UVC_CLASS_VIDEO ||
	    (*vc)->bInterfaceSubClass != UVC_SC_CONTROL)
		return fn_opt_error(m, ovc, err, "interface %u is not VideoControl (class 0x0e, subclass 1)",
				    (*vc)->bInterfaceNumber);
	*vs = video_alt(*cfg, ovs ? (int)nvs : -1, UVC_SC_STREAMING);
	if (!*vs && ovs)
		return fn_opt_error(m, ovs, err, "no interface %u in the configuration of the VideoControl interface",
				    (unsigned int)nvs);
	if (!*vs)
		return fn_opt_error(m, NULL, err, "no VideoStreaming interface (class 0x0e, subclass 2) beside the VideoControl one: add one or name it with 'streaming-interface N'");
	if ((*vs)->bInterfaceClass != UVC_CLASS_VIDEO ||
	    (*vs)->bInterfaceSubClass != UVC_SC_STREAMING)
		return fn_opt_error(m, ovs, err, "interface %u is not VideoStreaming (class 0x0e, subclass 2)",
				    (*vs)->bInterfaceNumber);
	return 0;
}

static const struct gd_endpoint *alt_ep(const struct gd_alt *a, uint8_t addr)
{
	size_t i;

	for (i = 0; i < a->n_eps; i++)
		if (a->eps[i].bEndpointAddress == addr)
			return &a->eps[i];
	return NULL;
}

/* The streaming endpoint: bulk IN in alternate setting 0, or isochronous
 * IN in the others. */
static int find_endpoint(const struct gd_device *m,
			 const struct gd_config *cfg, const struct gd_alt *vs,
			 struct uvc_cfg *c, struct script_error *err)
{
	const struct gd_endpoint *e = alt_ep(vs, c->ep_addr);
	size_t i;
	int ret;

	if (e) {
		if ((e->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK) !=
		    USB_ENDPOINT_XFER_BULK || !(e->bEndpointAddress & USB_DIR_IN))
			return fn_error_at(m, e->line, err, "endpoint 0x%02x in alternate setting 0 of interface %u streams: it must be bulk IN (isochronous ones go in alternate settings 1..)",
					   c->ep_addr, vs->bInterfaceNumber);
		return fn_ep_check_free(m, e, "video streaming endpoint", err);
	}
	c->iso = true;
	for (i = 0; i < cfg->n_alts; i++) {
		const struct gd_alt *a = &cfg->alts[i];
		uint32_t cap;

		if (a->bInterfaceNumber != vs->bInterfaceNumber ||
		    !a->bAlternateSetting)
			continue;
		e = alt_ep(a, c->ep_addr);
		if (!e)
			continue;
		if ((e->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK) !=
		    USB_ENDPOINT_XFER_ISOC || !(e->bEndpointAddress & USB_DIR_IN))
			return fn_error_at(m, e->line, err, "endpoint 0x%02x in alternate setting %u streams: it must be isochronous IN",
					   c->ep_addr, a->bAlternateSetting);
		ret = fn_ep_check_free(m, e, "video streaming endpoint", err);
		if (ret)
			return ret;
		cap = stream_iso_capacity(e, m->speed);
		if (!c->iso_us)
			c->iso_us = stream_interval_us(m->speed, e->bInterval);
		if (cap > c->iso_max)
			c->iso_max = cap;
	}
	if (!c->iso_us)
		return fn_error_at(m, vs->line, err, "no endpoint 0x%02x (the VS_INPUT_HEADER's bEndpointAddress) in interface %u: bulk IN in alternate setting 0, or isochronous IN in alternate settings 1..",
				   c->ep_addr, vs->bInterfaceNumber);
	if (c->iso_max <= UVC_HDR_MAX)
		return fn_error_at(m, vs->line, err, "endpoint 0x%02x: %u bytes per interval leave no room behind a payload header",
				   c->ep_addr, c->iso_max);
	return 0;
}

/* ---- options ---- */

static bool interval_ok(const struct uvc_frame *f, uint32_t iv)
{
	unsigned int i;

	if (!f->n_intervals)
		return iv >= f->intervals[0] && iv <= f->intervals[1] &&
		       (iv - f->intervals[0]) % f->intervals[2] == 0;
	for (i = 0; i < f->n_intervals; i++)
		if (f->intervals[i] == iv)
			return true;
	return false;
}

static int parse_default(const struct gd_device *m, struct uvc_cfg *c,
			 struct script_error *err)
{
	const struct gd_fn_opt *ow = fn_opt(m, "width");
	const struct gd_fn_opt *oh = fn_opt(m, "height");
	const struct gd_fn_opt *of = fn_opt(m, "fps");
	uint64_t w, h, fps;
	size_t i;
	int ret;

	ret = fn_opt_u64(m, "width", 0, 65535, 0, &w, err) ?:
	      fn_opt_u64(m, "height", 0, 65535, 0, &h, err) ?:
	      fn_opt_u64(m, "fps", 0, 10000000, 0, &fps, err);
	if (ret)
		return ret;
	c->def_frame = &c->frames[0];
	for (i = 0; i < c->n_frames; i++)
		if (c->frames[i].index == c->def_frame_index)
			c->def_frame = &c->frames[i];
	if (ow || oh) {
		for (i = 0; i < c->n_frames; i++)
			if ((!ow || c->frames[i].width == w) &&
			    (!oh || c->frames[i].height == h))
				break;
		if (i == c->n_frames)
			return fn_opt_error(m, ow ? ow : oh, err, "no frame descriptor of %s%s%s",
					    ow ? ow->value : "",
					    ow && oh ? "x" : "",
					    oh ? oh->value : "");
		c->def_frame = &c->frames[i];
	}
	c->def_interval = c->def_frame->def_interval;
	if (of) {
		if (!fps || 10000000 % fps)
			return fn_opt_error(m, of, err, "fps: %s is not a whole number of 100 ns intervals",
					    of->value);
		c->def_interval = 10000000 / fps;
		if (!interval_ok(c->def_frame, c->def_interval))
			return fn_opt_error(m, of, err, "fps: the %ux%u frame descriptor has no interval of %u (x 100 ns)",
					    c->def_frame->width,
					    c->def_frame->height, c->def_interval);
	}
	return 0;
}

/* Options and descriptors into conf, a struct uvc_cfg (void *: for
 * fn_state_new()); -EINVAL with err set on a problem. */
static int cfg_parse(const struct gd_device *m, void *conf,
		     struct script_error *err)
{
	struct uvc_cfg *c = conf;
	const struct gd_config *cfg = NULL;
	const struct gd_alt *vc = NULL, *vs = NULL;
	const struct gd_fn_opt *o;
	uint64_t v;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = fn_opt_only(m, uvc_keys, err) ?:
	      find_interfaces(m, &cfg, &vc, &vs, err);
	if (ret)
		return ret;
	c->vc_intf = vc->bInterfaceNumber;
	c->vs_intf = vs->bInterfaceNumber;
	ret = parse_vc(m, vc, c, err) ?: parse_vs(m, vs, c, err) ?:
	      find_endpoint(m, cfg, vs, c, err) ?: parse_default(m, c, err);
	if (ret)
		return ret;

	o = fn_opt(m, "pattern");
	ret = o ? uvc_pattern_by_name(o->value) : UVC_PAT_BARS;
	if (ret < 0)
		return fn_opt_error(m, o, err, "pattern: expected bars or count, got '%s'",
				    o->value);
	c->pattern = ret;
	o = fn_opt(m, "header");
	c->hdr = 2;
	if (o && strcmp(o->value, "2") && strcmp(o->value, "12"))
		return fn_opt_error(m, o, err, "header: expected 2 or 12 (bytes, 12 with PTS and SCR), got '%s'",
				    o->value);
	if (o)
		c->hdr = atoi(o->value);
	ret = fn_opt_u64(m, "payload-size", 0, UVC_FRAME_MAX + UVC_HDR_MAX, 1,
			 &v, err);
	if (ret)
		return ret;
	o = fn_opt(m, "payload-size");
	if (o && v <= c->hdr)
		return fn_opt_error(m, o, err, "payload-size: %llu leaves no room behind the %u-byte header",
				    (unsigned long long)v, c->hdr);
	if (o && c->iso && v > c->iso_max)
		return fn_opt_error(m, o, err, "payload-size: %llu is more than the largest isochronous packet (%u bytes)",
				    (unsigned long long)v, c->iso_max);
	c->payload = v;
	return 0;
}

static int uvc_validate(const struct gd_device *m, struct script_error *err)
{
	struct uvc_cfg c;

	return cfg_parse(m, &c, err);
}

/* ---- probe and commit (UVC 1.1 4.3.1.1) ---- */

static size_t probe_len(const struct uvc_cfg *c)
{
	return c->bcd_uvc >= 0x0110 ? UVC_PROBE_LEN_11 : UVC_PROBE_LEN_10;
}

static void probe_pack(const struct uvc_probe *p, uint8_t *b, size_t len)
{
	memset(b, 0, len);
	put_le16(b + 0, p->hint);
	b[2] = p->format;
	b[3] = p->frame;
	put_le32(b + 4, p->interval);
	put_le16(b + 8, p->key_rate);
	put_le16(b + 10, p->p_rate);
	put_le16(b + 12, p->quality);
	put_le16(b + 14, p->window);
	put_le16(b + 16, p->delay);
	put_le32(b + 18, p->max_frame);
	put_le32(b + 22, p->max_payload);
	if (len < UVC_PROBE_LEN_11)
		return;
	put_le32(b + 26, p->clock);
	b[30] = p->framing;
	b[31] = p->ver_pref;
	b[32] = p->ver_min;
	b[33] = p->ver_max;
}

/* The fields the host sets; len >= UVC_PROBE_LEN_10. */
static void probe_unpack(struct uvc_probe *p, const uint8_t *b)
{
	p->hint = get_le16(b + 0);
	p->format = b[2];
	p->frame = b[3];
	p->interval = get_le32(b + 4);
	p->key_rate = get_le16(b + 8);
	p->p_rate = get_le16(b + 10);
	p->quality = get_le16(b + 12);
	p->window = get_le16(b + 14);
}

static const struct uvc_frame *frame_by_index(const struct uvc_cfg *c,
					      uint8_t index)
{
	size_t i;

	for (i = 0; i < c->n_frames; i++)
		if (c->frames[i].index == index)
			return &c->frames[i];
	return NULL;
}

static uint32_t dist(uint32_t a, uint32_t b)
{
	return a > b ? a - b : b - a;
}

/* The frame's interval nearest iv (0: its default). */
static uint32_t nearest_interval(const struct uvc_cfg *c,
				 const struct uvc_frame *f, uint32_t iv)
{
	uint32_t best, step;
	unsigned int i;

	if (!iv)
		return f == c->def_frame ? c->def_interval : f->def_interval;
	if (!f->n_intervals) {
		if (iv <= f->intervals[0])
			return f->intervals[0];
		if (iv >= f->intervals[1])
			return f->intervals[1];
		step = f->intervals[2];
		best = f->intervals[0] + (iv - f->intervals[0] + step / 2) /
		       step * step;
		return best > f->intervals[1] ? best - step : best;
	}
	best = f->intervals[0];
	for (i = 1; i < f->n_intervals; i++)
		if (dist(f->intervals[i], iv) < dist(best, iv))
			best = f->intervals[i];
	return best;
}

static uint32_t frame_bytes(const struct uvc_frame *f)
{
	return 2u * f->width * f->height;
}

/* dwMaxPayloadTransferSize for a frame at an interval (see the top). */
static uint32_t payload_for(const struct uvc_cfg *c,
			    const struct uvc_frame *f, uint32_t interval)
{
	uint64_t ppf, data;

	if (c->payload)
		return c->payload;
	if (!c->iso)
		return frame_bytes(f) + c->hdr;
	ppf = interval / 10 / c->iso_us;	/* packets in a frame interval */
	if (!ppf)
		ppf = 1;
	data = (frame_bytes(f) + ppf - 1) / ppf;
	return data + c->hdr > c->iso_max ? c->iso_max : data + c->hdr;
}

/* What the device makes of the values the host set (4.3.1.1.1). */
static void negotiate(const struct uvc_cfg *c, struct uvc_probe *p)
{
	const struct uvc_frame *f = frame_by_index(c, p->frame);

	if (!f)
		f = c->def_frame;
	p->format = c->format_index;
	p->frame = f->index;
	p->interval = nearest_interval(c, f, p->interval);
	p->delay = 0;
	p->max_frame = frame_bytes(f);
	p->max_payload = payload_for(c, f, p->interval);
	p->clock = c->clock_hz;
	p->framing = UVC_FRAMING;
	p->ver_pref = p->ver_min = p->ver_max = 1;
}

static void probe_default(const struct uvc_cfg *c, struct uvc_probe *p)
{
	memset(p, 0, sizeof(*p));
	p->frame = c->def_frame->index;
	negotiate(c, p);
}

/* GET_MIN (max false) or GET_MAX of the current probe: its frame at the
 * shortest or longest interval the frame has. */
static void probe_bound(const struct uvc_cfg *c, const struct uvc_probe *cur,
			struct uvc_probe *p, bool max)
{
	const struct uvc_frame *f = frame_by_index(c, cur->frame);
	uint32_t iv;
	unsigned int i;

	*p = *cur;
	if (!f)
		return;
	if (!f->n_intervals) {
		iv = f->intervals[max ? 1 : 0];
	} else {
		iv = f->intervals[0];
		for (i = 1; i < f->n_intervals; i++)
			if (max ? f->intervals[i] > iv : f->intervals[i] < iv)
				iv = f->intervals[i];
	}
	p->interval = iv;
	p->max_payload = payload_for(c, f, iv);
}

/* ---- the stream ---- */

/* Start over with the committed values (or the probe's, if the host
 * streams without a commit); the next frame begins with a new FID. */
static void stream_start(struct uvc_state *st, bool on)
{
	const struct uvc_probe *p = st->committed ? &st->commit : &st->probe;
	const struct uvc_frame *f = frame_by_index(&st->cfg, p->frame);
	struct uvc_stream *s = &st->s;

	if (!f)
		f = st->cfg.def_frame;
	s->on = on;
	s->active = false;
	s->zlp = false;
	s->pay_len = s->pay_pos = 0;
	s->w = f->width;
	s->h = f->height;
	s->size = frame_bytes(f);
	s->frame_us = p->interval / 10;
	s->payload = p->max_payload;
	s->t0_us = mono_us();
	s->due_us = s->t0_us;
	s->pkt = s->due_pkt = 0;
	if (st->timer)
		evtimer_del(st->timer);
}

/* The device's clock, in dwClockFrequency ticks, us into the stream. */
static uint32_t ticks(const struct uvc_state *st, uint64_t us)
{
	return (uint32_t)(us * st->cfg.clock_hz / 1000000);
}

static void frame_begin(struct uvc_state *st, uint64_t us)
{
	struct uvc_stream *s = &st->s;

	if (s->started) {
		s->frame++;
		s->fid ^= UVC_BFH_FID;
	}
	s->started = true;
	s->active = true;
	s->off = 0;
	s->pts = ticks(st, us);
	s->frames++;
}

/* The payload header into dst (st->cfg.hdr bytes), us into the stream. */
static void header_make(const struct uvc_state *st, uint8_t *dst, bool eof,
			uint64_t us)
{
	const struct uvc_stream *s = &st->s;

	dst[0] = st->cfg.hdr;
	dst[1] = UVC_BFH_EOH | s->fid | (eof ? UVC_BFH_EOF : 0);
	if (st->cfg.hdr < UVC_HDR_MAX)
		return;
	dst[1] |= UVC_BFH_PTS | UVC_BFH_SCR;
	put_le32(dst + 2, s->pts);
	put_le32(dst + 6, ticks(st, us));
	put_le16(dst + 10, (us / 1000) & 0x7ff);	/* 1 ms SOF counter */
}

static void frame_data(struct uvc_state *st, uint8_t *dst, uint32_t n)
{
	struct uvc_stream *s = &st->s;

	uvc_pattern_fill(st->cfg.pattern, s->frame, s->w, s->h, s->off, dst,
			 n);
	s->off += n;
	s->bytes += n;
	if (s->off == s->size)
		s->active = false;
}

/*
 * The next bulk URB of len bytes: bytes of the payload in progress (a new
 * one when none is), never of two payloads.  Called with a frame active
 * or a zero-length URB owed.
 */
static uint32_t bulk_fill(struct uvc_state *st, uint8_t *buf, uint32_t len)
{
	struct uvc_stream *s = &st->s;
	uint32_t hdr = st->cfg.hdr, n, h = 0;

	if (s->zlp) {
		s->zlp = false;
		return 0;
	}
	if (s->pay_pos == s->pay_len) {
		uint32_t data = min_u32(s->payload - hdr, s->size - s->off);

		s->pay_len = hdr + data;
		s->pay_pos = 0;
		header_make(st, s->head, s->off + data == s->size,
			    mono_us() - s->t0_us);
	}
	n = min_u32(len, s->pay_len - s->pay_pos);
	if (s->pay_pos < hdr) {
		h = min_u32(n, hdr - s->pay_pos);
		memcpy(buf, s->head + s->pay_pos, h);
	}
	frame_data(st, buf + h, n - h);
	s->pay_pos += n;
	/* the host cannot tell a payload shorter than the maximum ended
	 * when it filled the URB */
	if (s->pay_pos == s->pay_len && n == len && s->pay_len < s->payload)
		s->zlp = true;
	return n;
}

static void bulk_arm(struct uvc_state *st, uint64_t wait_us)
{
	struct timeval tv = {
		.tv_sec = wait_us / 1000000,
		.tv_usec = wait_us % 1000000,
	};

	if (evtimer_add(st->timer, &tv))
		log_err("interface %u: cannot arm the frame timer",
			st->cfg.vs_intf);
}

/* Serve the waiting IN URBs while there is something to send. */
static void bulk_pump(struct uvc_state *st)
{
	struct uvc_stream *s = &st->s;
	struct urb *urb;
	uint64_t now;
	uint32_t n;

	while (s->on && st->in.head) {
		if (!s->active && !s->zlp) {
			now = mono_us();
			if (now < s->due_us) {
				bulk_arm(st, s->due_us - now);
				return;
			}
			s->due_us = now + s->frame_us;
			frame_begin(st, now - s->t0_us);
		}
		urb = gdev_urbq_pop(&st->in);
		n = bulk_fill(st, urb->buf, urb->length);
		gdev_complete(st->dev, urb, 0, n);
	}
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	bulk_pump(arg);
}

/* One isochronous packet of at most max bytes: a payload of the frame, or
 * a header alone between frames. */
static uint32_t iso_packet(struct uvc_state *st, uint8_t *dst, uint32_t max)
{
	struct uvc_stream *s = &st->s;
	uint32_t hdr = st->cfg.hdr, data = 0;
	uint64_t us = s->pkt * s->pkt_us;

	if (!s->active && s->pkt >= s->due_pkt) {
		uint64_t ppf = s->frame_us / s->pkt_us;

		s->due_pkt = s->pkt + (ppf ? ppf : 1);
		frame_begin(st, us);
	}
	s->pkt++;
	if (max < hdr)
		return 0;
	if (s->active)
		data = min_u32(max - hdr, s->size - s->off);
	header_make(st, dst, s->active && s->off + data == s->size, us);
	if (data)
		frame_data(st, dst + hdr, data);
	return hdr + data;
}

static void iso_fill(struct gdev *dev, struct uvc_state *st, struct urb *urb)
{
	const struct gd_endpoint *e = dev->ep[1][urb->ep].desc;
	uint32_t cap = stream_iso_capacity(e, dev->model->speed);
	uint32_t total = 0, n;
	int i;

	st->s.pkt_us = stream_interval_us(dev->model->speed, e->bInterval);
	if (urb->number_of_packets <= 0 || !urb->iso) {
		urb->actual_length = iso_packet(st, urb->buf,
						min_u32(urb->length, cap));
	} else {
		for (i = 0; i < urb->number_of_packets; i++) {
			struct usbip_iso_desc *d = &urb->iso[i];

			/* packed: packet i right behind packet i - 1 */
			n = min_u32(min_u32(d->length, cap),
				    urb->length - total);
			d->actual_length = iso_packet(st, urb->buf + total, n);
			d->status = 0;
			total += d->actual_length;
		}
	}
	urb->error_count = 0;
	gdev_iso_complete(dev, urb);
}

/* ---- life cycle ---- */

static int uvc_attach(struct gdev *dev)
{
	struct uvc_state *st;
	int ret;

	st = fn_state_new(dev->model, sizeof(*st),
			  offsetof(struct uvc_state, cfg), cfg_parse, &ret);
	if (!st)
		return ret;
	st->timer = evtimer_new(dev->base, timer_cb, st);
	if (!st->timer) {
		free(st);
		return -ENOMEM;
	}
	st->dev = dev;
	gdev_urbq_init(&st->in);
	probe_default(&st->cfg, &st->probe);
	st->commit = st->probe;
	stream_start(st, false);
	log_info("interfaces %u/%u: UVC %x.%02x camera, %s endpoint 0x%02x, %zu frame sizes, default %ux%u at %u x 100 ns, pattern %s, %u-byte headers",
		 st->cfg.vc_intf, st->cfg.vs_intf, st->cfg.bcd_uvc >> 8,
		 st->cfg.bcd_uvc & 0xff, st->cfg.iso ? "isochronous" : "bulk",
		 st->cfg.ep_addr, st->cfg.n_frames, st->cfg.def_frame->width,
		 st->cfg.def_frame->height, st->cfg.def_interval,
		 uvc_pattern_name(st->cfg.pattern), st->cfg.hdr);
	dev->function_state = st;
	return 0;
}

static void uvc_detach(struct gdev *dev, void (*free_urb)(struct urb *urb))
{
	struct uvc_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_free(&st->in, free_urb);
	event_free(st->timer);
	log_info("interface %u: %llu frames begun, %llu bytes of them sent",
		 st->cfg.vs_intf, (unsigned long long)st->s.frames,
		 (unsigned long long)st->s.bytes);
	free(st);
	dev->function_state = NULL;
}

/* A configuration or an alternate setting changed: bulk stops until the
 * next commit, isochronous streams while its alternate setting is not 0. */
static void uvc_reset(struct gdev *dev)
{
	struct uvc_state *st = dev->function_state;

	if (!st)
		return;
	gdev_urbq_flush(dev, &st->in, -ESHUTDOWN);
	if (!dev->config)
		st->committed = false;
	stream_start(st, st->cfg.iso && dev->config &&
		     dev->alt[st->cfg.vs_intf] != 0);
}

static struct urb *uvc_unlink(struct gdev *dev, uint32_t seqnum)
{
	struct uvc_state *st = dev->function_state;

	return st ? gdev_urbq_remove(&st->in, seqnum) : NULL;
}

static int uvc_submit(struct gdev *dev, struct urb *urb)
{
	struct uvc_state *st = dev->function_state;
	const struct gd_endpoint *e;

	if (!st || !urb->dir_in ||
	    (urb->ep | USB_DIR_IN) != st->cfg.ep_addr)
		return -ENOENT;
	e = dev->ep[1][urb->ep].desc;
	if (!e || ((e->bmAttributes & USB_ENDPOINT_XFERTYPE_MASK) ==
		   USB_ENDPOINT_XFER_ISOC) != st->cfg.iso)
		return -ENOENT;
	if (st->cfg.iso) {
		iso_fill(dev, st, urb);
		return 0;
	}
	gdev_urbq_push(&st->in, urb);
	bulk_pump(st);
	return 0;
}

/* ---- ep0 ---- */

/* STALL with a bRequestErrorCode for the host to ask. */
static int stall(struct uvc_state *st, uint8_t code)
{
	st->error = code;
	return -EPIPE;
}

static int reply(uint8_t *data, size_t len, const void *src, size_t n)
{
	n = n < len ? n : len;
	memcpy(data, src, n);
	return (int)n;
}

static int vs_request(struct uvc_state *st, const struct usb_setup *s,
		      uint8_t *data, size_t len)
{
	uint8_t cs = s->wValue >> 8, b[UVC_PROBE_LEN_11];
	size_t size = probe_len(&st->cfg);
	bool commit = cs == UVC_VS_COMMIT;
	struct uvc_probe p, *cur = commit ? &st->commit : &st->probe;

	if (s->wIndex >> 8)
		return stall(st, UVC_ERR_UNIT);
	if (cs != UVC_VS_PROBE && cs != UVC_VS_COMMIT)
		return stall(st, UVC_ERR_CONTROL);
	switch (s->bRequest) {
	case UVC_SET_CUR:
		if (len < UVC_PROBE_LEN_10)
			return stall(st, UVC_ERR_REQUEST);
		p = *cur;
		probe_unpack(&p, data);
		negotiate(&st->cfg, &p);
		*cur = p;
		if (commit) {
			st->committed = true;
			log_info("interface %u: commit: %ux%u at %u x 100 ns, payloads of %u bytes",
				 st->cfg.vs_intf,
				 frame_by_index(&st->cfg, p.frame)->width,
				 frame_by_index(&st->cfg, p.frame)->height,
				 p.interval, p.max_payload);
			if (!st->cfg.iso) {
				stream_start(st, true);
				bulk_pump(st);
			}
		}
		st->error = UVC_ERR_NONE;
		return 0;
	case UVC_GET_CUR:
		p = *cur;
		break;
	case UVC_GET_MIN:
	case UVC_GET_MAX:
		if (commit)
			return stall(st, UVC_ERR_REQUEST);
		probe_bound(&st->cfg, cur, &p, s->bRequest == UVC_GET_MAX);
		break;
	case UVC_GET_DEF:
		if (commit)
			return stall(st, UVC_ERR_REQUEST);
		probe_default(&st->cfg, &p);
		break;
	case UVC_GET_RES:
		if (commit)
			return stall(st, UVC_ERR_REQUEST);
		memset(&p, 0, sizeof(p));
		break;
	case UVC_GET_LEN:
		put_le16(b, size);
		st->error = UVC_ERR_NONE;
		return reply(data, len, b, 2);
	case UVC_GET_INFO:
		b[0] = UVC_INFO_GET | UVC_INFO_SET;
		st->error = UVC_ERR_NONE;
		return reply(data, len, b, 1);
	default:
		return stall(st, UVC_ERR_REQUEST);
	}
	probe_pack(&p, b, size);
	st->error = UVC_ERR_NONE;
	return reply(data, len, b, size);
}

static int vc_request(struct uvc_state *st, const struct usb_setup *s,
		      uint8_t *data, size_t len)
{
	uint8_t unit = s->wIndex >> 8, cs = s->wValue >> 8, b;

	if (unit && !(st->cfg.entities[unit / 8] & (1u << (unit % 8))))
		return stall(st, UVC_ERR_UNIT);
	if (unit || cs != UVC_VC_ERROR_CODE)
		return stall(st, UVC_ERR_CONTROL);
	switch (s->bRequest) {
	case UVC_GET_CUR:
		/* the last request's code; this one leaves it */
		return reply(data, len, &st->error, 1);
	case UVC_GET_INFO:
		b = UVC_INFO_GET;
		st->error = UVC_ERR_NONE;
		return reply(data, len, &b, 1);
	default:
		return stall(st, UVC_ERR_REQUEST);
	}
}

static int uvc_control(struct gdev *dev, const struct usb_setup *s,
		       uint8_t *data, size_t len)
{
	struct uvc_state *st = dev->function_state;
	uint8_t type = s->bmRequestType & (USB_TYPE_MASK | USB_RECIP_MASK);
	uint8_t intf = s->wIndex & 0xff;

	if (!st || type != (USB_TYPE_CLASS | USB_RECIP_INTERFACE) ||
	    (intf != st->cfg.vc_intf && intf != st->cfg.vs_intf))
		return -ENOENT;
	/* a GET is device to host, SET_CUR host to device (4.2.1) */
	if (!(s->bmRequestType & USB_DIR_IN) != !(s->bRequest & 0x80))
		return stall(st, UVC_ERR_REQUEST);
	if (intf == st->cfg.vs_intf)
		return vs_request(st, s, data, len);
	return vc_request(st, s, data, len);
}

const struct fn_ops fn_uvc_ops = {
	.name = "uvc",
	.validate = uvc_validate,
	.attach = uvc_attach,
	.detach = uvc_detach,
	.control = uvc_control,
	.submit = uvc_submit,
	.unlink = uvc_unlink,
	.reset = uvc_reset,
};
