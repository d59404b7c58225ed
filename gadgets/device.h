/* SPDX-License-Identifier: GPL-2.0 */
/*
 * device.h - one gadget at run time: URBs in, completions out.
 *
 * The device knows nothing of sockets.  The server (server.c) decodes a
 * CMD_SUBMIT into a struct urb and hands it over with gdev_submit(); the
 * device completes it later (or at once) through host->complete(), and the
 * server encodes the RET_SUBMIT.  gdev_unlink() takes a still-pending URB
 * back without completing it.  Timers (reply delays, disconnect faults)
 * run on the event_base given at creation.
 *
 * ep0 is dispatched in this order: script control rules that match
 * (a rule with a wildcard bmRequestType never matches a standard
 * request), the standard requests (stdreq.c), the device function, else
 * STALL.  Other endpoints run the behaviour their script declares.
 */
#ifndef USBRIG_DEVICE_H
#define USBRIG_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "usbip_wire.h"

struct event_base;
struct event;
struct fn_ops;

struct urb {
	/* from CMD_SUBMIT, host order */
	uint32_t seqnum;
	uint8_t ep;			/* 0..15 */
	bool dir_in;
	uint32_t transfer_flags;
	uint32_t length;		/* transfer_buffer_length, <= USBIP_MAX_TRANSFER */
	int32_t start_frame;
	int32_t interval;
	int32_t number_of_packets;	/* > 0 only for isochronous */
	uint8_t setup[8];		/* raw, as on the wire */
	uint8_t *buf;			/* length bytes: OUT data in, IN data out */
	struct usbip_iso_desc *iso;	/* number_of_packets entries */

	/* set by the device before completing */
	uint32_t actual_length;		/* IN: <= length; OUT: bytes taken */
	int32_t status;			/* 0 or -EPIPE, -EOVERFLOW, ... */
	int32_t error_count;

	/* owned by the device while pending */
	struct urb *next;		/* endpoint queue link */
	struct event *timer;		/* delayed completion */
	uint64_t due_us;		/* isochronous: completes then */
	struct gdev *dev;

	void *owner;			/* the server's connection */
};

/*
 * ---- pending URB queues ----
 * A FIFO of URBs held without completing them (a pending URB is a NAK to
 * the host): the endpoints of the runtime and the device functions use it.  The queue links URBs through urb->next, so an URB is
 * in at most one queue and its owner must not touch urb->next meanwhile;
 * push, pop and remove leave urb->next NULL on the URB that leaves.  What
 * a function still holds at reset() goes through gdev_urbq_flush(), at
 * detach() through gdev_urbq_free(), and unlink() asks gdev_urbq_remove().
 */
struct gdev_urbq {
	struct urb *head;
	struct urb **tail;
};

/* What the device needs from whoever feeds it URBs. */
struct gdev_host {
	/* The URB is done: encode RET_SUBMIT and free it.  May be called from
	 * inside gdev_submit(). */
	void (*complete)(void *ctx, struct urb *urb);
	/* A disconnect fault fired: drop the connection (not from inside
	 * gdev_submit(); always from the event loop). */
	void (*disconnect)(void *ctx, const char *why);
};

/* Per-endpoint run-time state, index [dir_in][ep]. */
struct gdev_ep {
	const struct gd_endpoint *desc;	/* NULL: not in the active config */
	bool halted;
	struct gdev_urbq pending;	/* URBs waiting (NAK) */
	uint8_t *fifo;			/* loopback data waiting for IN */
	size_t fifo_len;
	size_t fifo_cap;
	size_t fifo_head;		/* data is fifo[fifo_head..+fifo_len) */
	size_t seq_pos;			/* SEQUENCE: next packet */
	uint64_t source_off;		/* SOURCE: bytes of the stream sent */
	uint32_t urbs_seen;		/* for stall_nth */
	uint64_t iso_acc;		/* stream.h: carried frame-us remainder */
	uint64_t iso_due_us;		/* isochronous: when the last interval
					 * queued ends (CLOCK_MONOTONIC) */
	struct event *iso_timer;	/* completes the URBs of pending, in
					 * order, as each one's due_us comes */
};

/*
 * A file an endpoint's `source file` reads or its `sink file` writes
 * (epfile.c).  Opened at attach and kept until detach, across
 * configurations and alternate settings: a sink records the whole
 * connection, in arrival order; a source starts over at the beginning
 * whenever its endpoint is enabled (source_off).
 */
struct gdev_file {
	const struct gd_endpoint *ep;
	bool sizes;			/* the endpoint's `sizes file` */
	int fd;				/* sink, sizes: truncated at attach;
					 * -1 source */
	uint8_t *data;			/* source: the whole file */
	size_t len;
	bool failed;			/* a write failed (logged once) */
};

#define GDEV_SOURCE_FILE_MAX	(64 * 1024 * 1024)

#define GDEV_FIFO_MAX	(1024 * 1024)	/* loopback buffering; beyond it OUT NAKs */

