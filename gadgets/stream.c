// SPDX-License-Identifier: GPL-2.0
/*
 * stream.c - sampled streams: intervals, packet sizes, generated sources.
 * stream.h has the contract and the packet-size rule.
 */
#include "stream.h"


#define PI	3.14159265358979323846

uint32_t stream_interval_us(enum usbip_speed speed, uint8_t bInterval)
{
	unsigned int b = bInterval < 1 ? 1 : bInterval > 16 ? 16 : bInterval;
	uint32_t unit = speed == USBIP_SPEED_HIGH ||
			speed == USBIP_SPEED_SUPER ? 125 : 1000;

	return unit << (b - 1);
}

uint32_t stream_iso_capacity(const struct gd_endpoint *ep,
			     enum usbip_speed speed)
{
	uint32_t size = ep->wMaxPacketSize & 0x7ff;

	if (speed == USBIP_SPEED_SUPER && ep->ss.present)
		return ep->ss.wBytesPerInterval;
	if (speed == USBIP_SPEED_HIGH)
		return size * (1 + ((ep->wMaxPacketSize >> 11) & 3));
	return size;
}

uint32_t stream_frame_bytes(const struct gd_stream *s)
{
	return (uint32_t)s->channels * s->sample_bytes;
}

int stream_sized(const struct gd_stream *s)
{
	return s->packet_size || s->rate;
}

uint32_t stream_packet_bytes(const struct gd_stream *s, uint32_t interval_us,
			     uint64_t *acc)
{
	uint64_t frames;

	if (s->packet_size || !s->rate)
		return s->packet_size;
	*acc += (uint64_t)s->rate * interval_us;
	frames = *acc / STREAM_US_PER_S;
	*acc %= STREAM_US_PER_S;
	return (uint32_t)(frames * stream_frame_bytes(s));
}

uint64_t stream_max_packet(const struct gd_stream *s, uint32_t interval_us)
{
	uint64_t ft;

	if (s->packet_size || !s->rate)
		return s->packet_size;
	ft = (uint64_t)s->rate * interval_us;
	return (ft + STREAM_US_PER_S - 1) / STREAM_US_PER_S *
	       stream_frame_bytes(s);
}

uint32_t stream_count_sample(const struct gd_stream *s, uint64_t k)
{
	unsigned int bits = 8 * s->sample_bytes;

	return bits >= 32 ? (uint32_t)k : (uint32_t)(k & ((1ull << bits) - 1));
}

/* sin(x) for x in [-pi/2, pi/2], Taylor to x^21: off by < 3e-16 there
 * (libm is not linked; the server needs nothing else of it) */
static double sin_small(double x)
{
	double term = x, sum = x, x2 = x * x;
	int i;

	for (i = 1; i <= 10; i++) {
		term *= -x2 / ((2 * i) * (2 * i + 1));
		sum += term;
	}
	return sum;
}

uint32_t stream_sine_sample(const struct gd_ep_behaviour *beh, uint64_t f)
{
	const struct gd_stream *s = &beh->stream;
	unsigned int bits = 8 * s->sample_bytes;
	double full = (double)((1ull << (bits - 1)) - 1);
	double x, v;
	int64_t q;

	if (!s->rate)
		return 0;
	/* the phase exactly, in [0, 2 pi): (f x hz mod rate) / rate turns */
	x = 2 * PI * (double)((f % s->rate) * beh->sine_hz % s->rate) /
	    s->rate;
	if (x > PI)
		x -= 2 * PI;		/* [-pi, pi] */
	if (x > PI / 2)
		x = PI - x;		/* sin(pi - x) = sin(x) */
	else if (x < -PI / 2)
		x = -PI - x;
	v = sin_small(x) * full * beh->sine_level / 100;
	q = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
	if (bits == 8)
		q += 128;		/* USB audio PCM8 is unsigned */
	return stream_count_sample(s, (uint64_t)q);
}

void stream_fill(const struct gd_ep_behaviour *beh, uint64_t *off,
		 uint8_t *dst, size_t n)
{
	const struct gd_stream *s = &beh->stream;
	unsigned int sb = s->sample_bytes ? s->sample_bytes : 1;
	unsigned int ch = s->channels ? s->channels : 1;
	uint64_t k = *off / sb;
	unsigned int j = *off % sb;
	uint32_t v;

	*off += n;
	while (n) {
		v = beh->src == GD_SRC_SINE ? stream_sine_sample(beh, k / ch) :
		      stream_count_sample(s, k);
		for (; j < sb && n; j++, n--)
			*dst++ = (uint8_t)(v >> (8 * j));
		j = 0;
		k++;
	}
}
