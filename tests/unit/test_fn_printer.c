// SPDX-License-Identifier: GPL-2.0
/*
 * test_fn_printer.c - the printer device function (gadgets/fn/printer.c)
 * in process: the shipped example and small scripts, driven with the class
 * requests and bulk URBs usblp sends, answers checked byte for byte, the
 * print job compared with the output file; and the option errors at their
 * file:line:col.
 *
 * Runs from the repository root (it reads gadgets/examples/).
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/usb/ch9.h>

#include "device.h"
#include "fixture.h"
#include "log.h"
#include "model.h"

#define PRINTER		"gadgets/examples/printer.gadget"
/* the example's device-id and port-status */
#define EXAMPLE_ID	"MFG:usbrig;MDL:Virtual Printer;CMD:PCL,PJL,POSTSCRIPT;CLS:PRINTER;"
#define EXAMPLE_STATUS	0x18

/* Printer Class 1.1 section 4.2 */
#define GET_DEVICE_ID	0x00
#define GET_PORT_STATUS	0x01
#define SOFT_RESET	0x02

/* A printer: the interface blocks intfs from line 4, then the function
 * block fn. */
static const char prn_fmt[] =
	"device {\n"
	"  idVendor 0x1209; idProduct 0x0070\n"
	"  config {\n"
	"%s"
	"  }\n"
	"%s"
	"}\n";

#define INTF(body)	"    interface {\n" body "    }\n"
#define UNI	INTF("      bInterfaceClass 7; bInterfaceProtocol 1\n" \
		     "      endpoint { bEndpointAddress 0x01; type bulk }\n")
#define BIDI	INTF("      bInterfaceClass 7; bInterfaceProtocol 2\n" \
		     "      endpoint { bEndpointAddress 0x01; type bulk }\n" \
		     "      endpoint { bEndpointAddress 0x82; type bulk }\n")
/* unidirectional on interface 1, behind a vendor interface 0, so that
 * the two wIndex forms of GET_DEVICE_ID (1 << 8 | alt, and 1) differ */
#define TWO_INTF "    interface { bInterfaceClass 0xff }\n" UNI

static char job_path[64];	/* the output file of the case running */

static int setup(void **state)
{
	return fx_setup_flags(state, FX_DISCONNECT_FAILS);
}

static int teardown(void **state)
{
	fx_destroy(*state);
	if (job_path[0])
		unlink(job_path);
	job_path[0] = 0;
	return 0;
}

/* prn_fmt with intfs and fn into text (size bytes). */
static const char *prn_text(char *text, size_t size, const char *intfs,
			    const char *fn)
{
	assert_true(snprintf(text, size, prn_fmt, intfs, fn) < (int)size);
	return text;
}

static void start_example(struct fx *fx)
{
	fx_start_file(fx, PRINTER, NULL, NULL);
}

/* TWO_INTF, the function block with the option lines opts */
static void start_two_intf(struct fx *fx, const char *opts)
{
	char text[8192];
	char fn[1024];

	assert_true(snprintf(fn, sizeof(fn), "  function printer {\n%s  }\n",
			     opts) < (int)sizeof(fn));
	fx_start_text(fx, "t.gadget",
		      prn_text(text, sizeof(text), TWO_INTF, fn));
}

/* Point the loaded model's `output` option at path, as if written there. */
static void set_output(struct fx *fx, const char *path)
{
	size_t i;

	for (i = 0; i < fx->m->n_function_opts; i++) {
		struct gd_fn_opt *o = &fx->m->function_opts[i];

		if (!strcmp(o->key, "output")) {
			free(o->value);
			o->value = strdup(path);
			assert_non_null(o->value);
			return;
		}
	}
	fail_msg("the model has no output option");
}

static struct urb *bulk_out(struct fx *fx, const uint8_t *b, size_t len)
{
	struct urb *u = fx_urb_new(0x01, len);

	memcpy(u->buf, b, len);
	return fx_submit(fx, u);
}

/* GET_DEVICE_ID's answer to wLength 1023 (usblp's): the big-endian length
 * that counts itself, then id. */
static void expect_id(struct fx *fx, uint16_t windex, const char *id)
{
	size_t n = 2 + strlen(id);
	struct urb *u;

	u = fx_ctrl(fx, 0xa1, GET_DEVICE_ID, 0, windex, 1023, NULL);
	fx_expect_ok(fx, u, n);
	assert_int_equal(u->buf[0], n >> 8);
	assert_int_equal(u->buf[1], n & 0xff);
	assert_memory_equal(u->buf + 2, id, strlen(id));
}

