// SPDX-License-Identifier: GPL-2.0
/*
 * test_stream.c - isochronous streams in the script language and at run
 * time: the stream keywords parsed into the model, every error at its
 * file:line:col, packet sizes from a rate (44.1 kHz's fractional
 * accumulation), the generated sources, and the device pacing packets,
 * sizing them and recording a sink to a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "device.h"
#include "fixture.h"
#include "model.h"
#include "script.h"
#include "stream.h"

#define NAME "dir/s.gadget"
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* a full-speed device with one interface around endpoint lines */
#define FS(eps) "device {\n idVendor 0x1209\n idProduct 1\n config { interface {\n" \
	eps "\n } }\n}\n"
#define HS(eps) "device {\n speed high\n idVendor 0x1209\n idProduct 1\n config { interface {\n" \
	eps "\n } }\n}\n"

static struct gd_device *parse_ok(const char *text)
{
	struct script_error err;
	struct gd_device *dev = NULL;
	int rc = script_parse(NAME, text, strlen(text), &dev, &err);

	if (rc)
		fail_msg("unexpected parse error %d: %s\n---\n%s", rc, err.msg,
			 text);
	return dev;
}

static void check_error(const char *text, int line, int col, const char *what)
{
	struct script_error err;
	struct gd_device *dev = NULL;
	char prefix[64];
	int rc = script_parse(NAME, text, strlen(text), &dev, &err);

	if (rc != -EINVAL) {
		gd_model_free(dev);
		fail_msg("expected \"%s\" at %d:%d, got rc %d\n---\n%s---",
			 what, line, col, rc, text);
	}
	snprintf(prefix, sizeof(prefix), NAME ":%d:%d: ", line, col);
	if (err.line != line || err.col != col ||
	    strncmp(err.msg, prefix, strlen(prefix)) || !strstr(err.msg, what))
		fail_msg("expected %s...%s..., got %d:%d \"%s\"\n---\n%s---",
			 prefix, what, err.line, err.col, err.msg, text);
}

static const struct gd_endpoint *ep0_of(const struct gd_device *dev,
					size_t i)
{
	return &dev->configs[0].alts[0].eps[i];
}

/* ---- the language ---- */

static void test_parse_stream(void **state)
{
	struct gd_device *dev = parse_ok(FS(
		"endpoint { bEndpointAddress 0x81; bmAttributes 0x05; wMaxPacketSize 192\n"
		"  rate 48000; channels 2; sample-bytes 2; source count }\n"
		"endpoint { bEndpointAddress 0x01; bmAttributes 0x09; wMaxPacketSize 200\n"
		"  sink file \"/tmp/out.raw\" }\n"
		"endpoint { bEndpointAddress 0x82; type iso; wMaxPacketSize 100\n"
		"  rate 8000; channels 1; sample-bytes 3; source sine 1000 25 }\n"
		"endpoint { bEndpointAddress 0x83; type iso; packet-size 17\n"
		"  source file \"a b.raw\" repeat }\n"
		"endpoint { bEndpointAddress 0x84; type iso; source pattern 55 aa }\n"
		"endpoint { bEndpointAddress 0x85; type bulk; source count; sample-bytes 1 }\n"
		"endpoint { bEndpointAddress 0x03; type iso; sink; sizes file \"o.sizes\" }"));
	const struct gd_endpoint *e;

	(void)state;
	e = ep0_of(dev, 0);
	assert_int_equal(e->beh.mode, GD_EP_SOURCE);
	assert_int_equal(e->beh.src, GD_SRC_COUNT);
	assert_int_equal(e->beh.stream.rate, 48000);
	assert_int_equal(e->beh.stream.channels, 2);
	assert_int_equal(e->beh.stream.sample_bytes, 2);
	assert_int_equal(e->beh.stream.packet_size, 0);
	e = ep0_of(dev, 1);
	assert_int_equal(e->beh.mode, GD_EP_SINK);
	assert_string_equal(e->beh.path, "/tmp/out.raw");
	e = ep0_of(dev, 2);
	assert_int_equal(e->beh.src, GD_SRC_SINE);
	assert_int_equal(e->beh.sine_hz, 1000);
	assert_int_equal(e->beh.sine_level, 25);
	assert_int_equal(e->beh.stream.channels, 1);
	assert_int_equal(e->beh.stream.sample_bytes, 3);
	e = ep0_of(dev, 3);
	assert_int_equal(e->beh.src, GD_SRC_FILE);
	assert_string_equal(e->beh.path, "a b.raw");
	assert_true(e->beh.file_repeat);
	assert_int_equal(e->beh.stream.packet_size, 17);
	e = ep0_of(dev, 4);
	assert_int_equal(e->beh.src, GD_SRC_PATTERN);
	assert_int_equal(e->beh.pattern.len, 2);
	e = ep0_of(dev, 5);
	assert_int_equal(e->beh.src, GD_SRC_COUNT);
	assert_int_equal(e->beh.stream.sample_bytes, 1);
	assert_int_equal(e->beh.stream.channels, 2);	/* the default */
	assert_null(e->beh.sizes_path);
	e = ep0_of(dev, 6);
	assert_int_equal(e->beh.mode, GD_EP_SINK);
	assert_null(e->beh.path);
	assert_string_equal(e->beh.sizes_path, "o.sizes");
	gd_model_free(dev);

	/* sine's level defaults to half of full scale */
	dev = parse_ok(FS("endpoint { bEndpointAddress 0x81; type iso; rate 44100; source sine 440 }"));
	assert_int_equal(ep0_of(dev, 0)->beh.sine_level, STREAM_SINE_LEVEL);
	gd_model_free(dev);
}

