// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_uvc.c - the `uvc` device function (gadgets/fn/uvc.c) in process
 * with the shipped example scripts, driven with the requests and URBs
 * uvcvideo sends: the probe and commit negotiation against golden bytes
 * (UVC 1.1 Table 4-47, field by field), the error code control after a
 * STALL, bulk payloads across URBs (headers, FID and EOF, the zero-length
 * URB a payload that fills its last URB owes), isochronous packets with
 * 12-byte headers at the bus's pace, the test pattern itself
 * (gadgets/fn/uvc_pattern.c) and the options' errors.
 *
 * Runs from the repository root (it reads gadgets/examples/).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fixture.h"
#include "fn/uvc_pattern.h"
#include "log.h"
#include "model.h"

#define BULK	"gadgets/examples/uvc-bulk.gadget"
#define ISO	"gadgets/examples/uvc-iso.gadget"

#define VS	0x0001		/* wIndex: entity 0, interface 1 */
#define PROBE	0x0100		/* wValue: VS_PROBE_CONTROL << 8 */
#define COMMIT	0x0200
#define GET	0xa1		/* class, interface, device to host */
#define SET	0x21

#define SET_CUR		0x01
#define GET_CUR		0x81
#define GET_MIN		0x82
#define GET_MAX		0x83
#define GET_LEN		0x85
#define GET_INFO	0x86
#define GET_DEF		0x87

/* GET_DEF of the probe control of uvc-bulk.gadget, UVC 1.1: 34 bytes */
static const uint8_t bulk_def[34] = {
	0x00, 0x00,		/* bmHint */
	0x01,			/* bFormatIndex */
	0x01,			/* bFrameIndex: 160x120 */
	0x80, 0x84, 0x1e, 0x00,	/* dwFrameInterval 2000000 (5 fps) */
	0x00, 0x00,		/* wKeyFrameRate */
	0x00, 0x00,		/* wPFrameRate */
	0x00, 0x00,		/* wCompQuality */
	0x00, 0x00,		/* wCompWindowSize */
	0x00, 0x00,		/* wDelay */
	0x00, 0x96, 0x00, 0x00,	/* dwMaxVideoFrameSize 38400 */
	0x00, 0x40, 0x00, 0x00,	/* dwMaxPayloadTransferSize: payload-size 16384 */
	0x00, 0x6c, 0xdc, 0x02,	/* dwClockFrequency 48 MHz */
	0x03,			/* bmFramingInfo: FID, EOF */
	0x01, 0x01, 0x01,	/* bPreferedVersion, bMinVersion, bMaxVersion */
};

static void start(struct fx *fx, const char *path)
{
	fx_start_file(fx, path, NULL, NULL);
}

/* GET_CUR of VC_REQUEST_ERROR_CODE_CONTROL: the last request's code. */
static uint8_t error_code(struct fx *fx)
{
	struct urb *u = fx_ctrl(fx, GET, GET_CUR, 0x0200, 0x0000, 1, NULL);

	fx_expect_ok(fx, u, 1);
	return u->buf[0];
}

static struct urb *probe_get(struct fx *fx, uint8_t req, uint16_t cs)
{
	struct urb *u = fx_ctrl(fx, GET, req, cs, VS, 34, NULL);

	fx_expect_ok(fx, u, 34);
	return u;
}

