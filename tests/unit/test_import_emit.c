// SPDX-License-Identifier: GPL-2.0
/*
 * test_import_emit.c - gadgets/import/emit.c: dumps in, scripts out, and
 * the script must serve the dump's bytes again.
 *
 * Every example gadget is served into a dump as the kernel's sysfs file
 * would hold it (device descriptor, configurations, strings) and written
 * back as a script; then hand-made dumps that the script language cannot
 * say structurally (short descriptors, duplicates, IADs out of place, a
 * lying wTotalLength, a truncated chain) must still come back byte-equal,
 * and dumps that name no servable device must fail with the place.
 */
#include <errno.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "desc.h"
#include "import/import.h"
#include "script.h"

static uint8_t buf[GD_DESC_MAX + 1];

/* the dump a sysfs `descriptors` file and its attributes would give */
static void dump_of(const struct gd_device *m, struct imp_set *set)
{
	struct imp_dev *d = imp_dev_new(set, "test: offset 0");
	size_t i;
	int n;

	assert_non_null(d);
	d->speed = m->speed;
	n = desc_device(m, buf, sizeof(buf));
	assert_int_equal(n, 18);
	assert_int_equal(imp_blob_put(&d->device, buf, n), 0);
	for (i = 0; i < m->n_configs; i++) {
		n = desc_config(m, i, 0x02, buf, sizeof(buf));
		assert_true(n >= 9);
		assert_int_equal(imp_blob_put(&d->configs[i], buf, n), 0);
	}
	d->n_configs = m->n_configs;
	n = desc_bos(m, buf, sizeof(buf));
	if (n > 0)
		assert_int_equal(imp_blob_put(&d->bos, buf, n), 0);
	for (i = 1; i < 256; i++)
		if (m->strings[i])
			assert_int_equal(imp_set_string(d, i, m->strings[i]), 0);
}

static void set_init(struct imp_set *set, const char *format)
{
	memset(set, 0, sizeof(*set));
	set->format = strdup(format);
	set->path = strdup("test");
}

/* parse text, serve it, and compare with the dump's bytes and strings */
static void assert_serves(const char *text, const struct imp_dev *d)
{
	struct script_error se;
	struct gd_device *m;
	size_t i;
	int n;

	if (script_parse("emitted", text, strlen(text), &m, &se)) {
		fprintf(stderr, "%s\n--- script:\n%s", se.msg, text);
		fail();
	}
	n = desc_device(m, buf, sizeof(buf));
	assert_int_equal(n, 18);
	assert_memory_equal(buf, d->device.data, 18);
	for (i = 0; i < d->n_configs; i++) {
		n = desc_config(m, i, 0x02, buf, sizeof(buf));
		assert_int_equal(n, (int)d->configs[i].len);
		assert_memory_equal(buf, d->configs[i].data, n);
	}
	for (i = 1; i < 256; i++)
		if (d->strings[i])
			assert_string_equal(m->strings[i], d->strings[i]);
	gd_model_free(m);
}