static void test_parse_errors(void **state)
{
	/* the error is at the first occurrence of `at` on line 5 */
	static const struct {
		const char *text;
		const char *at;
		const char *what;
	} c[] = {
		/* 48000 x 2 x 2 at 1 ms is 192 bytes */
		{ FS("endpoint { bEndpointAddress 0x81; type iso; wMaxPacketSize 191; rate 48000 }"),
		  "rate 48000 }", "rate: 48000 Hz x 2 channels x 2 bytes needs up to 192 bytes per 1000 us interval, wMaxPacketSize allows 191" },
		/* 44100 at 1 ms needs 45 frames in some intervals */
		{ FS("endpoint { bEndpointAddress 0x81; type iso; wMaxPacketSize 176; rate 44100 }"),
		  "rate 44100 }", "needs up to 180 bytes" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; wMaxPacketSize 16; packet-size 17 }"),
		  "packet-size 17", "packet-size: 17 bytes per interval, wMaxPacketSize allows 16" },
		{ FS("endpoint { bEndpointAddress 0x01; type iso; rate 48000 }"),
		  "rate 48000 }", "rate: only for isochronous IN endpoints (the host sizes OUT packets), 0x01 is isochronous OUT" },
		{ FS("endpoint { bEndpointAddress 0x81; type bulk; rate 48000 }"),
		  "rate 48000 }", "rate: only for isochronous IN endpoints" },
		{ FS("endpoint { bEndpointAddress 0x01; type iso; channels 2 }"),
		  "channels 2", "channels: the sample format is for IN endpoints" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; rate 48000; rate 44100 }"),
		  "rate 44100", "rate" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; rate 48000; packet-size 4 }"),
		  "packet-size 4", "packet-size" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; rate 0 }"),
		  "0 }", "rate: must be at least 1" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; channels 0 }"),
		  "0 }", "channels: 0: expected 1..255" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; sample-bytes 5 }"),
		  "5 }", "sample-bytes: 5: expected 1..4" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; source sine 440 }"),
		  "source sine", "source sine: needs the endpoint's rate" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; rate 8000; source sine 4001 }"),
		  "4001", "source sine: 4001 Hz is above half the rate (8000 Hz)" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; rate 8000; source sine 0 }"),
		  "0 }", "at least 1 Hz" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; rate 8000; source sine 400 101 }"),
		  "101", "level 101: expected 1..100" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; source file }"),
		  "source file }", "source: missing file name" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; source file x.raw }"),
		  "x.raw", "expected the file name as a quoted string, found 'x.raw'" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; source file \"\" }"),
		  "\"\"", "a file name is 1 to 4096 bytes" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; source file \"x\" again }"),
		  "again", "source file: expected 'repeat' or nothing" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; source count 3 }"),
		  "3 }", "source: unexpected '3'" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; source noise }"),
		  "noise", "source: expected pattern, count, sine or file, found 'noise'" },
		{ FS("endpoint { bEndpointAddress 0x01; type iso; sink tape }"),
		  "tape", "sink: expected file, found 'tape'" },
		{ FS("endpoint { bEndpointAddress 0x01; type iso; sink file \"a\" b }"),
		  "b }", "sink: unexpected 'b'" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; sink }"),
		  "sink }", "sink: only for OUT endpoints, 0x81 is IN" },
		{ FS("endpoint { bEndpointAddress 0x01; type iso; source count }"),
		  "source count", "source: only for IN endpoints, 0x01 is OUT" },
		{ FS("endpoint { bEndpointAddress 0x81; type bulk; sizes file \"s\" }"),
		  "sizes", "sizes: only for isochronous endpoints (packets, one an interval), 0x81 is bulk" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; sizes \"s\" }"),
		  "\"s\"", "sizes: expected file, found" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; sizes file }"),
		  "sizes file }", "sizes: missing file name" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; sizes file \"a\"; sizes file \"b\" }"),
		  "sizes file \"b", "sizes" },
		{ FS("endpoint { bEndpointAddress 0x81; type iso; source; delay 3 }"),
		  "delay", "delay: an isochronous endpoint takes only source (IN) or sink (OUT)" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(c); i++) {
		const char *l5 = strstr(c[i].text, "endpoint {");
		const char *at = strstr(l5, c[i].at);

		assert_non_null(at);
		check_error(c[i].text, 5, (int)(at - l5) + 1, c[i].what);
	}
}