/* SET_CUR with frame index, interval; the rest as GET_DEF says. */
static void probe_set(struct fx *fx, uint16_t cs, uint8_t frame,
		      uint32_t interval)
{
	uint8_t b[34];

	memcpy(b, bulk_def, sizeof(b));
	b[3] = frame;
	b[4] = interval;
	b[5] = interval >> 8;
	b[6] = interval >> 16;
	b[7] = interval >> 24;
	fx_expect_ok(fx, fx_ctrl(fx, SET, SET_CUR, cs, VS, 34, b), 34);
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void test_probe_commit(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start(fx, BULK);
	u = fx_ctrl(fx, GET, GET_INFO, PROBE, VS, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x03);		/* GET and SET */
	u = fx_ctrl(fx, GET, GET_LEN, COMMIT, VS, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0], 34);		/* UVC 1.1 */
	assert_int_equal(u->buf[1], 0);
	u = probe_get(fx, GET_DEF, PROBE);
	assert_memory_equal(u->buf, bulk_def, 34);
	/* before any SET_CUR, GET_CUR is the default too */
	u = probe_get(fx, GET_CUR, PROBE);
	assert_memory_equal(u->buf, bulk_def, 34);
	/* a short buffer gets what fits */
	u = fx_ctrl(fx, GET, GET_CUR, PROBE, VS, 26, NULL);
	fx_expect_ok(fx, u, 26);

	/* frame 2 (80x60) at 110 ms: the nearest interval is 100 ms */
	probe_set(fx, PROBE, 2, 1100000);
	u = probe_get(fx, GET_CUR, PROBE);
	assert_int_equal(u->buf[3], 2);
	assert_int_equal(le32(u->buf + 4), 1000000);
	assert_int_equal(le32(u->buf + 18), 9600);	/* 80 x 60 x 2 */
	assert_int_equal(le32(u->buf + 22), 16384);
	u = probe_get(fx, GET_MIN, PROBE);
	assert_int_equal(u->buf[3], 2);
	assert_int_equal(le32(u->buf + 4), 1000000);
	u = probe_get(fx, GET_MAX, PROBE);
	assert_int_equal(le32(u->buf + 4), 5000000);

	/* a frame that does not exist: the default frame, interval 0 its
	 * default */
	probe_set(fx, PROBE, 9, 0);
	u = probe_get(fx, GET_CUR, PROBE);
	assert_memory_equal(u->buf, bulk_def, 34);

	/* the commit keeps its own copy */
	probe_set(fx, COMMIT, 2, 5000000);
	u = probe_get(fx, GET_CUR, COMMIT);
	assert_int_equal(u->buf[3], 2);
	assert_int_equal(le32(u->buf + 4), 5000000);
	u = probe_get(fx, GET_CUR, PROBE);
	assert_int_equal(u->buf[3], 1);
	assert_int_equal(error_code(fx), 0);
}

static void test_stalls_and_error_codes(void **state)
{
	struct fx *fx = *state;
	uint8_t b[34] = { 0 };
	struct urb *u;

	start(fx, BULK);
	/* the commit control has no GET_MIN/MAX/DEF (UVC 1.1 4.3.1.1) */
	fx_expect_stall(fx, fx_ctrl(fx, GET, GET_MIN, COMMIT, VS, 34, NULL));
	assert_int_equal(error_code(fx), 0x07);		/* invalid request */
	/* reading the code leaves it */
	assert_int_equal(error_code(fx), 0x07);
	fx_expect_stall(fx, fx_ctrl(fx, GET, GET_DEF, COMMIT, VS, 34, NULL));
	/* VS_STILL_PROBE_CONTROL: not there */
	fx_expect_stall(fx, fx_ctrl(fx, GET, GET_CUR, 0x0300, VS, 11, NULL));
	assert_int_equal(error_code(fx), 0x06);		/* invalid control */
	/* the streaming interface has entity 0 only */
	fx_expect_stall(fx, fx_ctrl(fx, GET, GET_CUR, PROBE, 0x0501, 34,
				    NULL));
	assert_int_equal(error_code(fx), 0x05);		/* invalid unit */
	/* SET_CUR shorter than the 26 bytes of UVC 1.0 */
	fx_expect_stall(fx, fx_ctrl(fx, SET, SET_CUR, PROBE, VS, 20, b));
	assert_int_equal(error_code(fx), 0x07);
	/* a GET sent host to device */
	fx_expect_stall(fx, fx_ctrl(fx, SET, GET_CUR, PROBE, VS, 34, b));
	/* VideoControl: the camera terminal (1) has no controls, 9 is no
	 * entity, and of entity 0 only the error code control is there */
	fx_expect_stall(fx, fx_ctrl(fx, GET, GET_INFO, 0x0200, 0x0100, 1,
				    NULL));
	assert_int_equal(error_code(fx), 0x06);
	fx_expect_stall(fx, fx_ctrl(fx, GET, GET_INFO, 0x0200, 0x0900, 1,
				    NULL));
	assert_int_equal(error_code(fx), 0x05);
	fx_expect_stall(fx, fx_ctrl(fx, GET, GET_CUR, 0x0100, 0x0000, 1,
				    NULL));
	assert_int_equal(error_code(fx), 0x06);
	u = fx_ctrl(fx, GET, GET_INFO, 0x0200, 0x0000, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x01);		/* GET only */
	assert_int_equal(error_code(fx), 0);
	/* another interface's requests are not the function's: STALL */
	fx_expect_stall(fx, fx_ctrl(fx, GET, GET_CUR, PROBE, 0x0002, 34,
				    NULL));
}