static void test_examples_round_trip(void **state)
{
	glob_t g;
	size_t i;

	(void)state;
	assert_int_equal(glob("gadgets/examples/*.gadget", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 10);
	for (i = 0; i < g.gl_pathc; i++) {
		struct imp_error err = { "" };
		struct script_error se;
		struct gd_device *m;
		struct imp_set set;
		char *text = NULL;

		assert_int_equal(script_load(g.gl_pathv[i], &m, &se), 0);
		set_init(&set, "sysfs");
		dump_of(m, &set);
		if (imp_emit(&set, set.devs[0], NULL, &text, &err)) {
			fprintf(stderr, "%s: %s\n", g.gl_pathv[i], err.msg);
			fail();
		}
		assert_serves(text, set.devs[0]);
		/* structure, not a raw fallback, for every well-formed
		 * example (malformed-total lies on purpose) */
		if (!strstr(g.gl_pathv[i], "malformed"))
			assert_null(strstr(text, "served as raw bytes"));
		free(text);
		imp_set_free(&set);
		gd_model_free(m);
	}
	globfree(&g);
}

/* a full-speed device with one configuration made of the given bytes */
static struct imp_dev *hand_dump(struct imp_set *set, const uint8_t *cfg,
				 size_t len, enum usbip_speed speed)
{
	static const uint8_t dev[18] = {
		18, 0x01, 0x00, 0x02, 0, 0, 0, 64,
		0x09, 0x12, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 1,
	};
	struct imp_dev *d;

	set_init(set, "sysfs");
	d = imp_dev_new(set, "hand: offset 0");
	assert_non_null(d);
	d->speed = speed;
	assert_int_equal(imp_blob_put(&d->device, dev, sizeof(dev)), 0);
	assert_int_equal(imp_blob_put(&d->configs[0], cfg, len), 0);
	d->n_configs = 1;
	return d;
}

static void check_hand(const uint8_t *cfg, size_t len, enum usbip_speed speed,
		       const char *must_say)
{
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d = hand_dump(&set, cfg, len, speed);
	char *text = NULL;

	if (imp_emit(&set, d, NULL, &text, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		fail();
	}
	assert_serves(text, d);
	if (must_say && !strstr(text, must_say)) {
		fprintf(stderr, "expected '%s' in:\n%s", must_say, text);
		fail();
	}
	free(text);
	imp_set_free(&set);
}

#define CFG(total, nif)	9, 0x02, (total) & 0xff, (total) >> 8, (nif), 1, 0, 0x80, 50
#define INTF(n, alt, neps, cls)	9, 0x04, (n), (alt), (neps), (cls), 0, 0, 0
#define EP(addr, attr, mps)	7, 0x05, (addr), (attr), (mps) & 0xff, (mps) >> 8, 1

static void test_hand_dumps(void **state)
{
	/* an audio class 1 streaming endpoint: bLength 9 with bRefresh and
	 * bSynchAddress set, which the generator writes as zero */
	static const uint8_t audio[] = {
		CFG(9 + 9 + 9, 1), INTF(0, 0, 1, 1),
		9, 0x05, 0x81, 0x05, 0xc0, 0x00, 1, 3, 0x82,
	};
	/* the same endpoint twice, and an endpoint with address 0 */
	static const uint8_t dup_ep[] = {
		CFG(9 + 9 + 7 + 7 + 7, 1), INTF(0, 0, 3, 0xff),
		EP(0x81, 2, 64), EP(0x81, 2, 64), EP(0x00, 2, 64),
	};
	/* an IAD that names an interface that does not follow it */
	static const uint8_t iad_far[] = {
		CFG(9 + 8 + 9 + 9, 2), 8, 0x0b, 1, 1, 0x0e, 3, 0, 0,
		INTF(0, 0, 0, 0x0e), INTF(1, 0, 0, 0x0e),
	};
	/* wTotalLength says more than there is; bNumInterfaces lies */
	static const uint8_t liar[] = {
		CFG(200, 3), INTF(0, 0, 1, 3),
		9, 0x21, 0x11, 0x01, 0, 1, 0x22, 52, 0, EP(0x81, 3, 8),
	};
	/* the chain breaks: a descriptor whose bLength overruns */
	static const uint8_t broken[] = {
		CFG(9 + 9 + 4, 1), INTF(0, 0, 0, 0xff), 9, 0x24, 1, 2,
	};
	/* a bulk endpoint on a low-speed device */
	static const uint8_t low_bulk[] = {
		CFG(9 + 9 + 7, 1), INTF(0, 0, 1, 0xff), EP(0x81, 2, 8),
	};
	/* interface number and alternate setting given twice */
	static const uint8_t dup_alt[] = {
		CFG(9 + 9 + 9, 1), INTF(0, 0, 0, 3), INTF(0, 0, 0, 3),
	};

	(void)state;
	check_hand(audio, sizeof(audio), USBIP_SPEED_FULL,
		   "bRefresh/bSynchAddress");
	check_hand(dup_ep, sizeof(dup_ep), USBIP_SPEED_FULL,
		   "endpoint 0x81 twice");
	check_hand(iad_far, sizeof(iad_far), USBIP_SPEED_FULL, NULL);
	check_hand(liar, sizeof(liar), USBIP_SPEED_FULL, "wTotalLength 200");
	check_hand(broken, sizeof(broken), USBIP_SPEED_FULL,
		   "no whole descriptor");
	check_hand(low_bulk, sizeof(low_bulk), USBIP_SPEED_LOW,
		   "low-speed device");
	check_hand(dup_alt, sizeof(dup_alt), USBIP_SPEED_FULL, "given twice");
}

/* recorded control transfers become rules, first match first; standard
 * requests stay with the standard handler; IN data becomes a sequence */
static void test_rules_and_sequences(void **state)
{
	static const uint8_t cfg[] = {
		CFG(9 + 9 + 7 + 7, 1), INTF(0, 0, 2, 0xff),
		EP(0x81, 2, 64), EP(0x02, 2, 64),
	};
	static const uint8_t vendor_in[8] = { 0xc0, 0x05, 0, 0, 0, 0, 2, 0 };
	static const uint8_t vendor_out[8] = { 0x40, 0x01, 1, 0, 0, 0, 0, 0 };
	static const uint8_t set_config[8] = { 0x00, 0x09, 1, 0, 0, 0, 0, 0 };
	static const uint8_t report[8] = { 0x81, 0x06, 0, 0x22, 0, 0, 64, 0 };
	static const uint8_t reply[2] = { 0x10, 0x60 }, other[2] = { 1, 2 };
	static const uint8_t pkt[3] = { 0x31, 0x60, 0x41 };
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d = hand_dump(&set, cfg, sizeof(cfg), USBIP_SPEED_FULL);
	char *text = NULL;

	(void)state;
	assert_int_equal(imp_add_ctrl(d, vendor_in, false, reply, 2, "f:1"), 0);
	assert_int_equal(imp_add_ctrl(d, vendor_in, false, other, 2, "f:2"), 0);
	assert_int_equal(imp_add_ctrl(d, vendor_out, true, NULL, 0, "f:3"), 0);
	assert_int_equal(imp_add_ctrl(d, set_config, false, NULL, 0, "f:4"), 0);
	assert_int_equal(imp_add_ctrl(d, report, false, reply, 2, "f:5"), 0);
	assert_int_equal(imp_add_in_packet(d, 0x81, pkt, 3), 0);
	assert_int_equal(imp_add_in_packet(d, 0x81, NULL, 0), 0);
	assert_int_equal(imp_emit(&set, d, NULL, &text, &err), 0);
	assert_serves(text, d);
	/* the same request answered two ways: in order, then the last */
	assert_non_null(strstr(text, "# f:1 (1 time)\n        bmRequestType 0xc0; bRequest 0x05; wValue 0x0000; wIndex 0x0000\n        reply 10 60\n        times 1\n"));
	assert_non_null(strstr(text, "# f:2 (from then on)\n        bmRequestType 0xc0; bRequest 0x05; wValue 0x0000; wIndex 0x0000\n        reply 01 02\n    }"));
	assert_non_null(strstr(text, "bRequest 0x01; wValue 0x0001; wIndex 0x0000\n        stall\n"));
	assert_null(strstr(text, "# f:4"));	/* SET_CONFIGURATION */
	assert_non_null(strstr(text, "bmRequestType 0x81; bRequest 0x06; wValue 0x2200"));
	assert_non_null(strstr(text, "packet 31 60 41\n"));
	assert_non_null(strstr(text, "packet\t# zero-length"));
	/* a vendor OUT was refused: no guess that others are taken */
	assert_null(strstr(text, "took every vendor OUT"));
	free(text);
	imp_set_free(&set);

	/* every vendor OUT acknowledged: the others are guessed to be too */
	d = hand_dump(&set, cfg, sizeof(cfg), USBIP_SPEED_FULL);
	assert_int_equal(imp_add_ctrl(d, vendor_out, false, NULL, 0, "f:1"), 0);
	assert_int_equal(imp_emit(&set, d, NULL, &text, &err), 0);
	assert_serves(text, d);
	assert_non_null(strstr(text, "took every vendor OUT request of the dump, so it takes the others too\n        bmRequestType 0x40\n        ack\n"));
	free(text);
	imp_set_free(&set);
}

static void test_speed_guess_and_errors(void **state)
{
	static const uint8_t hs[] = {
		CFG(9 + 9 + 7, 1), INTF(0, 0, 1, 8), EP(0x81, 2, 512),
	};
	static const uint8_t zero_value[] = {
		9, 0x02, 9, 0, 0, 0, 0, 0x80, 50,
	};
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d;
	char *text = NULL;

	(void)state;
	d = hand_dump(&set, hs, sizeof(hs), USBIP_SPEED_UNKNOWN);
	assert_int_equal(imp_emit(&set, d, NULL, &text, &err), 0);
	assert_non_null(strstr(text, "# guess: speed high, because 512-byte bulk endpoints"));
	assert_non_null(strstr(text, "    speed high\n"));
	free(text);
	imp_set_free(&set);

	d = hand_dump(&set, zero_value, sizeof(zero_value), USBIP_SPEED_FULL);
	assert_int_equal(imp_emit(&set, d, NULL, &text, &err), -EINVAL);
	assert_string_equal(err.msg, "hand: offset 0: configuration 1 has bConfigurationValue 0, which no host can select");
	imp_set_free(&set);

	d = hand_dump(&set, hs, sizeof(hs), USBIP_SPEED_FULL);
	d->device.len = 8;	/* only the first 8 bytes were read */
	assert_int_equal(imp_emit(&set, d, NULL, &text, &err), -EINVAL);
	assert_string_equal(err.msg, "hand: offset 0: no complete device descriptor for this device (8 bytes)");
	imp_set_free(&set);
}

/* a capture that kept 36 of 39 bytes: the nearest valid device is the
 * whole descriptors left, the endpoint the interface declares and lost
 * guessed (with a bulk pair there: an interrupt IN), counts that agree,
 * and notes that say so */
static void test_truncated_repair(void **state)
{
	static const uint8_t cut[] = {
		CFG(39, 1), INTF(0, 0, 3, 0xff),
		EP(0x81, 2, 64), EP(0x02, 2, 64), 7, 0x05, 0x83, 0x03,
	};
	static const uint8_t want[] = {
		CFG(39, 1), INTF(0, 0, 3, 0xff),
		EP(0x81, 2, 64), EP(0x02, 2, 64),
		7, 0x05, 0x83, 0x03, 16, 0, 8,
	};
	/* "Aé" as a string descriptor: UTF-16LE, shown as text */
	static const uint8_t str[] = { 6, 0x03, 'A', 0, 0xe9, 0 };
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d = hand_dump(&set, cut, sizeof(cut), USBIP_SPEED_FULL);
	struct script_error se;
	struct gd_device *m;
	char *text = NULL;
	int n;

	(void)state;
	d->truncated = true;
	assert_int_equal(imp_blob_put(&d->string_raw[1], str, sizeof(str)), 0);
	assert_int_equal(imp_emit(&set, d, NULL, &text, &err), 0);
	assert_non_null(strstr(text, "# note: configuration 1: the dump holds 36 of its 39 bytes: served as the 32 bytes"));
	assert_non_null(strstr(text, "# note: configuration 1: interface 0 declares an endpoint the dump lost: guessed as 0x83, interrupt IN"));
	assert_non_null(strstr(text, "    string 1 \"A\xc3\xa9\"\n"));
	assert_int_equal(script_parse("t", text, strlen(text), &m, &se), 0);
	n = desc_config(m, 0, 0x02, buf, sizeof(buf));
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	n = desc_string(m, 1, buf, sizeof(buf));
	assert_int_equal(n, sizeof(str));
	assert_memory_equal(buf, str, sizeof(str));
	/* the caller's dump is left as it was */
	assert_int_equal(d->configs[0].len, sizeof(cut));
	gd_model_free(m);
	free(text);
	imp_set_free(&set);
}

static void test_select(void **state)
{
	static const uint8_t cfg[] = { CFG(9, 0) };
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d, *got;

	(void)state;
	d = hand_dump(&set, cfg, sizeof(cfg), USBIP_SPEED_FULL);
	d->busnum = 1;
	d->devnum = 4;
	got = imp_dev_new(&set, "hand: line 40");
	assert_non_null(got);
	assert_int_equal(imp_blob_put(&got->device, d->device.data, 18), 0);
	got->busnum = 2;
	got->devnum = 3;
	assert_int_equal(imp_select(&set, "002:003", &d, &err), 0);
	assert_ptr_equal(d, got);
	assert_int_equal(imp_select(&set, "1209:0001", &d, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "2 devices match --select 1209:0001"));
	assert_int_equal(imp_select(&set, NULL, &d, &err), -EINVAL);
	assert_int_equal(imp_select(&set, "12x9:0001", &d, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "expected VID:PID"));
	assert_int_equal(imp_select(&set, "3:1", &d, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no device matches --select 3:1"));
	imp_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples_round_trip),
		cmocka_unit_test(test_hand_dumps),
		cmocka_unit_test(test_rules_and_sequences),
		cmocka_unit_test(test_speed_guess_and_errors),
		cmocka_unit_test(test_truncated_repair),
		cmocka_unit_test(test_select),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
