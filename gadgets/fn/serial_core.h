/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serial_core.h - what the serial device functions share (fn/acm.c,
 * fn/ftdi.c, fn/pl2303.c, fn/cp210x.c, fn/ch341.c, fn/mct_u232.c): the
 * line settings the host made, the peer at the far end of the line, and
 * the bytes on their way to the host.
 *
 * Each function decodes its own chip's requests into a struct ser_line and
 * frames the data its driver expects; the bytes themselves go through a
 * struct ser_port:
 *
 *   bulk OUT URBs --ser_port_submit_out()--> peer --> tx queue
 *   tx queue --ser_port_take()--> bulk IN URBs (framed by the function)
 *
 * The peer echoes every byte (option `echo on`, the default) and answers
 * scripted requests (option `respond "REQ" "REPLY" ...`): when the bytes
 * received so far end with REQ, REPLY is queued after the echo, its %
 * templates filled in from the line settings (docs/gadget-format.md,
 * "Serial functions: common options").
 *
 * Back-pressure: an OUT URB is consumed byte by byte while the tx queue has
 * room for the worst case of one more byte (its echo plus the longest
 * reply); the rest waits and the URB stays pending (a NAK) until IN URBs
 * drain the queue.  So the queue never exceeds SER_TX_CAP.
 */
#ifndef USBRIG_SERIAL_CORE_H
#define USBRIG_SERIAL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "function.h"
#include "model.h"
#include "script.h"

#define SER_MAX_PAIRS	16	/* respond pairs */
#define SER_MAX_REQ	64	/* bytes of one request */
#define SER_MAX_REPLY	256	/* bytes of one reply, as written */
#define SER_MAX_EXPAND	(SER_MAX_REPLY * 5)	/* a 2-byte %x gives <= 10 */
#define SER_TX_CAP	(64 * 1024)	/* bytes queued toward the host */

/* ---- line settings, as the host set them ---- */
struct ser_line {
	uint32_t baud;		/* bits per second, as the chip would run */
	uint8_t data_bits;	/* 5..8 (16 for CDC is kept as given) */
	uint8_t parity;		/* CDC codes: 0 N, 1 O, 2 E, 3 M, 4 S */
	uint8_t stop;		/* CDC codes: 0 = 1, 1 = 1.5, 2 = 2 stop bits */
	bool dtr;
	bool rts;
	bool brk;		/* break is on */
	uint32_t breaks;	/* breaks started since attach */
};

/* 9600 8N1, DTR and RTS low */
void ser_line_init(struct ser_line *l);
/* "8N1", "7E2", "8N1.5": at least 8 bytes */
void ser_line_framing(const struct ser_line *l, char *buf, size_t size);
/* Turn break on or off (counts the starts). */
void ser_line_set_break(struct ser_line *l, bool on);

/* ---- the peer and the queue toward the host ---- */
struct ser_pair {
	uint8_t req[SER_MAX_REQ];
	size_t req_len;
	uint8_t reply[SER_MAX_REPLY];
	size_t reply_len;
};

struct ser_port {
	bool echo;
	struct ser_pair pairs[SER_MAX_PAIRS];
	size_t n_pairs;
	size_t win_max;			/* longest request */
	uint8_t win[SER_MAX_REQ];	/* the last bytes received */
	size_t win_len;

	struct ser_line line;

	uint8_t *tx;			/* SER_TX_CAP bytes */
	size_t tx_head;			/* data is tx[tx_head..+tx_len) */
	size_t tx_len;

	struct gdev_urbq out;		/* bulk OUT URBs not fully consumed */
	size_t out_off;			/* bytes of out.head consumed */
	uint64_t rx_bytes;		/* received from the host */
};

/* The keys every serial function takes (for fn_opt_only). */
#define SER_COMMON_KEYS "echo", "respond"

/* validate: check `echo` and `respond`. */
int ser_opts_check(const struct gd_device *model, struct script_error *err);

/* attach: allocate the queue and read the options (already validated).
 * 0 or -ENOMEM. */
int ser_port_init(struct ser_port *p, const struct gd_device *model);
/* Free the queue and every URB held (detach), or complete them (reset:
 * status -ESHUTDOWN) when free_urb is NULL. */
void ser_port_release(struct gdev *dev, struct ser_port *p,
		      void (*free_urb)(struct urb *urb));