/* p[0..n) must be bytes off.. of frame `frame` of the pattern. */
static void expect_frame_bytes(const uint8_t *p, size_t n, uint32_t frame,
			       uint32_t w, uint32_t h, uint32_t off,
			       enum uvc_pattern pat)
{
	uint8_t *want = malloc(n ? n : 1);

	assert_non_null(want);
	uvc_pattern_fill(pat, frame, w, h, off, want, n);
	assert_memory_equal(p, want, n);
	free(want);
}

static struct urb *bulk_in(struct fx *fx, uint32_t len)
{
	return fx_submit(fx, fx_urb_new(0x81, len));
}

static void test_bulk_payloads(void **state)
{
	struct fx *fx = *state;
	struct urb *u[4];
	uint32_t off = 0;
	int i;

	start(fx, BULK);
	/* no commit yet: IN waits */
	u[0] = bulk_in(fx, 16384);
	assert_false(fx_is_done(fx, u[0]));
	probe_set(fx, COMMIT, 1, 1000000);	/* 160x120, 10 fps */
	/* 38400 bytes in payloads of 16384: 16382 + 16382 + 5636 */
	fx_expect_ok(fx, u[0], 16384);
	assert_int_equal(u[0]->buf[0], 2);
	assert_int_equal(u[0]->buf[1], 0x80);		/* EOH, FID 0 */
	expect_frame_bytes(u[0]->buf + 2, 16382, 0, 160, 120, off,
			   UVC_PAT_BARS);
	off += 16382;
	u[1] = bulk_in(fx, 16384);
	fx_expect_ok(fx, u[1], 16384);
	assert_int_equal(u[1]->buf[1], 0x80);
	expect_frame_bytes(u[1]->buf + 2, 16382, 0, 160, 120, off,
			   UVC_PAT_BARS);
	off += 16382;
	u[2] = bulk_in(fx, 16384);
	fx_expect_ok(fx, u[2], 5638);			/* short: the end */
	assert_int_equal(u[2]->buf[1], 0x82);		/* EOF */
	expect_frame_bytes(u[2]->buf + 2, 5636, 0, 160, 120, off,
			   UVC_PAT_BARS);

	/* the next frame is 100 ms after the first began */
	u[3] = bulk_in(fx, 16384);
	assert_false(fx_is_done(fx, u[3]));
	fx_run_until_done(fx, u[3]);
	fx_expect_ok(fx, u[3], 16384);
	assert_int_equal(u[3]->buf[1], 0x81);		/* FID 1 */
	assert_int_equal(uvc_pattern_number(u[3]->buf + 2), 1);

	/* a new commit starts over at a new frame: no EOF was sent for
	 * frame 1, frame 2 begins with FID 0 */
	probe_set(fx, COMMIT, 2, 1000000);		/* 80x60 */
	for (i = 0; i < 3; i++) {
		u[i] = bulk_in(fx, 16384);
		if (!i)
			fx_run_until_done(fx, u[0]);
	}
	fx_expect_ok(fx, u[0], 9602);			/* one payload */
	assert_int_equal(u[0]->buf[1], 0x82);		/* FID 0, EOF */
	assert_int_equal(uvc_pattern_number(u[0]->buf + 2), 2);
	expect_frame_bytes(u[0]->buf + 2, 9600, 2, 80, 60, 0, UVC_PAT_BARS);
	assert_false(fx_is_done(fx, u[1]));
}

/* A payload shorter than dwMaxPayloadTransferSize that fills its last URB
 * exactly: the host learns its end from a zero-length URB. */
