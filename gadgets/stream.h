/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stream.h - a sampled stream on an endpoint (struct gd_stream, model.h):
 * the service interval of an isochronous endpoint, how many bytes each
 * interval carries, and the generated sources (count, sine).
 *
 * Pure functions of the model, no I/O and no state but what the caller
 * keeps: the parser validates with them, device.c runs them, the unit
 * tests check them.
 *
 * Packet sizes from a rate (USB Audio 1.0 5.2.3.2, "adaptive" and
 * "asynchronous" sources; what real devices do): an interval of T us at R
 * Hz carries R x T / 10^6 frames, which is a fraction for 44100 Hz at 1 ms.
 * The remainder is carried from one interval to the next, so interval i
 * carries floor((i + 1) R T / 10^6) - floor(i R T / 10^6) frames: 44100 Hz
 * at 1 ms gives nine packets of 44 frames and then one of 45, and over any
 * run of intervals the stream is never more than one frame off the rate.
 */
#ifndef USBRIG_STREAM_H
#define USBRIG_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define STREAM_US_PER_S		1000000u
#define STREAM_MAX_SAMPLE_BYTES	4
#define STREAM_SINE_LEVEL	50	/* % of full scale when not given */

/* The service interval of an isochronous endpoint in microseconds: 2^(b-1)
 * frames of 1 ms at low and full speed, 2^(b-1) microframes of 125 us at
 * high and super speed (USB 2.0 9.6.6); bInterval 0 counts as 1, above 16
 * as 16. */
uint32_t stream_interval_us(enum usbip_speed speed, uint8_t bInterval);

/* What one service interval of an isochronous endpoint can carry: bits
 * 10:0 of wMaxPacketSize, times the transactions of bits 12:11 at high
 * speed (USB 2.0 5.6.4), the companion's wBytesPerInterval at super
 * speed. */
uint32_t stream_iso_capacity(const struct gd_endpoint *ep,
			     enum usbip_speed speed);

/* Bytes in one frame: channels x sample_bytes. */
uint32_t stream_frame_bytes(const struct gd_stream *s);

/* Does the stream size its packets (a rate or a fixed packet size)?  If
 * not, an isochronous IN packet is as long as the host asks. */
int stream_sized(const struct gd_stream *s);

/* The bytes of the next interval; *acc is the carried remainder (frame-us,
 * below 10^6), 0 at the start of the stream. */
uint32_t stream_packet_bytes(const struct gd_stream *s, uint32_t interval_us,
			     uint64_t *acc);

/* The most any interval carries: what wMaxPacketSize must allow. */
uint64_t stream_max_packet(const struct gd_stream *s, uint32_t interval_us);

/* Fill n bytes of a generated source (GD_SRC_COUNT, GD_SRC_SINE) starting
 * at byte *off of the stream, and advance *off.  Any byte offset works, so
 * URBs and packets may cut the stream anywhere. */
void stream_fill(const struct gd_ep_behaviour *beh, uint64_t *off,
		 uint8_t *dst, size_t n);

/* Sample k of the count source in sample_bytes bytes: k mod 2^bits. */
uint32_t stream_count_sample(const struct gd_stream *s, uint64_t k);
/* The sine source's sample for frame f (every channel), as stored
 * (unsigned bits, two's complement for signed formats). */
uint32_t stream_sine_sample(const struct gd_ep_behaviour *beh, uint64_t f);

#endif /* USBRIG_STREAM_H */
