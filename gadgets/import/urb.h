/* SPDX-License-Identifier: GPL-2.0 */
/*
 * urb.h - URB events from a capture, paired and turned into imp_dev
 * content.  The capture readers (usbmon.c: usbmon text; pcap.c: Linux
 * usbmon and Windows USBPcap captures) only decode their format into
 * struct imp_urb_ev, in capture order; everything after that is here, once:
 *
 *  - a submission ('S') waits, by URB id, for its completion ('C') or
 *    submission error ('E') with the same id and address;
 *  - a standard GET_DESCRIPTOR to the device (device, configuration,
 *    string, BOS, device qualifier) fills the imp_dev descriptor blobs,
 *    the longest reply winning; string index 0 gives the LANGIDs;
 *  - every other control transfer with a class, vendor or reserved type,
 *    and a standard GET_DESCRIPTOR to an interface or endpoint (a HID
 *    report descriptor), becomes imp_add_ctrl() in capture order, STALL
 *    for status -EPIPE; the other standard requests are answered by the
 *    gadget's own standard request handler and are not recorded;
 *  - a bulk or interrupt IN completion with data becomes one packet of
 *    the endpoint's sequence.
 *
 * Devices are keyed by bus:dev; the first event of each creates its
 * imp_dev.  Address 0 (a device before SET_ADDRESS) is skipped: the kernel
 * reads the device descriptor again once the device has its address.
 */
#ifndef USBRIG_IMPORT_URB_H
#define USBRIG_IMPORT_URB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "import.h"

/* transfer types, numbered as usbmon and USBPcap both number them */
enum imp_xfer {
	IMP_XFER_ISO = 0,
	IMP_XFER_INT = 1,
	IMP_XFER_CTRL = 2,
	IMP_XFER_BULK = 3,
};

struct imp_urb_ev {
	uint64_t id;		/* URB (usbmon) or IRP (USBPcap) id */
	char kind;		/* 'S' submit, 'C' complete, 'E' error */
	enum imp_xfer xfer;
	uint8_t ep;		/* endpoint number, bit 7 set for IN */
	int busnum;		/* -1: the format does not say (usbmon 1t) */
	int devnum;
	bool setup_valid;	/* 'S' of a control transfer: setup captured */
	uint8_t setup[8];	/* as on the wire */
	int status;		/* URB status: 0 or a negative errno */
	uint32_t length;	/* 'S': requested length; 'C': actual length */
	const uint8_t *data;	/* the captured bytes, data_len <= length */
	size_t data_len;
	size_t pos;		/* line (text) or frame number, from 1 */
};

struct imp_urb_pending;
struct imp_urb_devstate;

struct imp_urb_ctx {
	struct imp_set *set;
	const char *path;
	bool frames;		/* pos is a frame number, not a line */
	struct imp_urb_pending *pend;	/* control submissions in flight */
	size_t n_pend;
	size_t cap_pend;
	struct imp_urb_devstate *ds[IMP_MAX_DEVICES];	/* per device */
	size_t n_ds;
};

/* frames: true for binary captures ("file: frame N"), false for text
 * ("file:N") */
void imp_urb_init(struct imp_urb_ctx *c, struct imp_set *set,
		  const char *path, bool frames);
/* 0, or -EINVAL with err (out of memory, too many devices or URBs in
 * flight) */
int imp_urb_event(struct imp_urb_ctx *c, const struct imp_urb_ev *ev,
		  struct imp_error *err);
/* the end of the capture: notes what stayed unpaired and each descriptor
 * shorter than it declares (then sets imp_dev.truncated) */
void imp_urb_finish(struct imp_urb_ctx *c);
/* frees the context, not the set; safe after finish and on error paths */
void imp_urb_free(struct imp_urb_ctx *c);

#endif /* USBRIG_IMPORT_URB_H */