static void test_bulk_zlp(void **state)
{
	struct fx *fx = *state;
	struct urb *u;
	uint32_t got = 0, len = 2819;	/* 5638 = 2 x 2819 */
	int urbs = 0;

	start(fx, BULK);
	probe_set(fx, COMMIT, 1, 1000000);
	while (got < 3 * 2 + 38400) {
		u = bulk_in(fx, len);
		fx_expect_ok(fx, u, u->actual_length);
		assert_true(u->actual_length > 0);
		/* one payload never shares an URB with the next */
		got += u->actual_length;
		urbs++;
		assert_true(urbs < 30);
	}
	assert_int_equal(got, 3 * 2 + 38400);
	assert_int_equal(u->actual_length, len);	/* filled exactly */
	u = bulk_in(fx, len);
	fx_expect_ok(fx, u, 0);				/* the ZLP, at once */
	u = bulk_in(fx, len);
	assert_false(fx_is_done(fx, u));		/* then frame 1 */
}

static struct urb *iso_in(struct fx *fx, int packets, uint32_t psize)
{
	struct urb *u = fx_urb_new(0x81, packets * psize);
	int i;

	u->number_of_packets = packets;
	u->iso = calloc(packets, sizeof(*u->iso));
	assert_non_null(u->iso);
	for (i = 0; i < packets; i++) {
		u->iso[i].offset = i * psize;
		u->iso[i].length = psize;
	}
	return fx_submit(fx, u);
}

static void test_iso_packets(void **state)
{
	struct fx *fx = *state;
	uint8_t *frame = calloc(1, 38400);
	struct urb *u[2];
	uint32_t off = 0, pos, pts = 0;
	int i, k, n = 0, eof_at = -1;

	assert_non_null(frame);
	start(fx, ISO);
	/* the default probe asks for 204 bytes a packet: 192 of the frame
	 * (200 packets of 1 ms in 200 ms) and the 12-byte header */
	assert_int_equal(le32(probe_get(fx, GET_DEF, PROBE)->buf + 22), 204);
	probe_set(fx, COMMIT, 1, 2000000);
	fx_expect_ok(fx, fx_ctrl(fx, 0x01, USB_REQ_SET_INTERFACE, 1, 1, 0,
			      NULL), 0);
	/* 200 packets: frame 0, then headers alone, then frame 1 */
	u[0] = iso_in(fx, 120, 256);
	u[1] = iso_in(fx, 120, 256);
	assert_false(fx_is_done(fx, u[0]));		/* 120 ms each */
	fx_run_until_done(fx, u[1]);
	fx_expect_ok(fx, u[0], u[0]->actual_length);
	for (k = 0; k < 2; k++) {
		pos = 0;
		for (i = 0; i < 120; i++, n++) {
			const uint8_t *p = u[k]->buf + pos;	/* packed */
			uint32_t len = u[k]->iso[i].actual_length;

			assert_int_equal(u[k]->iso[i].status, 0);
			assert_true(len >= 12 && len <= 256);
			assert_int_equal(p[0], 12);
			/* SCR: 48 MHz ticks and the 1 ms SOF of packet n */
			assert_int_equal(le32(p + 6), n * 48000u);
			assert_int_equal(p[10] | p[11] << 8, n & 0x7ff);
			if (n < 200) {
				assert_int_equal(p[1] & ~0x02, 0x8c);	/* FID 0 */
				assert_int_equal(le32(p + 2), 0);	/* PTS */
			} else {
				assert_int_equal(p[1] & ~0x02, 0x8d);	/* FID 1 */
				pts = le32(p + 2);
			}
			if (n < 200 && off < 38400) {
				memcpy(frame + off, p + 12, len - 12);
				off += len - 12;
				if (off == 38400)
					eof_at = n;
				assert_int_equal(!!(p[1] & 0x02), off == 38400);
			} else if (n < 200) {
				assert_int_equal(len, 12);	/* idle */
			}
			if (n == 200)
				assert_int_equal(uvc_pattern_number(p + 12), 1);
			pos += len;
		}
		assert_int_equal(pos, u[k]->actual_length);
	}
	/* 38400 bytes at 244 a packet: 158 packets */
	assert_int_equal(eof_at, 157);
	assert_int_equal(pts, 200 * 48000u);
	assert_int_equal(uvc_pattern_check(UVC_PAT_COUNT, 160, 120, frame,
					   38400), -1);
	assert_int_equal(uvc_pattern_number(frame), 0);

	/* a packet too short for the header carries nothing */
	u[0] = iso_in(fx, 2, 8);
	fx_run_until_done(fx, u[0]);
	fx_expect_ok(fx, u[0], 0);
	/* back to alternate setting 0: no endpoint, no stream */
	fx_expect_ok(fx, fx_ctrl(fx, 0x01, USB_REQ_SET_INTERFACE, 0, 1, 0,
			      NULL), 0);
	u[0] = iso_in(fx, 2, 256);
	fx_expect_stall(fx, u[0]);
	free(frame);
}