/* Line and queues back to their state after attach (configuration
 * change); held URBs complete with -ESHUTDOWN. */
void ser_port_reset(struct gdev *dev, struct ser_port *p);

/* Drop what waits for the host (a chip's "purge RX"). */
void ser_port_purge_tx(struct ser_port *p);

/* Queue a bulk OUT URB and consume what fits. */
void ser_port_submit_out(struct gdev *dev, struct ser_port *p,
			 struct urb *urb);
/* Consume queued OUT data while it fits; true if any URB completed or any
 * byte was taken. */
bool ser_port_pump(struct gdev *dev, struct ser_port *p);
/* Bytes waiting for the host. */
static inline size_t ser_port_pending(const struct ser_port *p)
{
	return p->tx_len;
}
/* Move up to n bytes toward the host into dst; returns how many. */
size_t ser_port_take(struct ser_port *p, uint8_t *dst, size_t n);
/* Queue bytes toward the host as if the far end sent them (for tests and
 * functions that inject data); returns how many fit. */
size_t ser_port_inject(struct ser_port *p, const uint8_t *src, size_t n);
/* Take the OUT URB with that seqnum back, or NULL. */
struct urb *ser_port_unlink(struct ser_port *p, uint32_t seqnum);

/* The next byte waiting for the host, or -1 (a chip that escapes some
 * bytes looks before it takes). */
static inline int ser_port_peek(const struct ser_port *p)
{
	return p->tx_len ? p->tx[p->tx_head] : -1;
}

/* ---- the endpoints of a serial interface ---- */
struct ser_eps {
	const struct gd_alt *alt;	/* the interface (alternate setting 0) */
	const struct gd_endpoint *irq;	/* interrupt IN, if asked for */
	const struct gd_endpoint *in, *out;	/* bulk */
};

/* The first interface, alternate setting 0 of any configuration, with a
 * bulk IN and a bulk OUT endpoint (and an interrupt IN one if irq):
 * 0 or -ENODEV. */
int ser_find_eps(const struct gd_device *m, bool irq, struct ser_eps *e);

/* ---- a bulk pair carrying the line ----
 * OUT URBs go to the peer (ser_port_submit_out()); IN URBs wait until
 * bytes are pending and then take what fits, framed by fill (NULL: as they
 * are; a fill returns the bytes it wrote to buf, at most len).  Used as is
 * by the chips with unframed data (fn/cp210x.c, fn/ch341.c, and
 * fn/mct_u232.c, whose IN endpoint is an interrupt one) and inside
 * struct ser_cdc.
 *
 * idle_addr (0: none) names a status endpoint whose lines never change
 * here, so its URBs wait until unlinked, reset or detach (ch341 and
 * mct_u232 submit one at open and read the lines by control request).
 */
struct ser_pipe {
	uint8_t in_addr, out_addr;	/* bEndpointAddress */
	uint8_t idle_addr;		/* set by the caller, or 0 */
	size_t (*fill)(struct ser_pipe *sp, uint8_t *buf, size_t len);
	struct ser_port port;
	struct gdev_urbq in;		/* IN URBs waiting for data */
	struct gdev_urbq idle;		/* idle_addr's URBs */
};

/* attach: the endpoints and ser_port_init(); 0 or -ENOMEM. */
int ser_pipe_init(struct ser_pipe *sp, const struct gd_device *model,
		  const struct gd_endpoint *in, const struct gd_endpoint *out);
/* detach: free every URB held with free_urb. */
void ser_pipe_release(struct gdev *dev, struct ser_pipe *sp,
		      void (*free_urb)(struct urb *urb));
/* reset: held URBs complete with -ESHUTDOWN; line and queue as at attach. */
void ser_pipe_reset(struct gdev *dev, struct ser_pipe *sp);
/* Serve waiting IN URBs, refilling the queue from OUT data (call after
 * anything that queues bytes or changes the framing). */
void ser_pipe_kick(struct gdev *dev, struct ser_pipe *sp);
/* An URB for any of its endpoints: 0, taken; else -ENOENT. */
int ser_pipe_submit(struct gdev *dev, struct ser_pipe *sp, struct urb *urb);
struct urb *ser_pipe_unlink(struct ser_pipe *sp, uint32_t seqnum);

/* ---- CDC SERIAL_STATE notifications on an interrupt IN endpoint ---- */
#define SER_NOTIFY_LEN	10	/* 8-byte header + 2-byte UART state */
#define SER_NOTIFY_MAX	8	/* queued; more are dropped (logged) */

