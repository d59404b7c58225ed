// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_stdreq.c - ep0 of a scripted device, without the socket: script
 * control rules (stall-nth, times, short, delay), the standard requests
 * (gadgets/stdreq.c, descriptors from desc.c), the device functions'
 * control() (acm, ftdi, pl2303, hid, msc, zero), and the endpoint URBs
 * whose state they change (SET_CONFIGURATION, SET_INTERFACE, halts;
 * gadgets/device.c, urbq.c, fn/).
 *
 * Input: one byte choosing the built-in gadget (fz_gadget()), then records
 * until the input ends, each a kind byte k:
 *
 *	k & 3 == 0	control URB: 8-byte SETUP, u16 buffer length (taken
 *			modulo 4097), then for an OUT request min(wLength,
 *			length) bytes of data stage
 *	k & 3 == 1	endpoint URB: a byte of endpoint address (bit 7 IN,
 *			number & 15, 0 taken as 1; bit 6 clear: the length is
 *			taken modulo 1025, which keeps runs fast), u16
 *			length, OUT data
 *	k & 3 == 2	unlink: the URB submitted a byte's value ago
 *	k & 3 == 3	advance the clock by 2^(k >> 4 & 15) ms - 1 and run
 *			the loop (delays and the disconnect fault fire);
 *			bit 2: detach and attach again (a reconnection; at
 *			most FZ_MAX_REATTACH per input: msc's attach
 *			allocates its RAM disk)
 *
 * Oracle, besides the sanitizers: a completion never reports more than
 * the buffer, an IN control transfer never more than wLength, and every
 * URB ends exactly once (completed, unlinked or freed at detach).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "device.h"
#include "fuzz.h"
#include "usbip_wire.h"

#define FZ_MAX_LIVE	512	/* URBs the device may hold for us */
#define FZ_MAX_REATTACH	4	/* reconnections per input */

static struct event_base *base;
static unsigned int live;		/* URBs the device holds */
static uint32_t next_seq;
static bool disconnected;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	base = event_base_new();
	if (!base)
		fz_fail("event_base_new");
	fz_gadget(0);
	return 0;
}

static void urb_free(struct urb *urb)
{
	if (!live)
		fz_fail("URB seq=%u ended twice", urb->seqnum);
	live--;
	free(urb->buf);
	free(urb->iso);
	free(urb);
}

static void host_complete(void *ctx, struct urb *urb)
{
	struct usb_setup s;

	(void)ctx;
	if (urb->actual_length > urb->length)
		fz_fail("seq=%u: actual %u > length %u", urb->seqnum,
			urb->actual_length, urb->length);
	if (urb->ep == 0 && urb->dir_in && !urb->status) {
		usb_setup_unpack(&s, urb->setup);
		if (urb->actual_length > s.wLength)
			fz_fail("seq=%u: control IN actual %u > wLength %u",
				urb->seqnum, urb->actual_length, s.wLength);
	}
	urb_free(urb);
}

static void host_disconnect(void *ctx, const char *why)
{
	(void)ctx;
	(void)why;
	disconnected = true;
}

static const struct gdev_host host = {
	.complete = host_complete,
	.disconnect = host_disconnect,
};

static struct urb *urb_new(uint8_t ep, bool in, uint32_t len)
{
	struct urb *urb = calloc(1, sizeof(*urb));

	if (!urb)
		fz_fail("out of memory");
	urb->buf = calloc(1, len ? len : 1);
	if (!urb->buf)
		fz_fail("out of memory");
	urb->seqnum = ++next_seq;
	urb->ep = ep;
	urb->dir_in = in;
	urb->length = len;
	live++;
	return urb;
}

static void ctrl_urb(struct gdev *dev, struct fz_in *in)
{
	struct usb_setup s;
	uint8_t setup[8];
	size_t n = sizeof(setup);
	const uint8_t *p;
	struct urb *urb;
	uint32_t len;
	bool dir_in;

	p = fz_bytes(in, &n);
	memset(setup, 0, sizeof(setup));
	memcpy(setup, p, n);
	usb_setup_unpack(&s, setup);
	dir_in = s.bmRequestType & 0x80;
	len = fz_u16(in) % 4097;
	urb = urb_new(0, dir_in, len);
	memcpy(urb->setup, setup, sizeof(setup));
	if (!dir_in) {
		n = s.wLength < len ? s.wLength : len;
		p = fz_bytes(in, &n);
		if (n)
			memcpy(urb->buf, p, n);
	}
	gdev_submit(dev, urb);
}

static void ep_urb(struct gdev *dev, struct fz_in *in)
{
	uint8_t addr = fz_u8(in);
	uint8_t ep = addr & 15 ? addr & 15 : 1;
	bool dir_in = addr & 0x80;
	uint32_t len = addr & 0x40 ? fz_u16(in) : fz_u16(in) % 1025u;
	struct urb *urb = urb_new(ep, dir_in, len);
	const uint8_t *p;
	size_t n = len;

	if (!dir_in) {
		p = fz_bytes(in, &n);
		if (n)
			memcpy(urb->buf, p, n);
	}
	gdev_submit(dev, urb);
}

static void run_loop(void)
{
	int i;

	for (i = 0; i < 4; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

static void attach(struct gdev *dev)
{
	if (gdev_attach(dev, &host, NULL))
		fz_fail("gdev_attach");
	disconnected = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	const struct gd_device *m;
	unsigned int reattached = 0;
	struct urb *urb;
	struct gdev *dev;
	uint8_t k;

	m = fz_gadget(fz_u8(&in));
	dev = gdev_new(m, base);
	if (!dev)
		fz_fail("gdev_new");
	attach(dev);
	while (in.left) {
		if (disconnected) {
			gdev_detach(dev, urb_free);
			attach(dev);
		}
		k = fz_u8(&in);
		switch (k & 3) {
		case 0:
			ctrl_urb(dev, &in);
			break;
		case 1:
			if (live < FZ_MAX_LIVE)
				ep_urb(dev, &in);
			break;
		case 2:
			urb = gdev_unlink(dev, next_seq - fz_u8(&in));
			if (urb)
				urb_free(urb);
			break;
		default:
			fz_clock_advance_ms((1u << (k >> 4 & 15)) - 1);
			run_loop();
			if ((k & 4) && reattached++ < FZ_MAX_REATTACH) {
				gdev_detach(dev, urb_free);
				attach(dev);
			}
			break;
		}
	}
	run_loop();
	gdev_detach(dev, urb_free);
	gdev_free(dev);
	if (live)
		fz_fail("%u URBs neither completed nor freed", live);
	return 0;
}
