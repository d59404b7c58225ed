// SPDX-License-Identifier: GPL-2.0
/*
 * test_import_sysfs.c - gadgets/import/sysfs.c on a device folder made as
 * the kernel lays it out (descriptors, strings, speed, an interface bound
 * to a driver), on the hex dumps people paste, and on broken files.
 */
#include <errno.h>
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

#include "import/import.h"

/* an FT232R as its sysfs `descriptors` shows it */
static const uint8_t ft232r[] = {
	/* device: USB 2.00, class 0, mps0 8, 0403:6001, bcdDevice 6.00,
	 * strings 1/2/3, one configuration */
	0x12, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x08,
	0x03, 0x04, 0x01, 0x60, 0x00, 0x06, 0x01, 0x02, 0x03, 0x01,
	/* configuration 1: 32 bytes, 1 interface, bus powered, 90 mA */
	0x09, 0x02, 0x20, 0x00, 0x01, 0x01, 0x00, 0xa0, 0x2d,
	/* interface 0: vendor class, 2 endpoints, iInterface 2 */
	0x09, 0x04, 0x00, 0x00, 0x02, 0xff, 0xff, 0xff, 0x02,
	/* bulk IN 0x81 and OUT 0x02, 64 bytes */
	0x07, 0x05, 0x81, 0x02, 0x40, 0x00, 0x00,
	0x07, 0x05, 0x02, 0x02, 0x40, 0x00, 0x00,
};

static char dir[64];

static void put(const char *name, const void *data, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void puts_attr(const char *name, const char *text)
{
	put(name, text, strlen(text));
}

static int run(const char *name, struct imp_set *set, struct imp_error *err)
{
	char path[256];
	uint8_t *buf;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(set, 0, sizeof(*set));
	set->format = strdup("sysfs");
	set->path = strdup(path);
	assert_int_equal(imp_read_file(path, &buf, &len, err), 0);
	assert_true(imp_reader_sysfs.sniff(path, buf, len));
	ret = imp_reader_sysfs.read(path, buf, len, set, err);
	free(buf);
	return ret;
}

static int setup(void **state)
{
	char sub[128], link[160];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/usbrig-sysfs-XXXXXX");
	assert_non_null(mkdtemp(dir));
	/* the device folder is named like the device, 1-4 */
	strcat(dir, "/1-4");
	assert_int_equal(mkdir(dir, 0755), 0);
	put("descriptors", ft232r, sizeof(ft232r));
	puts_attr("manufacturer", "FTDI\n");
	puts_attr("product", "FT232R USB UART\n");
	puts_attr("serial", "A50285BI\n");
	puts_attr("speed", "12\n");
	puts_attr("busnum", "1\n");
	puts_attr("devnum", "7\n");
	puts_attr("bConfigurationValue", "1\n");
	snprintf(sub, sizeof(sub), "%s/1-4:1.0", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(link, sizeof(link), "%s/driver", sub);
	assert_int_equal(symlink("../../../bus/usb/drivers/ftdi_sio", link), 0);
	puts_attr("1-4:1.0/interface", "FT232R USB UART\n");
	puts_attr("1-4:1.0/bAlternateSetting", " 0\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strlen(dir) - 4), dir);
	return system(cmd) ? -1 : 0;
}

static void test_device_folder(void **state)
{
	struct imp_error err = { "" };
	struct imp_set set;
	struct imp_dev *d;
	char *text = NULL;

	(void)state;
	assert_int_equal(run("descriptors", &set, &err), 0);
	assert_int_equal(set.n, 1);
	d = set.devs[0];
	assert_int_equal(d->busnum, 1);
	assert_int_equal(d->devnum, 7);
	assert_int_equal(d->speed, USBIP_SPEED_FULL);
	assert_int_equal(d->n_configs, 1);
	assert_int_equal(d->configs[0].len, 32);
	assert_string_equal(d->strings[1], "FTDI");
	assert_string_equal(d->strings[2], "FT232R USB UART");
	assert_string_equal(d->strings[3], "A50285BI");
	assert_true(d->driver_known);
	assert_string_equal(d->driver[0], "ftdi_sio");
	assert_int_equal(imp_emit(&set, d, NULL, &text, &err), 0);
	assert_non_null(strstr(text, "# Reported outcome (the dump's own words): interface 0: ftdi_sio;"));
	assert_non_null(strstr(text, "    string 3 \"A50285BI\"\n"));
	assert_non_null(strstr(text, "    speed full\n"));
	free(text);
	imp_set_free(&set);
}

static void test_hex_dumps(void **state)
{
	static const char *const dumps[] = {
		/* xxd */
		"00000000: 1201 0002 0000 0008 0304 0160 0006 0102  ...........`....\n"
		"00000010: 0301 0902 2000 0101 00a0 2d09 0400 0002  .... .....-.....\n"
		"00000020: ffff ff02 0705 8102 4000 0007 0502 0240  ........@......@\n"
		"00000030: 0000                                     ..\n",
		/* hexdump -C */
		"00000000  12 01 00 02 00 00 00 08  03 04 01 60 00 06 01 02  |...........`....|\n"
		"00000010  03 01 09 02 20 00 01 01  00 a0 2d 09 04 00 00 02  |.... .....-.....|\n"
		"00000020  ff ff ff 02 07 05 81 02  40 00 00 07 05 02 02 40  |........@......@|\n"
		"00000030  00 00                                             |..|\n"
		"00000032\n",
		/* bare bytes, as a mail pastes them */
		"12 01 00 02 00 00 00 08 03 04 01 60 00 06 01 02 03 01\n"
		"09 02 20 00 01 01 00 a0 2d\r\n09 04 00 00 02 ff ff ff 02\n"
		"07 05 81 02 40 00 00 07 05 02 02 40 00 00\n",
	};
	struct imp_error err = { "" };
	struct imp_set set;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(dumps) / sizeof(dumps[0]); i++) {
		puts_attr("paste.txt", dumps[i]);
		assert_int_equal(run("paste.txt", &set, &err), 0);
		assert_int_equal(set.devs[0]->configs[0].len, 32);
		assert_memory_equal(set.devs[0]->configs[0].data, ft232r + 18, 32);
		assert_memory_equal(set.devs[0]->device.data, ft232r, 18);
		imp_set_free(&set);
	}
}

static void test_bad_files(void **state)
{
	struct imp_error err = { "" };
	struct imp_set set;
	char want[256];

	(void)state;
	/* cut inside the configuration */
	put("cut", ft232r, sizeof(ft232r) - 5);
	assert_int_equal(run("cut", &set, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s/cut: offset 18: configuration of 32 bytes, only 27 left: the file is cut short", dir);
	assert_string_equal(err.msg, want);
	imp_set_free(&set);

	/* a hex paste with a word that is no byte */
	puts_attr("typo.txt", "12 01 00 02 00 00 00 08\n03 04 01 6O 00 06\n");
	assert_int_equal(run("typo.txt", &set, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s/typo.txt:2: '6O' is not a hex byte of a descriptor dump", dir);
	assert_string_equal(err.msg, want);
	imp_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_folder),
		cmocka_unit_test(test_hex_dumps),
		cmocka_unit_test(test_bad_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