/* ---- packet sizes ---- */

static void test_intervals(void **state)
{
	(void)state;
	assert_int_equal(stream_interval_us(USBIP_SPEED_FULL, 1), 1000);
	assert_int_equal(stream_interval_us(USBIP_SPEED_FULL, 4), 8000);
	assert_int_equal(stream_interval_us(USBIP_SPEED_FULL, 0), 1000);
	assert_int_equal(stream_interval_us(USBIP_SPEED_HIGH, 1), 125);
	assert_int_equal(stream_interval_us(USBIP_SPEED_HIGH, 4), 1000);
	assert_int_equal(stream_interval_us(USBIP_SPEED_SUPER, 17), 125 << 15);
}

static void test_packet_sizes(void **state)
{
	struct gd_stream s = { .rate = 48000, .channels = 2, .sample_bytes = 2 };
	uint64_t acc = 0, total = 0;
	uint32_t n;
	int i, big = 0;

	(void)state;
	/* 48 kHz x 2 ch x 2 bytes at 1 ms: always 192 */
	for (i = 0; i < 1000; i++)
		assert_int_equal(stream_packet_bytes(&s, 1000, &acc), 192);
	assert_int_equal(stream_max_packet(&s, 1000), 192);
	/* at 125 us: 6 frames, 24 bytes */
	assert_int_equal(stream_packet_bytes(&s, 125, &acc), 24);

	/* 44.1 kHz at 1 ms: nine of 44 frames, then one of 45 */
	s.rate = 44100;
	acc = 0;
	for (i = 0; i < 20; i++) {
		n = stream_packet_bytes(&s, 1000, &acc);
		assert_int_equal(n, i % 10 == 9 ? 45 * 4 : 44 * 4);
	}
	/* one second carries exactly the rate */
	acc = 0;
	for (i = 0; i < 1000; i++) {
		n = stream_packet_bytes(&s, 1000, &acc);
		total += n;
		big += n == 180;
	}
	assert_int_equal(total, 44100 * 4);
	assert_int_equal(big, 100);
	assert_int_equal(stream_max_packet(&s, 1000), 180);

	/* 11025 Hz mono 8-bit at 125 us: 1 or 2 frames, 11025 a second */
	s = (struct gd_stream){ .rate = 11025, .channels = 1, .sample_bytes = 1 };
	acc = 0;
	total = 0;
	for (i = 0; i < 8000; i++) {
		n = stream_packet_bytes(&s, 125, &acc);
		assert_true(n == 1 || n == 2);
		total += n;
	}
	assert_int_equal(total, 11025);

	/* a fixed size wins; neither: unsized */
	s.packet_size = 7;
	assert_int_equal(stream_packet_bytes(&s, 1000, &acc), 7);
	assert_int_equal(stream_max_packet(&s, 1000), 7);
	s = (struct gd_stream){ .channels = 2, .sample_bytes = 2 };
	assert_false(stream_sized(&s));
}

/* ---- generated sources ---- */

