// SPDX-License-Identifier: GPL-2.0
/*
 * test_import.c - the operation phase against the real usbrig-gadget:
 * OP_REQ_DEVLIST lists every gadget, OP_REQ_IMPORT attaches one, unknown
 * busids get ST_NODEV, a gadget in use ST_DEV_BUSY until its client goes.
 *
 * The test writes its own scripts, so it knows every value the device
 * records must carry.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client.h"

/* 1-1: vendor-specific, high speed, one interface */
static const char script_bulk[] =
	"# vendor bulk loopback\n"
	"device {\n"
	"	speed high\n"
	"	idVendor 0x0557\n"
	"	idProduct 0x2008\n"
	"	bcdDevice 0x0100\n"
	"	manufacturer \"usbrig\"\n"
	"	product \"Bulk loopback\"\n"
	"	config {\n"
	"		bConfigurationValue 1\n"
	"		interface {\n"
	"			bInterfaceNumber 0\n"
	"			bInterfaceClass 0xff\n"
	"			endpoint { bEndpointAddress 0x81; type bulk }\n"
	"			endpoint { bEndpointAddress 0x02; type bulk; loopback 0x81 }\n"
	"		}\n"
	"	}\n"
	"}\n";

/* 1-2: a full-speed HID boot keyboard */
static const char script_hid[] =
	"device {\n"
	"	speed full\n"
	"	idVendor 0x1209\n"
	"	idProduct 0x0002\n"
	"	bcdDevice 0x0210\n"
	"	config {\n"
	"		bConfigurationValue 1\n"
	"		interface {\n"
	"			bInterfaceNumber 0\n"
	"			bInterfaceClass 0x03\n"
	"			bInterfaceSubClass 0x01\n"
	"			bInterfaceProtocol 0x01\n"
	"			endpoint {\n"
	"				bEndpointAddress 0x81\n"
	"				type interrupt\n"
	"				wMaxPacketSize 8\n"
	"				bInterval 10\n"
	"				nak\n"
	"			}\n"
	"		}\n"
	"	}\n"
	"}\n";

/*
 * 1-3: composite with two configurations; interface 1 of the first one
 * declares alternate setting 1 before 0 (the record must show alt 0).
 */
static const char script_multi[] =
	"device {\n"
	"	speed high\n"
	"	idVendor 0x1d6b\n"
	"	idProduct 0x0104\n"
	"	bcdDevice 0x0001\n"
	"	bDeviceClass 0xef\n"
	"	bDeviceSubClass 0x02\n"
	"	bDeviceProtocol 0x01\n"
	"	config {\n"
	"		bConfigurationValue 2\n"
	"		interface {\n"
	"			bInterfaceNumber 0\n"
	"			bInterfaceClass 0x02\n"
	"			bInterfaceSubClass 0x02\n"
	"			bInterfaceProtocol 0x01\n"
	"			endpoint { bEndpointAddress 0x83; type interrupt; nak }\n"
	"		}\n"
	"		interface {\n"
	"			bInterfaceNumber 1\n"
	"			bAlternateSetting 1\n"
	"			bInterfaceClass 0x0a\n"
	"			bInterfaceProtocol 0x01\n"
	"			endpoint { bEndpointAddress 0x81; type bulk }\n"
	"			endpoint { bEndpointAddress 0x02; type bulk }\n"
	"		}\n"
	"		interface {\n"
	"			bInterfaceNumber 1\n"
	"			bAlternateSetting 0\n"
	"			bInterfaceClass 0x0a\n"
	"		}\n"
	"	}\n"
	"	config {\n"
	"		bConfigurationValue 3\n"
	"		interface {\n"
	"			bInterfaceNumber 0\n"
	"			bInterfaceClass 0xff\n"
	"			bInterfaceSubClass 0xff\n"
	"			bInterfaceProtocol 0xff\n"
	"		}\n"
	"	}\n"
	"}\n";

struct expect_dev {
	const char *busid;
	uint32_t speed;
	uint16_t vid, pid, bcd;
	uint8_t cls, sub, proto;
	uint8_t conf_value, n_confs, n_intf;
	uint8_t intf[4][3];
};

static const struct expect_dev expected[] = {
	{ "1-1", USBIP_SPEED_HIGH, 0x0557, 0x2008, 0x0100, 0, 0, 0, 1, 1, 1,
	  { { 0xff, 0x00, 0x00 } } },
	{ "1-2", USBIP_SPEED_FULL, 0x1209, 0x0002, 0x0210, 0, 0, 0, 1, 1, 1,
	  { { 0x03, 0x01, 0x01 } } },
	{ "1-3", USBIP_SPEED_HIGH, 0x1d6b, 0x0104, 0x0001, 0xef, 0x02, 0x01,
	  2, 2, 2, { { 0x02, 0x02, 0x01 }, { 0x0a, 0x00, 0x00 } } },
};
#define N_DEVS	(sizeof(expected) / sizeof(expected[0]))

static struct srv srv;
static char paths[N_DEVS][PATH_MAX];
static bool teardown_failed;