static void expect_ep_halted(struct fx *fx, uint8_t addr, bool halted)
{
	struct urb *u;

	u = fx_ctrl(fx, 0x82, USB_REQ_GET_STATUS, 0, addr, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[0] | u->buf[1] << 8, halted);
}

static void halt_ep(struct fx *fx, uint8_t addr)
{
	fx_expect_ok(fx, fx_ctrl(fx, 0x02, USB_REQ_SET_FEATURE,
				 USB_ENDPOINT_HALT, addr, 0, NULL), 0);
	expect_ep_halted(fx, addr, true);
}

/* ---- ep0 ---- */

static void test_device_id(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start_example(fx);
	/* usblp's form on interface 0, alternate setting 0: 68 = 0x0044 */
	expect_id(fx, 0x0000, EXAMPLE_ID);
	/* cut to wLength: the prefix still gives the whole length */
	u = fx_ctrl(fx, 0xa1, GET_DEVICE_ID, 0, 0, 10, NULL);
	fx_expect_ok(fx, u, 10);
	assert_int_equal(u->buf[0], 0x00);
	assert_int_equal(u->buf[1], 0x44);
	assert_memory_equal(u->buf + 2, "MFG:usbr", 8);
	u = fx_ctrl(fx, 0xa1, GET_DEVICE_ID, 0, 0, 2, NULL);
	fx_expect_ok(fx, u, 2);
	assert_int_equal(u->buf[1], 0x44);
	u = fx_ctrl(fx, 0xa1, GET_DEVICE_ID, 0, 0, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x00);
	/* and to the URB's buffer when that is shorter than wLength */
	u = fx_submit(fx, fx_ctrl_new(0xa1, GET_DEVICE_ID, 0, 0, 1023, 20));
	fx_expect_ok(fx, u, 20);
	assert_memory_equal(u->buf + 2, EXAMPLE_ID, 18);
	/* interface 1 does not exist; an OUT GET_DEVICE_ID is no request */
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, GET_DEVICE_ID, 0, 0x0100, 1023,
				    NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, GET_DEVICE_ID, 0, 0, 0, NULL));
}

/* Interface 1, an id longer than 255 bytes: both bytes of the prefix. */
static void test_device_id_windex_forms(void **state)
{
	char id[301], opts[400];
	struct fx *fx = *state;
	size_t i;

	for (i = 0; i < 300; i++)
		id[i] = "MDL:0123456789;"[i % 15];
	id[300] = 0;
	snprintf(opts, sizeof(opts), "    device-id \"%s\"\n", id);
	start_two_intf(fx, opts);
	expect_id(fx, 0x0100, id);	/* interface 1, alternate setting 0 */
	expect_id(fx, 0x0101, id);	/* interface 1, alternate setting 1 */
	expect_id(fx, 0x0001, id);	/* class 1.0: the interface alone */
	/* the vendor interface and one that does not exist */
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, GET_DEVICE_ID, 0, 0x0000, 1023,
				    NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, GET_DEVICE_ID, 0, 0x0200, 1023,
				    NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, GET_DEVICE_ID, 0, 0x0002, 1023,
				    NULL));
}

static void test_port_status(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start_example(fx);
	u = fx_ctrl(fx, 0xa1, GET_PORT_STATUS, 0, 0, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], EXAMPLE_STATUS);
	/* one byte, whatever wLength asks */
	fx_expect_ok(fx, fx_ctrl(fx, 0xa1, GET_PORT_STATUS, 0, 0, 4, NULL), 1);
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, GET_PORT_STATUS, 1, 0, 1, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, GET_PORT_STATUS, 0, 1, 1, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, GET_PORT_STATUS, 0, 0, 0, NULL));
}

static void test_port_status_option(void **state)
{
	struct fx *fx = *state;
	struct urb *u;

	start_two_intf(fx, "    port-status 0x38\n");	/* paper empty */
	u = fx_ctrl(fx, 0xa1, GET_PORT_STATUS, 0, 1, 1, NULL);
	fx_expect_ok(fx, u, 1);
	assert_int_equal(u->buf[0], 0x38);
	/* no device-id: the default one */
	expect_id(fx, 0x0100,
		  "MFG:usbrig;MDL:Virtual Printer;CMD:PCL,PJL;CLS:PRINTER;");
}

