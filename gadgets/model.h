/* SPDX-License-Identifier: GPL-2.0 */
/*
 * model.h - the device model: what one gadget script describes.
 *
 * The parser (script.c) builds it, the descriptor generator (desc.c) turns
 * it into bytes, the runtime (device.c, stdreq.c) serves it.  It holds
 * logical values only: bLength, wTotalLength, bNumInterfaces and
 * bNumEndpoints are computed by the generator unless the matching
 * *_override field is >= 0 (a script sets it on purpose, e.g. to reproduce
 * a bind bug with a malformed descriptor).  The model is immutable once
 * loaded; run-time state lives in struct gdev (device.h).
 *
 * All arrays are owned by the model and freed by gd_model_free().
 */
#ifndef USBRIG_MODEL_H
#define USBRIG_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "usbip_wire.h"

/* Hard maxima: a script asking for more is rejected with file:line:col. */
#define GD_MAX_CONFIGS		8
#define GD_MAX_INTERFACES	32	/* interface numbers per configuration */
#define GD_MAX_ALTS		256	/* interface descriptors per configuration */
#define GD_MAX_ENDPOINTS	30	/* per interface descriptor */
#define GD_MAX_IADS		16
#define GD_MAX_LANGIDS		16
#define GD_MAX_BLOB		4096	/* one raw descriptor run / reply / packet */
#define GD_MAX_RULES		256
#define GD_MAX_SEQ_PACKETS	1024
#define GD_DESC_MAX		65535	/* wTotalLength is 16 bits */

/* bytes a script gave in hex (raw descriptors, replies, patterns) */
struct gd_blob {
	uint8_t *data;
	size_t len;
};

/* ---- endpoint behaviour (bulk and interrupt) ---- */
enum gd_ep_mode {
	GD_EP_DEFAULT = 0,	/* IN: NAK forever; OUT: sink */
	GD_EP_NAK,		/* URBs stay pending until unlinked */
	GD_EP_SINK,		/* OUT: take every byte */
	GD_EP_SOURCE,		/* IN: fill with pattern (zeros if empty) */
	GD_EP_LOOPBACK,		/* OUT: data queued for IN endpoint loop_to */
	GD_EP_SEQUENCE,		/* IN: one canned packet per URB */
};

/* what a SOURCE endpoint sends (stream.c generates count and sine) */
enum gd_src_kind {
	GD_SRC_PATTERN = 0,	/* pattern repeated (zeros when empty) */
	GD_SRC_COUNT,		/* sample k of the stream is k mod 2^bits */
	GD_SRC_SINE,		/* a sine of sine_hz on every channel */
	GD_SRC_FILE,		/* the file's bytes, then zeros (or again) */
};

/*
 * A sampled stream on an endpoint (stream.h): its sample format and, on an
 * isochronous IN endpoint, how many bytes each service interval carries.
 * Samples are signed little-endian PCM (unsigned for 1 byte, as USB audio's
 * PCM8), channels interleaved.
 */
struct gd_stream {
	uint32_t rate;			/* frames per second; 0: not given */
	uint8_t channels;		/* 1..255 */
	uint8_t sample_bytes;		/* 1..4 */
	uint32_t packet_size;		/* fixed bytes per interval; 0: from
					 * rate, or as long as the host asks */
};

struct gd_ep_behaviour {
	enum gd_ep_mode mode;
	uint8_t loop_to;		/* LOOPBACK: bEndpointAddress of the IN ep */
	struct gd_blob pattern;		/* SOURCE: repeated across the buffer */
	enum gd_src_kind src;		/* SOURCE: what fills IN data */
	uint32_t sine_hz;		/* SRC_SINE: 1..rate/2 */
	uint8_t sine_level;		/* SRC_SINE: amplitude, % of full scale */
	char *path;			/* SRC_FILE: read at attach; SINK: OUT data
					 * recorded there (NULL: dropped) */
	bool file_repeat;		/* SRC_FILE: start over at its end */
	char *sizes_path;		/* isochronous: each packet's length
					 * recorded there, one a line */
	struct gd_stream stream;
	struct gd_blob *packets;	/* SEQUENCE: packets in order */
	size_t n_packets;
	bool repeat;			/* SEQUENCE: start over at the end (else NAK) */
	uint32_t delay_ms;		/* complete each URB this much later */
	uint32_t stall_nth;		/* fault: the Nth URB (1-based) STALLs; 0 never */
};

/* SuperSpeed endpoint companion (USB 3.2 9.6.7) */
struct gd_ss_companion {
	bool present;
	uint8_t bMaxBurst;
	uint8_t bmAttributes;
	uint16_t wBytesPerInterval;
	int bLength_override;
};

struct gd_endpoint {
	uint8_t bEndpointAddress;	/* bit 7 = IN */
	uint8_t bmAttributes;		/* bits 1:0 = USB_ENDPOINT_XFER_* */
	uint16_t wMaxPacketSize;
	uint8_t bInterval;
	int bLength_override;		/* -1: 7 */
	struct gd_ss_companion ss;	/* emitted right after the endpoint */
	struct gd_blob extra;		/* raw, after the endpoint (and companion) */
	struct gd_ep_behaviour beh;
	int line;			/* script line, for messages */
};

/* one interface descriptor (one alternate setting of an interface) */
struct gd_alt {
	uint8_t bInterfaceNumber;
	uint8_t bAlternateSetting;
	uint8_t bInterfaceClass;
	uint8_t bInterfaceSubClass;
	uint8_t bInterfaceProtocol;
	uint8_t iInterface;
	int bNumEndpoints_override;	/* -1: n_eps */
	int bLength_override;		/* -1: 9 */
	struct gd_blob extra;		/* raw class descriptors after it (HID, CDC) */
	struct gd_endpoint *eps;
	size_t n_eps;
	int line;
};