static void test_count(void **state)
{
	struct gd_ep_behaviour beh = {
		.mode = GD_EP_SOURCE, .src = GD_SRC_COUNT,
		.stream = { .channels = 2, .sample_bytes = 2 },
	};
	uint8_t a[1000], b[1000];
	uint64_t off = 0;
	size_t i, cut;

	(void)state;
	stream_fill(&beh, &off, a, sizeof(a));
	assert_int_equal(off, sizeof(a));
	for (i = 0; i < sizeof(a) / 2; i++)
		assert_int_equal(a[2 * i] | a[2 * i + 1] << 8, i);
	/* cut anywhere, even inside a sample: the same bytes */
	for (cut = 1; cut < 8; cut++) {
		off = 0;
		for (i = 0; i < sizeof(b); i += cut)
			stream_fill(&beh, &off, b + i,
				    i + cut > sizeof(b) ? sizeof(b) - i : cut);
		assert_memory_equal(a, b, sizeof(a));
	}
	/* 16 bits wrap */
	assert_int_equal(stream_count_sample(&beh.stream, 65537), 1);
	beh.stream.sample_bytes = 3;
	assert_int_equal(stream_count_sample(&beh.stream, 0x1234567), 0x234567);
	beh.stream.sample_bytes = 4;
	assert_int_equal(stream_count_sample(&beh.stream, 0x123456789ull),
			 0x23456789);
}

static void test_sine(void **state)
{
	struct gd_ep_behaviour beh = {
		.mode = GD_EP_SOURCE, .src = GD_SRC_SINE, .sine_hz = 1000,
		.sine_level = 100,
		.stream = { .rate = 48000, .channels = 2, .sample_bytes = 2 },
	};
	uint8_t buf[48 * 4];
	uint64_t off = 0;
	int16_t l, r;
	int i;

	(void)state;
	/* a quarter period (12 frames) is the peak, half is 0 */
	assert_int_equal((int16_t)stream_sine_sample(&beh, 0), 0);
	assert_int_equal((int16_t)stream_sine_sample(&beh, 12), 32767);
	assert_int_equal((int16_t)stream_sine_sample(&beh, 24), 0);
	assert_int_equal((int16_t)stream_sine_sample(&beh, 36), -32767);
	/* sin(60 degrees) x 32767 = 28376.68: frame 8 */
	assert_int_equal((int16_t)stream_sine_sample(&beh, 8), 28377);
	/* periodic over frames, same on both channels */
	stream_fill(&beh, &off, buf, sizeof(buf));
	for (i = 0; i < 48; i++) {
		l = (int16_t)(buf[4 * i] | buf[4 * i + 1] << 8);
		r = (int16_t)(buf[4 * i + 2] | buf[4 * i + 3] << 8);
		assert_int_equal(l, r);
		assert_int_equal(l, (int16_t)stream_sine_sample(&beh, i + 48));
	}
	beh.sine_level = 25;		/* 8191.75 */
	assert_int_equal((int16_t)stream_sine_sample(&beh, 12), 8192);
	/* 8-bit PCM is unsigned around 128 */
	beh.stream.sample_bytes = 1;
	beh.sine_level = 100;
	assert_int_equal(stream_sine_sample(&beh, 0), 128);
	assert_int_equal(stream_sine_sample(&beh, 12), 255);
	assert_int_equal(stream_sine_sample(&beh, 36), 1);
}

/* ---- the device: paced, sized packets and a recorded sink ---- */

static int setup(void **state)
{
	*state = fx_create(FX_DISCONNECT_FAILS);
	return 0;
}

static int teardown(void **state)
{
	fx_destroy(*state);
	return 0;
}

static struct urb *iso_urb(uint8_t addr, int np, uint32_t plen)
{
	struct urb *u = fx_urb_new(addr, np * plen);
	int k;

	u->number_of_packets = np;
	u->iso = calloc(np, sizeof(*u->iso));
	assert_non_null(u->iso);
	for (k = 0; k < np; k++) {
		u->iso[k].offset = k * plen;
		u->iso[k].length = plen;
	}
	return u;
}