static void test_unknown_requests(void **state)
{
	struct fx *fx = *state;

	start_example(fx);
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, 0x03, 0, 0, 1, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, 0x7f, 0, 0, 0, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, 0x03, 0, 1, 1, NULL));
	/* not class requests to the interface */
	fx_expect_stall(fx, fx_ctrl(fx, 0xc1, GET_DEVICE_ID, 0, 0, 64, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa0, GET_DEVICE_ID, 0, 0, 64, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa2, GET_PORT_STATUS, 0, 0, 1, NULL));
}

static void test_soft_reset(void **state)
{
	static const uint8_t data[4] = "data";
	struct fx *fx = *state;

	start_example(fx);
	halt_ep(fx, 0x01);
	fx_expect_stall(fx, bulk_out(fx, data, 4));
	/* to the interface (class 1.1) */
	fx_expect_ok(fx, fx_ctrl(fx, 0x21, SOFT_RESET, 0, 0, 0, NULL), 0);
	expect_ep_halted(fx, 0x01, false);
	fx_expect_ok(fx, bulk_out(fx, data, 4), 4);

	/* to "other", as Linux sends it: both endpoints */
	halt_ep(fx, 0x01);
	halt_ep(fx, 0x82);
	fx_expect_ok(fx, fx_ctrl(fx, 0x23, SOFT_RESET, 0, 0, 0, NULL), 0);
	expect_ep_halted(fx, 0x01, false);
	expect_ep_halted(fx, 0x82, false);

	/* another interface, IN, a data stage: STALL, the halt stays */
	halt_ep(fx, 0x01);
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, SOFT_RESET, 0, 1, 0, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0xa1, SOFT_RESET, 0, 0, 1, NULL));
	fx_expect_stall(fx, fx_ctrl(fx, 0x21, SOFT_RESET, 0, 0, 1, "x"));
	expect_ep_halted(fx, 0x01, true);
	fx_expect_stall(fx, bulk_out(fx, data, 4));
}

/* ---- bulk ---- */

/* A job of several URBs, more than 64 KiB in all, lands in the output file
 * byte for byte; what the file held before the connection is gone. */
static void test_job_file(void **state)
{
	static const size_t sizes[] = { 1, 4096, 16384, 16384, 16384, 16384,
					3000, 511 };
	size_t total = 0, off = 0, i;
	struct fx *fx = *state;
	uint32_t x = 0x12345678;
	uint8_t *job, *back;
	struct stat sb;
	int fd;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		total += sizes[i];
	assert_true(total > 65536);
	job = malloc(total);
	back = malloc(total + 1);
	assert_non_null(job);
	assert_non_null(back);
	for (i = 0; i < total; i++) {	/* xorshift32: no period of 256 */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		job[i] = x >> 24;
	}

	strcpy(job_path, "/tmp/usbrig-printer-XXXXXX");
	fd = mkstemp(job_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "an old job", 10), 10);
	close(fd);

	fx->flags |= FX_POISON_OUT;	/* the server reuses OUT buffers */
	fx_parse_file(fx, PRINTER, NULL, NULL);
	set_output(fx, job_path);
	fx_attach_configured(fx);
	assert_int_equal(stat(job_path, &sb), 0);
	assert_int_equal(sb.st_size, 0);	/* truncated at attach */

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fx_expect_ok(fx, bulk_out(fx, job + off, sizes[i]), sizes[i]);
		off += sizes[i];
	}
	fd = open(job_path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, back, total + 1), total);
	close(fd);
	assert_memory_equal(back, job, total);
	free(job);
	free(back);
}

static void test_output_unwritable(void **state)
{
	struct fx *fx = *state;

	fx_parse_file(fx, PRINTER, NULL, NULL);
	set_output(fx, "/nonexistent-usbrig-dir/job.bin");
	fx->dev = gdev_new(fx->m, fx->base);
	assert_non_null(fx->dev);
	assert_int_equal(gdev_attach(fx->dev, &fx->host, fx), -ENOENT);
}

/* Without `output` the data is taken (and counted) all the same. */
static void test_no_output(void **state)
{
	static const uint8_t data[3] = "abc";
	struct fx *fx = *state;

	start_two_intf(fx, "");
	fx_expect_ok(fx, bulk_out(fx, data, 3), 3);
	/* unidirectional: no back channel */
	fx_expect_stall(fx, fx_submit(fx, fx_urb_new(0x82, 64)));
}

/* The back channel has nothing to say: IN URBs wait until unlinked, a
 * new configuration or the detach. */