struct ser_notify {
	uint8_t q[SER_NOTIFY_MAX][SER_NOTIFY_LEN];
	size_t first, n;
	size_t off;			/* bytes of q[first] already sent */
	uint16_t mps;			/* the endpoint's wMaxPacketSize */
	struct gdev_urbq urbs;		/* interrupt IN URBs waiting */
};

void ser_notify_init(struct ser_notify *nq, uint16_t mps);
/* Queue SERIAL_STATE (CDC PSTN 6.5.4) for interface wIndex. */
void ser_notify_serial_state(struct ser_notify *nq, uint16_t wIndex,
			     uint16_t state);
/* Answer waiting URBs: each gets at most one packet of one notification
 * (a longer one continues in the next URB, as cdc-acm reassembles). */
void ser_notify_serve(struct gdev *dev, struct ser_notify *nq);
/* Drop the queued notifications; URBs complete with status (reset) or
 * are freed (free_urb, detach). */
void ser_notify_clear(struct gdev *dev, struct ser_notify *nq, int status,
		      void (*free_urb)(struct urb *urb));

/* Log the line settings once they changed ("<who>: line 38400 8N1"). */
void ser_line_log(const char *who, const struct ser_line *l);

/* ---- a CDC-style serial function (fn/acm.c, fn/pl2303.c) ----
 * A status interrupt IN endpoint carrying SERIAL_STATE, a bulk pair to the
 * peer, and the CDC line requests (PSTN 6.3.10-6.3.12; the PL2303 takes the
 * same codes and layout on its interface): SET_LINE_CODING stores the
 * 7 bytes and returns them unchanged on GET_LINE_CODING (9600 8N1 at
 * first); SET_CONTROL_LINE_STATE stores DTR and RTS and, each time DTR goes
 * from 0 to 1, queues SERIAL_STATE with serial_state (unless -1).
 *
 * The function fills who, the three endpoints, notify_index and
 * serial_state, then calls ser_cdc_init() in attach; ser_cdc_release() in
 * detach, ser_cdc_reset() in reset, ser_cdc_submit() / ser_cdc_unlink()
 * for its submit/unlink.  Its own requests (break, vendor) stay its own.
 */
#define SER_CODING_LEN	7	/* struct usb_cdc_line_coding */

struct ser_cdc {
	const char *who;		/* log prefix */
	const struct gd_endpoint *notify_ep, *in_ep, *out_ep;
	uint16_t notify_index;		/* wIndex of SERIAL_STATE */
	int serial_state;		/* -1: never sent */
	/* the baud rate of a line coding; NULL: dwDTERate (LE32) */
	uint32_t (*decode_baud)(const uint8_t *coding);

	uint8_t coding[SER_CODING_LEN];	/* as last set */
	struct ser_pipe pipe;		/* the bulk pair and its line */
	struct ser_notify notify;
};

/* The `serial-state N|off` option (off: *state = -1; absent: def). */
int ser_serial_state_opt(const struct gd_device *model, uint64_t def,
			 uint64_t max, int *state, struct script_error *err);
/* attach: 0 or -ENOMEM (ser_port_init()). */
int ser_cdc_init(struct ser_cdc *c, const struct gd_device *model);
/* detach: free every URB held with free_urb. */
void ser_cdc_release(struct gdev *dev, struct ser_cdc *c,
		     void (*free_urb)(struct urb *urb));
/* reset: held URBs complete with -ESHUTDOWN; line coding back to 9600 8N1. */
void ser_cdc_reset(struct gdev *dev, struct ser_cdc *c);
/* An URB for one of the three endpoints: 0, taken; else -ENOENT. */
int ser_cdc_submit(struct gdev *dev, struct ser_cdc *c, struct urb *urb);
struct urb *ser_cdc_unlink(struct ser_cdc *c, uint32_t seqnum);
/* SET_LINE_CODING, GET_LINE_CODING, SET_CONTROL_LINE_STATE (the caller
 * checked type and recipient): as a function's control(); -ENOENT for any
 * other bRequest. */
int ser_cdc_control(struct gdev *dev, struct ser_cdc *c,
		    const struct usb_setup *s, uint8_t *data, size_t len);

#endif /* USBRIG_SERIAL_CORE_H */