struct gdev {
	const struct gd_device *model;
	struct event_base *base;
	const struct gdev_host *host;
	void *host_ctx;

	const struct gd_config *config;	/* NULL: address state */
	uint8_t alt[256];		/* current alternate setting per interface */
	bool remote_wakeup;
	struct gdev_ep ep[2][16];
	uint32_t *rule_hits;		/* per rule, for stall_nth */
	uint64_t urbs;			/* URBs submitted since attach */
	struct event *disconnect_timer;
	struct urb *ep0_pending;	/* delayed control replies */
	struct urb *delayed;		/* delayed completions, other eps */
	const struct fn_ops *fops; /* model->function's, or NULL */
	struct gdev_file *files;	/* epfile.c; from attach to detach */
	size_t n_files;
	void *function_state;		/* the device function's own */
};

struct gdev *gdev_new(const struct gd_device *model, struct event_base *base);
void gdev_free(struct gdev *dev);

/* Start serving a connection: resets state, arms the disconnect timer,
 * attaches the function.  On failure (negative errno) the device is left
 * as if never attached: no host pointer, no timer, no function state, so
 * the caller may free ctx and need not call gdev_detach(). */
int gdev_attach(struct gdev *dev, const struct gdev_host *host, void *ctx);
/* Connection gone: every pending URB is freed via free_urb without
 * completion, state goes back to unconfigured. */
void gdev_detach(struct gdev *dev, void (*free_urb)(struct urb *urb));

/* Takes ownership of urb; completion via host->complete. */
void gdev_submit(struct gdev *dev, struct urb *urb);
/* The pending URB with that seqnum, removed from every queue and timer,
 * or NULL when it is not pending (already completed or never seen). */
struct urb *gdev_unlink(struct gdev *dev, uint32_t seqnum);

/* for stdreq.c: apply SET_CONFIGURATION / SET_INTERFACE / endpoint halt */
int gdev_set_config(struct gdev *dev, uint8_t value);
int gdev_set_interface(struct gdev *dev, uint8_t intf, uint8_t alt);
struct gdev_ep *gdev_ep_by_addr(struct gdev *dev, uint8_t addr);
void gdev_ep_set_halt(struct gdev *dev, struct gdev_ep *ep, bool halt);

/* Empty queue; required before any other call. */
void gdev_urbq_init(struct gdev_urbq *q);
void gdev_urbq_push(struct gdev_urbq *q, struct urb *urb);
/* The oldest URB, taken out of the queue, or NULL. */
struct urb *gdev_urbq_pop(struct gdev_urbq *q);
/* The URB with that seqnum, taken out of the queue, or NULL. */
struct urb *gdev_urbq_remove(struct gdev_urbq *q, uint32_t seqnum);
/* Complete every queued URB with status and actual 0 (reset: -ESHUTDOWN). */
void gdev_urbq_flush(struct gdev *dev, struct gdev_urbq *q, int status);
/* Free every queued URB with free_urb without completing it (detach); a
 * NULL free_urb just empties the queue. */
void gdev_urbq_free(struct gdev_urbq *q, void (*free_urb)(struct urb *urb));

/* ---- epfile.c: the files of `source file`, `sink file`, `sizes file` ---- */
/* Open every one the model names (sinks truncated); on failure (negative
 * errno, logged with the path) none stays open. */
int gdev_files_open(struct gdev *dev);
void gdev_files_close(struct gdev *dev);
/* The file of an endpoint's source or sink, or NULL. */
struct gdev_file *gdev_file_of(struct gdev *dev, const struct gd_endpoint *ep);
/* Its `sizes file`, or NULL. */
struct gdev_file *gdev_sizes_of(struct gdev *dev, const struct gd_endpoint *ep);
/* n bytes of a source file from byte *off of its stream (zeros past the
 * end, or the file again with `repeat`); advances *off. */
void gdev_file_read(const struct gdev_file *f, bool repeat, uint64_t *off,
		    uint8_t *dst, size_t n);
/* Append to a sink file; a failure is logged once and the data dropped. */
void gdev_file_write(struct gdev_file *f, const uint8_t *src, size_t n);

/* Complete an URB the device or its function holds (status 0 or negative
 * errno). */
void gdev_complete(struct gdev *dev, struct urb *urb, int status,
		   uint32_t actual);

/*
 * An isochronous URB a function took and filled: its packets' data packed
 * back to back from urb->buf (USB/IP's layout, see iso_submit() in
 * device.c), each urb->iso[i].actual_length and status set (without a
 * packet list, urb->actual_length).  It completes with status 0 at the
 * bus's pace, number_of_packets service intervals after the URB queued
 * before it on the endpoint, which holds it meanwhile (unlink and a new
 * alternate setting find it there).
 */
void gdev_iso_complete(struct gdev *dev, struct urb *urb);

#endif /* USBRIG_DEVICE_H */