static void test_detach_frees(void **state)
{
	struct fx *fx = *state;

	start(fx, BULK);
	bulk_in(fx, 512);
	bulk_in(fx, 512);
	fx_expect_ok(fx, fx_ctrl(fx, 0x01, USB_REQ_SET_INTERFACE, 0, 1, 0,
			      NULL), 0);
	/* SET_CONFIGURATION, the two IN URBs, SET_INTERFACE */
	assert_int_equal(fx->n_done, 4);
	assert_int_equal(fx->done[1]->status, -ESHUTDOWN);
	bulk_in(fx, 512);
	gdev_detach(fx->dev, fx_free_urb);
	assert_int_equal(fx->freed, 1);
	gdev_free(fx->dev);
	fx->dev = NULL;
}

static void test_pattern(void **state)
{
	uint8_t f[38400];
	uint8_t b[8];

	(void)state;
	assert_int_equal(uvc_pattern_by_name("bars"), UVC_PAT_BARS);
	assert_int_equal(uvc_pattern_by_name("count"), UVC_PAT_COUNT);
	assert_int_equal(uvc_pattern_by_name("zebra"), -EINVAL);
	/* frame 0x01020304: the stamp, then row 0 white, U 128, white, V 128 */
	uvc_pattern_fill(UVC_PAT_BARS, 0x01020304, 160, 120, 0, b, 8);
	assert_memory_equal(b, ((uint8_t[]){ 4, 3, 2, 1, 180, 128, 180, 128 }),
			    8);
	/* row 0x01020304 mod 120 = 100 of that frame is inverted: 255 - 180 */
	uvc_pattern_fill(UVC_PAT_BARS, 0x01020304, 160, 120, 100 * 320 + 4, b,
			 4);
	assert_memory_equal(b, ((uint8_t[]){ 75, 128, 75, 128 }), 4);
	/* the last pair of row 1: black; pixels 20/21 start bar 1, yellow */
	uvc_pattern_fill(UVC_PAT_BARS, 0, 160, 120, 320 + 316, b, 4);
	assert_memory_equal(b, ((uint8_t[]){ 16, 128, 16, 128 }), 4);
	uvc_pattern_fill(UVC_PAT_BARS, 0, 160, 120, 320 + 40, b, 4);
	assert_memory_equal(b, ((uint8_t[]){ 162, 44, 162, 142 }), 4);
	/* count: byte o of frame n is n + o + o / 256 */
	uvc_pattern_fill(UVC_PAT_COUNT, 5, 160, 120, 254, b, 4);
	assert_memory_equal(b, ((uint8_t[]){ 3, 4, 6, 7 }), 4);
	/* past the frame: zeros */
	uvc_pattern_fill(UVC_PAT_COUNT, 5, 160, 120, 38398, b, 4);
	assert_int_equal(b[2], 0);
	assert_int_equal(b[3], 0);

	uvc_pattern_fill(UVC_PAT_COUNT, 77, 160, 120, 0, f, sizeof(f));
	assert_int_equal(uvc_pattern_number(f), 77);
	assert_int_equal(uvc_pattern_check(UVC_PAT_COUNT, 160, 120, f,
					   sizeof(f)), -1);
	assert_int_equal(uvc_pattern_check(UVC_PAT_BARS, 160, 120, f,
					   sizeof(f)), 4);
	f[20000] ^= 1;
	assert_int_equal(uvc_pattern_check(UVC_PAT_COUNT, 160, 120, f,
					   sizeof(f)), 20000);
	assert_int_equal(uvc_pattern_check(UVC_PAT_COUNT, 160, 120, f, 100),
			 100);
}