static int group_setup(void **state)
{
	const struct srv_script sc[N_DEVS] = {
		{ "dev1.gadget", script_bulk, paths[0] },
		{ "dev2.gadget", script_hid, paths[1] },
		{ "dev3.gadget", script_multi, paths[2] },
	};

	(void)state;
	return srv_start_scripts(&srv, sc, N_DEVS, NULL, NULL);
}

static int group_teardown(void **state)
{
	(void)state;
	return srv_finish(&srv, &teardown_failed);
}

/* The device descriptor as --dump prints it for script i. */
static void dump_device(size_t i, uint8_t *buf, size_t *len)
{
	const struct dump_item *it;
	struct dump d;

	assert_int_equal(dump_load(paths[i], &d), 0);
	it = dump_find(&d, "device");
	assert_non_null(it);
	assert_int_equal(it->len, 18);
	memcpy(buf, it->data, it->len);
	*len = it->len;
	dump_free(&d);
}

static void check_record(const struct usbip_usb_device *d,
			 const struct expect_dev *e, uint32_t devnum)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/usbrig/%s", e->busid);
	assert_string_equal(d->busid, e->busid);
	assert_string_equal(d->path, path);
	assert_int_equal(d->busnum, 1);
	assert_int_equal(d->devnum, devnum);
	assert_int_equal(d->speed, e->speed);
	assert_int_equal(d->idVendor, e->vid);
	assert_int_equal(d->idProduct, e->pid);
	assert_int_equal(d->bcdDevice, e->bcd);
	assert_int_equal(d->bDeviceClass, e->cls);
	assert_int_equal(d->bDeviceSubClass, e->sub);
	assert_int_equal(d->bDeviceProtocol, e->proto);
	assert_int_equal(d->bConfigurationValue, e->conf_value);
	assert_int_equal(d->bNumConfigurations, e->n_confs);
}

static void test_devlist(void **state)
{
	struct uc_devlist list;
	uint8_t dev[18];
	size_t i, j, len;

	(void)state;
	assert_int_equal(uc_devlist(srv.port, &list), 0);
	assert_int_equal(list.ndev, N_DEVS);
	for (i = 0; i < N_DEVS; i++) {
		const struct expect_dev *e = &expected[i];

		check_record(&list.d[i].dev, e, (uint32_t)i + 1);
		assert_int_equal(list.d[i].dev.bNumInterfaces, e->n_intf);
		for (j = 0; j < e->n_intf; j++) {
			const struct usbip_usb_interface *in =
				&list.d[i].intf[j];

			assert_int_equal(in->bInterfaceClass, e->intf[j][0]);
			assert_int_equal(in->bInterfaceSubClass,
					 e->intf[j][1]);
			assert_int_equal(in->bInterfaceProtocol,
					 e->intf[j][2]);
		}
		/* the record agrees with the descriptor the device serves */
		dump_device(i, dev, &len);
		assert_int_equal(list.d[i].dev.idVendor, dev[8] | dev[9] << 8);
		assert_int_equal(list.d[i].dev.idProduct,
				 dev[10] | dev[11] << 8);
		assert_int_equal(list.d[i].dev.bcdDevice,
				 dev[12] | dev[13] << 8);
		assert_int_equal(list.d[i].dev.bDeviceClass, dev[4]);
		assert_int_equal(list.d[i].dev.bNumConfigurations, dev[17]);
	}
}