/* Interface Association Descriptor (USB 2.0 ECN), emitted right before the
 * first interface descriptor whose bInterfaceNumber == bFirstInterface. */
struct gd_iad {
	uint8_t bFirstInterface;
	uint8_t bInterfaceCount;
	uint8_t bFunctionClass;
	uint8_t bFunctionSubClass;
	uint8_t bFunctionProtocol;
	uint8_t iFunction;
	int bLength_override;		/* -1: 8 */
};

struct gd_config {
	uint8_t bConfigurationValue;
	uint8_t iConfiguration;
	uint8_t bmAttributes;
	uint8_t bMaxPower;		/* in the descriptor's unit (2 or 8 mA) */
	int wTotalLength_override;	/* -1: computed */
	int bNumInterfaces_override;	/* -1: distinct bInterfaceNumber count */
	int bLength_override;		/* -1: 9 */
	struct gd_blob extra;		/* raw, right after the config descriptor */
	struct gd_iad *iads;
	size_t n_iads;
	struct gd_alt *alts;		/* in script order */
	size_t n_alts;
};

/* ---- control rules (ep0 requests that no standard handler took) ---- */
enum gd_ctrl_action {
	GD_CTRL_REPLY,		/* IN: data (cut to wLength); OUT: take the data */
	GD_CTRL_ACK,		/* zero-length status */
	GD_CTRL_STALL,		/* -EPIPE */
};

struct gd_ctrl_rule {
	int bmRequestType;	/* -1: wildcard, never matches type standard */
	int bRequest;		/* -1: wildcard */
	int wValue;		/* -1: wildcard */
	int wIndex;		/* -1: wildcard */
	enum gd_ctrl_action action;
	struct gd_blob data;	/* REPLY */
	int short_len;		/* -1: none; else reply at most this many bytes */
	uint32_t delay_ms;	/* complete this much later */
	uint32_t stall_nth;	/* fault: the Nth match (1-based) STALLs; 0 never */
	uint32_t times;		/* 0: every match; else the first N, then the
				 * rules after it answer (replies that change) */
	int line;
};

/* ---- device-level faults ---- */
struct gd_faults {
	uint32_t disconnect_after_urbs;	/* 0: never; close after N URBs */
	uint32_t disconnect_after_ms;	/* 0: never; close N ms after import */
};

/* ---- BOS (USB 3.2 9.6.2) ---- */
/* One word or quoted string of a function option, as the script lexer
 * decoded it: the one decoder of escapes is the parser's. */
struct gd_fn_arg {
	char *text;			/* len bytes + a NUL; a string may
					 * hold NUL bytes of its own */
	size_t len;
	bool quoted;			/* written as "..." (escapes decoded) */
	int col;
};

/* One `key value...` line of a function block.  value is the rest of the
 * line as written, a single quoted string decoded, never NULL (fine for
 * words and numbers); args are its tokens decoded one by one (strings). */
struct gd_fn_opt {
	char *key;
	char *value;
	struct gd_fn_arg *args;
	size_t n_args;
	int line;
	int col;			/* of the value (of the key when empty) */
};

struct gd_bos {
	bool present;		/* generated for bcdUSB >= 0x0201 unless "bos off" */
	bool generated_caps;	/* include USB 2.0 ext (+ SS cap for super) */
	struct gd_blob extra;	/* raw capability descriptors, appended */
	int wTotalLength_override;
	int bNumDeviceCaps_override;
	int bLength_override;		/* -1: 5 */
	int bDescriptorType_override;	/* -1: 0x0f; a device may answer
					 * GET_DESCRIPTOR(BOS) with another */
};

struct gd_device {
	char *name;			/* from the file name or "name" line */
	char *path;			/* script path, for messages */
	enum usbip_speed speed;

	/* device descriptor */
	uint16_t bcdUSB;
	uint8_t bDeviceClass;
	uint8_t bDeviceSubClass;
	uint8_t bDeviceProtocol;
	uint8_t bMaxPacketSize0;
	uint16_t idVendor;
	uint16_t idProduct;
	uint16_t bcdDevice;
	uint8_t iManufacturer;
	uint8_t iProduct;
	uint8_t iSerialNumber;
	int bNumConfigurations_override;
	int bLength_override;

	/* strings: strings[i] is UTF-8 for index i (1..255), NULL if absent;
	 * string_raw[i] (if len) is served verbatim instead of generated. */
	uint16_t langids[GD_MAX_LANGIDS];
	size_t n_langids;		/* 0: no string descriptors at all */
	char *strings[256];
	struct gd_blob string_raw[256];

	struct gd_config *configs;
	size_t n_configs;

	struct gd_bos bos;
	bool qualifier;			/* serve DEVICE_QUALIFIER/OTHER_SPEED (high speed) */

	struct gd_ctrl_rule *rules;	/* first match wins, in script order */
	size_t n_rules;

	struct gd_faults faults;

	/* the device function (function.h): NULL for a pure script device */
	char *function;
	int function_line;		/* where the script names it */
	int function_col;
	struct gd_fn_opt *function_opts; /* its block's `key value...` lines */
	size_t n_function_opts;
};

void gd_model_free(struct gd_device *dev);

/* lookups used by the runtime and the generator */
const struct gd_config *gd_config_by_value(const struct gd_device *dev,
					   uint8_t bConfigurationValue);
const struct gd_alt *gd_alt_find(const struct gd_config *cfg, uint8_t intf,
				 uint8_t alt);
/* the number of distinct bInterfaceNumber values */
size_t gd_config_num_interfaces(const struct gd_config *cfg);

#endif /* USBRIG_MODEL_H */