static void test_back_channel(void **state)
{
	static const uint8_t data[4] = "job\n";
	struct fx *fx = *state;
	struct urb *a, *b;

	start_example(fx);
	a = fx_submit(fx, fx_urb_new(0x82, 512));
	b = fx_submit(fx, fx_urb_new(0x82, 512));
	fx_expect_ok(fx, bulk_out(fx, data, 4), 4);
	fx_run_for(fx, 20);
	assert_false(fx_is_done(fx, a));
	assert_false(fx_is_done(fx, b));
	assert_ptr_equal(gdev_unlink(fx->dev, a->seqnum), a);
	assert_null(gdev_unlink(fx->dev, a->seqnum));
	fx_urb_free(a);
	assert_false(fx_is_done(fx, b));
	/* a new configuration ends it */
	fx_set_config(fx, 0);
	assert_true(fx_is_done(fx, b));
	assert_int_equal(b->status, -ESHUTDOWN);
	/* the detach takes back what is still held */
	fx_set_config(fx, 1);
	fx_submit(fx, fx_urb_new(0x82, 512));
	fx_submit(fx, fx_urb_new(0x82, 512));
	gdev_detach(fx->dev, fx_free_urb);
	assert_int_equal(fx->freed, 2);
}

/* ---- options ---- */

/* prn_fmt with intfs and fn_block fails at line:col with what; the
 * function line is 8 after a one-line interface body, 9 after two... */
static void check_error(const char *intfs, const char *fn_block, int line,
			int col, const char *what)
{
	char text[8192];

	fx_expect_script_error("t.gadget",
			       prn_text(text, sizeof(text), intfs, fn_block),
			       line, col, what);
}

static void test_options(void **state)
{
	char block[4200 + 64];

	(void)state;
	/* at the function line */
	check_error(INTF("      bInterfaceClass 7; bInterfaceProtocol 1\n"
			 "      endpoint { bEndpointAddress 0x82; type bulk }\n"),
		    "  function printer\n", 9, 12,
		    "interface 0 needs a bulk OUT endpoint (the print data)");
	check_error(INTF("      bInterfaceClass 7; bInterfaceProtocol 2\n"
			 "      endpoint { bEndpointAddress 0x01; type bulk }\n"),
		    "  function printer\n", 9, 12,
		    "interface 0: bInterfaceProtocol 2 needs a bulk IN endpoint too");
	check_error(INTF("      bInterfaceClass 0xff\n"), "  function printer\n", 8,
		    12, "no printer interface (bInterfaceClass 0x07)");
	/* an option's value */
	check_error(UNI, "  function printer {\n    port-status 256\n  }\n",
		    10, 17, "port-status: 256 is more than 255");
	check_error(BIDI, "  function printer {\n    port-status busy\n  }\n",
		    11, 17, "port-status: expected a number, got 'busy'");
	check_error(UNI, "  function printer {\n    device-id \"MFG:x;\\x01\"\n  }\n",
		    10, 15, "device-id: only printable ASCII (byte 7 is 0x01)");
	check_error(UNI, "  function printer {\n    device-id \"MDL:\\xe9\"\n  }\n",
		    10, 15, "device-id: only printable ASCII (byte 5 is 0xe9)");
	check_error(UNI, "  function printer {\n    device-id \"MDL:\\x7f;\"\n  }\n",
		    10, 15, "device-id: only printable ASCII (byte 5 is 0x7f)");
	check_error(UNI, "  function printer {\n    device-id \"\"\n  }\n", 10,
		    15, "device-id: expected the IEEE 1284 id");
	check_error(UNI, "  function printer {\n    output \"\"\n  }\n", 10, 12,
		    "output: expected a file name");
	check_error(UNI, "  function printer {\n    paper a4\n  }\n", 10, 11,
		    "unknown option 'paper'");
	/* 4095 bytes of id: one more than the 16-bit prefix allows */
	memset(block, 'A', sizeof(block));
	memcpy(block, "  function printer {\n    device-id \"", 36);
	strcpy(block + 36 + 4095, "\"\n  }\n");
	check_error(UNI, block, 10, 15, "device-id: at most 4094 bytes, got 4095");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_device_id),
		T(test_device_id_windex_forms),
		T(test_port_status),
		T(test_port_status_option),
		T(test_unknown_requests),
		T(test_soft_reset),
		T(test_job_file),
		T(test_output_unwritable),
		T(test_no_output),
		T(test_back_channel),
#undef T
		cmocka_unit_test(test_options),
	};

	log_init_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