/* The example with from replaced by to must fail at line:col (0: any)
 * with msg. */
static void check_error(const char *path, const char *from, const char *to,
			int line, int col, const char *msg)
{
	char *text = fx_script_read(path, from, to);

	fx_expect_script_error(path, text, line, col, msg);
	free(text);
}

static void test_options(void **state)
{
	const char *fn = "        pattern bars\n";

	(void)state;
	/* line 70 of uvc-bulk.gadget is `pattern bars` */
	check_error(BULK, fn, "        pattern zebra\n", 70, 17,
		    "pattern: expected bars or count");
	check_error(BULK, fn, "        header 3\n", 70, 16,
		    "header: expected 2 or 12");
	check_error(BULK, fn, "        fps 7\n", 70, 13,
		    "not a whole number of 100 ns");
	check_error(BULK, fn, "        fps 4\n", 70, 13,
		    "the 160x120 frame descriptor has no interval of 2500000");
	check_error(BULK, fn, "        width 100\n", 70, 15,
		    "no frame descriptor of 100");
	check_error(BULK, "        payload-size 16384\n",
		    "        payload-size 2\n", 73, 22,
		    "leaves no room behind the 2-byte header");
	check_error(BULK, fn, "        streaming-interface 5\n", 70, 29,
		    "no interface 5");
	check_error(BULK, fn, "        interface 1\n", 70, 19,
		    "interface 1 is not VideoControl");
	check_error(BULK, fn, "        colour red\n", 70, 16,
		    "unknown option 'colour'");
	check_error(ISO, "        header 12\n", "        payload-size 2000\n",
		    0, 0, "more than the largest isochronous packet (1024");
	/* the descriptors it reads */
	check_error(BULK, "raw 0d 24 01 10 01", "raw 0d 24 01 50 01", 0, 0,
		    "bcdUVC is 0x0150");
	check_error(BULK, "28 00 00 6c dc 02 01 01", "28 00 00 6c dc 02 01 02",
		    0, 0, "does not list streaming interface 1");
	check_error(BULK, "raw 0e 24 01 01 7b 00 81", "raw 0e 24 09 01 7b 00 81",
		    0, 0, "no VS_INPUT_HEADER");
	check_error(BULK, "raw 0e 24 01 01 7b 00 81", "raw 0e 24 01 01 7b 00 82",
		    0, 0, "no endpoint 0x82");
	check_error(BULK, "59 55 59 32", "4d 4a 50 47", 0, 0,
		    "streams YUY2");
	check_error(BULK, "raw 06 24 0d 01 01 04", "raw 07 24 0d 01 01 04", 0,
		    0, "past their end");
	check_error(BULK, "00 a0 00 78 00", "00 a1 00 78 00", 0, 0,
		    "needs an even width");
	check_error(BULK, "00 a0 00 78 00 00 60 09 00 00 e0 2e 00 00 96 00 00 80 84 1e 00 03 40 42 0f 00",
		    "00 a0 00 78 00 00 60 09 00 00 e0 2e 00 00 96 00 00 80 84 1e 00 03 00 00 00 00",
		    0, 0, "frame interval 1 is 0");
	check_error(BULK, "endpoint { bEndpointAddress 0x81; type bulk }",
		    "endpoint { bEndpointAddress 0x81; type interrupt }", 0, 0,
		    "must be bulk IN");
	check_error(ISO, "bmAttributes 0x05       # isochronous, asynchronous",
		    "bmAttributes 0x02", 0, 0, "must be isochronous IN");
	check_error(BULK, "endpoint { bEndpointAddress 0x81; type bulk }",
		    "endpoint { bEndpointAddress 0x81; type bulk; source }", 0,
		    0, "remove its behaviour");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pattern),
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(test_probe_commit),
		T(test_stalls_and_error_codes),
		T(test_bulk_payloads),
		T(test_bulk_zlp),
		T(test_iso_packets),
		T(test_detach_frees),
#undef T
		cmocka_unit_test(test_options),
	};

	log_init_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