static void test_device_stream(void **state)
{
	struct fx *fx = *state;
	char path[] = "/tmp/usbrig-test-stream-XXXXXX";
	char in_sizes[] = "/tmp/usbrig-test-insizes-XXXXXX";
	char out_sizes[] = "/tmp/usbrig-test-outsizes-XXXXXX";
	int fd = mkstemp(path);
	char text[1024], lines[512];
	struct urb *in, *in2, *out;
	struct timeval t0;
	uint8_t got[64];
	uint32_t k, want;
	long ms;
	int i;

	assert_true(fd >= 0);
	close(fd);
	assert_true((fd = mkstemp(in_sizes)) >= 0);
	close(fd);
	assert_true((fd = mkstemp(out_sizes)) >= 0);
	close(fd);
	/* full speed, 1 ms intervals: 44.1 kHz mono 16-bit counts */
	snprintf(text, sizeof(text), FS(
		"endpoint { bEndpointAddress 0x81; type iso; wMaxPacketSize 90\n"
		"  rate 44100; channels 1; source count; sizes file \"%s\" }\n"
		"endpoint { bEndpointAddress 0x02; type iso; wMaxPacketSize 64\n"
		"  sink file \"%s\"; sizes file \"%s\" }"), in_sizes, path,
		 out_sizes);
	fx->m = parse_ok(text);
	fx->own_model = true;
	fx_attach(fx);
	fx_ctrl(fx, 0x00, 0x09, 1, 0, 0, NULL);		/* SET_CONFIGURATION 1 */

	/* 20 packets, 20 ms, asked 90 bytes each: 88 x 9 then 90 */
	gettimeofday(&t0, NULL);
	in = fx_submit(fx, iso_urb(0x81, 10, 90));
	in2 = fx_submit(fx, iso_urb(0x81, 10, 90));
	assert_false(fx_is_done(fx, in));
	fx_run_until_done(fx, in2);
	ms = fx_ms_since(&t0);
	assert_true(ms >= 18);		/* whole ms, rounded down */
	assert_true(fx->n_done >= 2 && fx->done[fx->n_done - 2] == in);
	assert_int_equal(in->actual_length, 9 * 88 + 90);
	for (i = 0; i < 10; i++)
		assert_int_equal(in->iso[i].actual_length, i == 9 ? 90 : 88);
	/* packed back to back: sample k is k, on across both URBs */
	for (k = 0; k < in->actual_length / 2; k++)
		assert_int_equal(in->buf[2 * k] | in->buf[2 * k + 1] << 8, k);
	want = k;
	assert_int_equal(in2->buf[0] | in2->buf[1] << 8, want);

	/* a packet asked shorter than the interval's data: babble, and the
	 * interval's data is gone all the same */
	in = fx_submit(fx, iso_urb(0x81, 2, 40));
	fx_run_until_done(fx, in);
	assert_int_equal(in->error_count, 2);
	assert_int_equal(in->iso[0].status, -EOVERFLOW);
	assert_int_equal(in->actual_length, 80);
	want += in2->actual_length / 2;
	assert_int_equal(in->buf[0] | in->buf[1] << 8, want);
	assert_int_equal(in->buf[40] | in->buf[41] << 8, want + 44);

	/* OUT: each packet's bytes, at their offsets, recorded in order */
	out = iso_urb(0x02, 3, 16);
	for (i = 0; i < 48; i++)
		out->buf[i] = (uint8_t)i;
	out->iso[1].length = 5;			/* a short packet */
	fx_submit(fx, out);
	fx_run_until_done(fx, out);
	assert_int_equal(out->actual_length, 37);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, got, sizeof(got)), 37);
	close(fd);
	for (i = 0; i < 37; i++)
		assert_int_equal(got[i], i < 16 ? i : i < 21 ? i : i + 11);
	unlink(path);

	/* the sizes files: every packet's actual length, in order */
	fd = open(in_sizes, O_RDONLY);
	assert_true(fd >= 0);
	i = read(fd, lines, sizeof(lines) - 1);
	close(fd);
	assert_true(i > 0);
	lines[i] = '\0';
	assert_string_equal(lines, "88\n88\n88\n88\n88\n88\n88\n88\n88\n90\n"
			    "88\n88\n88\n88\n88\n88\n88\n88\n88\n90\n"
			    "40\n40\n");
	fd = open(out_sizes, O_RDONLY);
	assert_true(fd >= 0);
	i = read(fd, lines, sizeof(lines) - 1);
	close(fd);
	lines[i] = '\0';
	assert_string_equal(lines, "16\n5\n16\n");
	unlink(in_sizes);
	unlink(out_sizes);
}

static void test_device_missing_source_file(void **state)
{
	struct fx *fx = *state;
	struct gdev *dev;

	fx->m = parse_ok(FS("endpoint { bEndpointAddress 0x81; type iso; source file \"/nonexistent/usbrig\" }"));
	fx->own_model = true;
	dev = gdev_new(fx->m, fx->base);
	assert_non_null(dev);
	assert_int_equal(gdev_attach(dev, &fx->host, fx), -ENOENT);
	gdev_free(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stream),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_packet_sizes),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_sine),
		cmocka_unit_test_setup_teardown(test_device_stream, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_device_missing_source_file,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