/* the same DEVLIST twice in a row gives the same bytes' worth */
static void test_devlist_repeatable(void **state)
{
	struct uc_devlist a, b;

	(void)state;
	assert_int_equal(uc_devlist(srv.port, &a), 0);
	assert_int_equal(uc_devlist(srv.port, &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
}

static void test_import_ok(void **state)
{
	uint8_t want[18], got[64];
	struct uc u;
	uint32_t st;
	size_t i, len;
	int32_t status;
	int n;

	(void)state;
	for (i = 0; i < N_DEVS; i++) {
		assert_int_equal(uc_import(srv.port, expected[i].busid, &u,
					   &st), 0);
		assert_int_equal(st, ST_OK);
		check_record(&u.dev, &expected[i], (uint32_t)i + 1);
		assert_int_equal(u.devid, 1u << 16 | (uint32_t)(i + 1));
		/* the URB phase works: the kernel's first request */
		dump_device(i, want, &len);
		n = uc_get_descriptor(&u, 1, 0, 0, got, 64, &status);
		assert_int_equal(status, 0);
		assert_int_equal(n, (int)len);
		assert_memory_equal(got, want, len);
		uc_close(&u);
	}
}

/* A busid with a NUL inside compares as the C string before it. */
static void test_import_busid_c_string(void **state)
{
	uint8_t req[USBIP_IMPORT_REQ_SIZE], raw[USBIP_USB_DEVICE_SIZE];
	struct usbip_op_common op = { USBIP_VERSION, OP_REQ_IMPORT, 0 };
	struct usbip_usb_device d;
	int fd;

	(void)state;
	usbip_op_common_pack(&op, req);
	memset(req + 8, 'z', USBIP_BUSID_SIZE);
	memcpy(req + 8, "1-2\0", 4);
	fd = uc_connect(srv.port);
	assert_true(fd >= 0);
	assert_int_equal(uc_send(fd, req, sizeof(req)), 0);
	assert_int_equal(uc_recv_op(fd, &op), 0);
	assert_int_equal(op.code, OP_REP_IMPORT);
	assert_int_equal(op.status, ST_OK);
	assert_int_equal(uc_recv(fd, raw, sizeof(raw)), 0);
	assert_true(usbip_usb_device_unpack(&d, raw, sizeof(raw)) > 0);
	assert_string_equal(d.busid, "1-2");
	uc_disconnect(fd);
}

static void expect_import_status(const char *busid, uint32_t want)
{
	struct uc u;
	uint32_t st;

	assert_int_equal(uc_import(srv.port, busid, &u, &st), -1);
	assert_int_equal(st, want);
}

static void test_import_nodev(void **state)
{
	static const char *const bad[] = {
		"1-9", "", "1-1 ", "1-10", "2-1", "1-", "01-1",
		"/sys/devices/usbrig/1-1",
	};
	uint8_t req[USBIP_IMPORT_REQ_SIZE];
	struct usbip_op_common op = { USBIP_VERSION, OP_REQ_IMPORT, 0 };
	size_t i;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_import_status(bad[i], ST_NODEV);

	/* 32 bytes without a terminator: cut, so "1-1" + 29 'x' */
	usbip_op_common_pack(&op, req);
	memset(req + 8, 'x', USBIP_BUSID_SIZE);
	memcpy(req + 8, "1-1", 3);
	fd = uc_connect(srv.port);
	assert_true(fd >= 0);
	assert_int_equal(uc_send(fd, req, sizeof(req)), 0);
	assert_int_equal(uc_recv_op(fd, &op), 0);
	assert_int_equal(op.version, USBIP_VERSION);
	assert_int_equal(op.code, OP_REP_IMPORT);
	assert_int_equal(op.status, ST_NODEV);
	/* no record after a failed import, and the server closes */
	assert_int_equal(uc_expect_eof(fd, 5000), 0);
	uc_disconnect(fd);
}

static void test_import_busy(void **state)
{
	struct uc a, b, c;
	struct uc_devlist list;
	uint8_t buf[18];
	int32_t status;

	(void)state;
	assert_int_equal(uc_import_retry(srv.port, "1-1", &a, 3000), 0);
	expect_import_status("1-1", ST_DEV_BUSY);
	expect_import_status("1-1", ST_DEV_BUSY);

	/* other devices stay importable; the list still shows all */
	assert_int_equal(uc_import_retry(srv.port, "1-2", &b, 3000), 0);
	assert_int_equal(uc_devlist(srv.port, &list), 0);
	assert_int_equal(list.ndev, N_DEVS);

	/* the first client is unaffected by all this */
	assert_int_equal(uc_get_descriptor(&a, 1, 0, 0, buf, 18, &status),
			 18);
	assert_int_equal(status, 0);

	/* closing the socket is the clean disconnect: 1-1 is free again */
	uc_close(&a);
	assert_int_equal(uc_import_retry(srv.port, "1-1", &c, 3000), 0);
	assert_int_equal(uc_get_descriptor(&c, 1, 0, 0, buf, 18, &status),
			 18);
	assert_int_equal(status, 0);
	expect_import_status("1-1", ST_DEV_BUSY);
	uc_close(&c);
	uc_close(&b);
}

/* Every device imported at once, requests interleaved across them. */
static void test_import_all_concurrently(void **state)
{
	struct uc u[N_DEVS];
	uint8_t want[N_DEVS][18], got[18];
	size_t i, len;
	int32_t status;
	int round;

	(void)state;
	for (i = 0; i < N_DEVS; i++) {
		assert_int_equal(uc_import_retry(srv.port, expected[i].busid,
						 &u[i], 3000), 0);
		dump_device(i, want[i], &len);
	}
	for (round = 0; round < 20; round++) {
		for (i = 0; i < N_DEVS; i++) {
			assert_int_equal(uc_get_descriptor(&u[i], 1, 0, 0,
						got, 18, &status), 18);
			assert_int_equal(status, 0);
			assert_memory_equal(got, want[i], 18);
		}
	}
	for (i = N_DEVS; i-- > 0;)
		uc_close(&u[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_devlist, uc_teardown),
		cmocka_unit_test_teardown(test_devlist_repeatable, uc_teardown),
		cmocka_unit_test_teardown(test_import_ok, uc_teardown),
		cmocka_unit_test_teardown(test_import_busid_c_string, uc_teardown),
		cmocka_unit_test_teardown(test_import_nodev, uc_teardown),
		cmocka_unit_test_teardown(test_import_busy, uc_teardown),
		cmocka_unit_test_teardown(test_import_all_concurrently, uc_teardown),
	};
	int failed;

	failed = cmocka_run_group_tests(tests, group_setup, group_teardown);
	return failed || teardown_failed ? 1 : 0;
}
