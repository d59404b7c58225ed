// SPDX-License-Identifier: GPL-2.0
/*
 * test_census.c - the census's reading of modules.alias and the devices
 * it makes (harness/host/census_alias.c, census_gadget.c): aliases as
 * file2alias writes them parsed and sorted into kinds, the device of an
 * alias matched by it, its new_id twin not, a module tree read, every
 * generated gadget script accepted by the gadget parser, and a guest's
 * records read into a row (census_report.c), a finding with the kernel
 * log of both phases.
 */
#define _GNU_SOURCE
#include "census.h"
#include "census_int.h"
#include "census_report.h"
#include "script.h"
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../harness/common/fsutil.h"

static void test_parse(void **state)
{
	struct census_alias a;

	(void)state;
	assert_int_equal(census_alias_parse(
		"usb:v0403p6001d*dc*dsc*dp*ic*isc*ip*in*", &a), 0);
	assert_int_equal(a.vid, 0x0403);
	assert_int_equal(a.pid, 0x6001);
	assert_string_equal(a.bcd, "*");
	assert_int_equal(a.dc, -1);
	assert_int_equal(a.in, -1);
	assert_int_equal(census_alias_kind(&a), CK_DEVICE);

	assert_int_equal(census_alias_parse(
		"usb:v13FDp3940d0[0-2]*dc*dsc*dp*ic*isc*ip*in*", &a), 0);
	assert_string_equal(a.bcd, "0[0-2]*");

	assert_int_equal(census_alias_parse(
		"usb:v19D2p0414d*dc*dsc*dp*icFFiscFFipFFin04*", &a), 0);
	assert_int_equal(a.ic, 0xff);
	assert_int_equal(a.in, 4);

	assert_int_equal(census_alias_parse(
		"usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*", &a), 0);
	assert_int_equal(census_alias_kind(&a), CK_INTFCLASS);
	assert_int_equal(census_alias_parse(
		"usb:v*p*d*dcE0dsc01dp01ic*isc*ip*in*", &a), 0);
	assert_int_equal(census_alias_kind(&a), CK_DEVCLASS);
	assert_int_equal(census_alias_parse(
		"usb:v12D1p*d*dc*dsc*dp*icFFisc02ip16in*", &a), 0);
	assert_int_equal(census_alias_kind(&a), CK_VENDOR);

	/* not of this format */
	assert_int_equal(census_alias_parse("usb:v0403", &a), -EINVAL);
	assert_int_equal(census_alias_parse(
		"usb:v04g3p6001d*dc*dsc*dp*ic*isc*ip*in*", &a), -EINVAL);
	assert_int_equal(census_alias_parse(
		"usb:v0403p6001d*dsc*dp*ic*isc*ip*in*", &a), -EINVAL);
	assert_int_equal(census_alias_parse(
		"usb:v0403p6001d*dc*dsc*dp*ic*isc*ip*in*x", &a), -EINVAL);
	assert_int_equal(census_alias_parse(
		"pci:v00008086d*sv*sd*bc*sc*i*", &a), -EINVAL);
}

/* The device of each alias is matched by it; the twin of a class alias
 * that names more than the class is not. */
static void test_devices(void **state)
{
	static const char *const pats[] = {
		"usb:v0403p6001d*dc*dsc*dp*ic*isc*ip*in*",
		"usb:v13FDp3940d0[0-2]*dc*dsc*dp*ic*isc*ip*in*",
		"usb:v13FDp3940d030*dc*dsc*dp*ic*isc*ip*in*",
		"usb:v19D2p0414d*dc*dsc*dp*icFFiscFFipFFin04*",
		"usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*",
		"usb:v*p*d*dcE0dsc01dp01ic*isc*ip*in*",
		"usb:v12D1p*d*dc*dsc*dp*icFFisc02ip16in*",
	};
	struct census_alias a;
	struct census_dev d, t;
	char ma[96];

	(void)state;
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		assert_int_equal(census_alias_parse(pats[i], &a), 0);
		assert_int_equal(census_dev_of(&a, 0xce00, &d), 0);
		if (!census_alias_matches(&a, &d))
			fail_msg("%s does not match its device", pats[i]);
		assert_int_equal(census_twin_of(&a, 0xce01, &t), 0);
		assert_int_equal(t.vid, CENSUS_VID);
		assert_int_equal(t.pid, 0xce01);
		if (census_alias_matches(&a, &t))
			fail_msg("%s matches its twin", pats[i]);
	}
	/* bcdDevice: the lowest the range allows */
	assert_int_equal(census_alias_parse(pats[1], &a), 0);
	assert_int_equal(census_dev_of(&a, 0xce00, &d), 0);
	assert_int_equal(d.bcd, 0x0000);
	assert_int_equal(census_alias_parse(pats[2], &a), 0);
	assert_int_equal(census_dev_of(&a, 0xce00, &d), 0);
	assert_int_equal(d.bcd, 0x0300);
	/* interface 4: five interfaces, the last the target */
	assert_int_equal(census_alias_parse(pats[3], &a), 0);
	assert_int_equal(census_dev_of(&a, 0xce00, &d), 0);
	assert_int_equal(d.n_intf, 5);
	assert_int_equal(d.target, 4);
	census_dev_modalias(&d, 4, ma, sizeof(ma));
	assert_string_equal(ma,
		"usb:v19D2p0414d0000dc00dsc00dp00icFFiscFFipFFin04");
	/* a class alias that names nothing but the class: the twin still
	 * matches it */
	assert_int_equal(census_alias_parse(
		"usb:v*p*d*dc*dsc*dp*ic02isc*ip*in*", &a), 0);
	assert_int_equal(census_twin_of(&a, 0xce02, &t), 0);
	assert_true(census_alias_matches(&a, &t));
	/* past CENSUS_INTF_MAX interfaces */
	assert_int_equal(census_alias_parse(
		"usb:v1234p5678d*dc*dsc*dp*ic*isc*ip*in10*", &a), 0);
	assert_int_equal(census_dev_of(&a, 0xce00, &d), -ERANGE);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A module tree: modules sorted, kinds found, matching modules found. */
static void test_tree(void **state)
{
	char root[] = "/tmp/usbrig-census-XXXXXX", dir[256], path[300];
	struct census_aliases al;
	struct census_name mods[8];
	struct census_alias a;
	struct census_dev d;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/lib/modules/6.1.0-test", root);
	assert_int_equal(fs_mkdir_p(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/modules.alias", dir);
	write_file(path,
		"# Aliases extracted from modules themselves.\n"
		"alias pci:v00008086d*sv*sd*bc*sc*i* e1000\n"
		"alias usb:v0403p6001d*dc*dsc*dp*ic*isc*ip*in* ftdi_sio\n"
		"alias usb:v*p*d*dc*dsc*dp*ic08isc06ip50in* usb_storage\n"
		"alias usb:v0403p6010d*dc*dsc*dp*ic*isc*ip*in* ftdi_sio\n"
		"alias usb:v*p*d*dc*dsc*dp*ic08isc06ip62in* uas\n"
		"alias usb:v*p*d*dc*dsc*dp*ic08isc06ip50in* ums-test\n");
	snprintf(path, sizeof(path), "%s/modules.builtin.alias", dir);
	write_file(path, "alias usb:v*p*d*dc09dsc*dp*ic*isc*ip*in* usbcore\n"
		   "alias usb:v05E3p*d*dc*dsc*dp*ic09isc*ip*in* usbcore\n"
		   "alias usb:v*p*d*dc*dsc*dp*ic09isc*ip*in* usbcore\n");

	assert_int_equal(census_aliases_read(root, "6.1.0-test", &al), 0);
	assert_int_equal(al.n, 8);
	assert_int_equal(al.n_mod, 5);
	assert_string_equal(al.m[0].name, "ftdi_sio");
	assert_int_equal(al.m[0].n_alias, 2);
	assert_true(al.m[0].has[CK_DEVICE]);
	assert_false(al.m[0].has[CK_INTFCLASS]);
	assert_string_equal(al.m[1].name, "uas");
	assert_string_equal(al.m[2].name, "ums_test");	/* '-' -> '_' */
	assert_string_equal(al.m[3].name, "usb_storage");
	assert_string_equal(al.m[4].name, "usbcore");
	assert_true(al.m[4].builtin);
	assert_true(al.m[4].has[CK_DEVCLASS]);

	/* a mass-storage device: usb_storage and ums_test, not uas */
	assert_int_equal(census_alias_parse(
		"usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*", &a), 0);
	assert_int_equal(census_dev_of(&a, 0xce00, &d), 0);
	assert_int_equal(census_matching(&al, &d, mods, 8), 2);
	assert_string_equal(mods[0].s, "usb_storage");
	assert_string_equal(mods[1].s, "ums_test");
	/* its twin (another protocol): none of usb_storage's aliases */
	assert_int_equal(census_twin_of(&a, 0xce01, &d), 0);
	assert_false(census_module_matches(&al, "usb_storage", &d));

	/* usbcore's Genesys Logic hub entry: the twin escapes it, not the
	 * entry for any hub interface */
	assert_true(al.m[4].has[CK_VENDOR]);
	assert_int_equal(census_alias_parse(
		"usb:v05E3p*d*dc*dsc*dp*ic09isc*ip*in*", &a), 0);
	assert_int_equal(census_twin_of(&a, 0xce02, &d), 0);
	assert_false(census_alias_matches(&a, &d));
	assert_true(census_module_matches(&al, "usbcore", &d));
	assert_false(census_module_matches(&al, "ftdi_sio", &d));
	census_aliases_free(&al);

	/* no modules.alias: an error, not an empty census */
	snprintf(path, sizeof(path), "%s/modules.alias", dir);
	unlink(path);
	assert_int_equal(census_aliases_read(root, "6.1.0-test", &al),
			 -ENOENT);
	fs_rm_rf(root);
}

/* Every census gadget is a script the gadget parser takes. */
static void test_gadgets(void **state)
{
	static const char *const pats[] = {
		"usb:v0403p6001d*dc*dsc*dp*ic*isc*ip*in*",
		"usb:v19D2p0414d*dc*dsc*dp*icFFiscFFipFFin04*",
		"usb:v*p*d*dc*dsc*dp*ic01isc01ip00in*",
		"usb:v*p*d*dc*dsc*dp*ic03isc01ip01in*",
		"usb:v*p*d*dc*dsc*dp*ic07isc01ip02in*",
		"usb:v*p*d*dcE0dsc01dp01ic*isc*ip*in*",
		"usb:v*p*d*dc09dsc*dp*ic*isc*ip*in*",
		"usb:v*p*d*dc*dsc*dp*ic0Eisc01ip00in*",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		struct census_alias a;
		struct census_dev d;
		struct script_error err;
		struct gd_device *dev = NULL;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		assert_non_null(f);
		assert_int_equal(census_alias_parse(pats[i], &a), 0);
		assert_int_equal(census_dev_of(&a, 0xce00, &d), 0);
		assert_int_equal(census_gadget_write(f, &d, "census test"), 0);
		assert_int_equal(fclose(f), 0);
		if (script_parse("census.gadget", buf, len, &dev, &err))
			fail_msg("%s: %s\n%s", pats[i], err.msg, buf);
		gd_model_free(dev);
		free(buf);
	}
}

/* OUT (a new folder in /tmp) and the plan of module foo_usb, one
 * device-id alias, its saved/ folder made */
static void plan_foo_usb(char *out, struct census_plan *plan)
{
	struct census_alias a;
	char path[300];

	assert_non_null(mkdtemp(out));
	memset(plan, 0, sizeof(*plan));
	snprintf(plan->module, sizeof(plan->module), "foo_usb");
	plan->kind[CK_DEVICE].planned = true;
	plan->kind[CK_DEVICE].newid_class = -1;
	assert_int_equal(census_alias_parse(
		"usb:v1234p5678d*dc*dsc*dp*ic*isc*ip*in*", &a), 0);
	assert_int_equal(census_dev_of(&a, 0xce00,
				       &plan->kind[CK_DEVICE].dev), 0);
	assert_int_equal(census_twin_of(&a, 0xce00,
					&plan->kind[CK_DEVICE].twin), 0);
	snprintf(path, sizeof(path), "%s/saved/census-foo_usb", out);
	assert_int_equal(fs_mkdir_p(path, 0755), 0);
}

/* foo_usb's record of the static phase: bound; its log's head */
#define FOO_BOUND	"intf static 0 00 ff 1-1:1.0 foo_usb\n" \
			"drivers static 0 usb:foo_usb\n"
#define FOO_STATIC_LOG	"[    2.000000] usbrig-census: begin foo_usb\n" \
			"[    2.100000] usbrig-census: static 0\n"

/* OUT/rel, written */
static void put_out(const char *out, const char *rel, const char *text)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%s", out, rel);
	write_file(path, text);
}

/* OUT/rel, read (freed by the caller) */
static char *get_out(const char *out, const char *rel)
{
	char path[300], *text;

	snprintf(path, sizeof(path), "%s/%s", out, rel);
	text = fs_read_file(path, 1 << 20, NULL);
	assert_non_null(text);
	return text;
}

/* census_report() of OUT's records for plan, against base (or none) */
static int report_of(const char *out, const struct census_plan *plan,
		     const char *base)
{
	return census_report(out, "6.1.0-test", plan, 1, 1.0, 1, base);
}

/*
 * A module whose table binds and whose new_id gives a probe error: the row
 * says so, and the finding carries both phases' kernel log, without the
 * lines every enumeration prints.
 */
static void test_report(void **state)
{
	char out[] = "/tmp/usbrig-census-XXXXXX", *json, *md;
	struct census_plan plan;

	(void)state;
	plan_foo_usb(out, &plan);
	put_out(out, "saved/census-foo_usb/report.txt",
		FOO_BOUND
		"node static 0 /dev/foo0\n"
		"intf newid-before 0 00 ff 1-1:1.0 none\n"
		"drivers newid-before 0 usb:foo_usb\n"
		"newid 0 /sys/bus/usb/drivers/foo_usb/new_id 0 \n"
		"intf newid 0 00 ff 1-1:1.0 none\n"
		"drivers newid 0 usb:foo_usb\n"
		"removeid 0 /sys/bus/usb/drivers/foo_usb/remove_id 0 \n"
		"intf replug 0 00 ff 1-1:1.0 none\n"
		"drivers replug 0 usb:foo_usb\n"
		"dmesg\n"
		"[    1.000000] usbrig-census: begin bar\n"
		"[    1.100000] bar: not this module's line\n"
		"[    2.000000] usbrig-census: begin foo_usb\n"
		"[    2.100000] usbrig-census: static 0\n"
		"[    2.200000] usb 1-1: new high-speed USB device number 2 using vhci_hcd\n"
		"[    2.300000] usb 1-1: Manufacturer: usbrig census\n"
		"[    2.400000] foo_usb 1-1:1.0: widget found, firmware 1.2\n"
		"[    3.000000] usbrig-census: newid 0\n"
		"[    3.100000] vhci_hcd vhci_hcd.0: Device attached\n"
		"[    3.200000] foo_usb 1-1:1.0: bad widget id\n"
		"[    3.300000] foo_usb: probe of 1-1:1.0 failed with error -5\n"
		"[    4.000000] usbrig-census: replug 0\n");
	assert_int_equal(report_of(out, &plan, NULL), CENSUS_EXIT_OK);
	json = get_out(out, "census.json");
	assert_non_null(strstr(json, "\"static\": \"bound\""));
	assert_non_null(strstr(json, "\"newid\": \"probe-error\", "
				     "\"newid_errno\": 5"));
	assert_non_null(strstr(json, "\"replug\": \"clean\""));
	assert_non_null(strstr(json, "\"logs\": \"static:\\nfoo_usb 1-1:1.0: "
				     "widget found, firmware 1.2\\nnew_id:\\n"
				     "foo_usb 1-1:1.0: bad widget id\\n"));
	assert_null(strstr(json, "Manufacturer"));
	assert_null(strstr(json, "Device attached"));
	assert_null(strstr(json, "not this module"));
	free(json);
	md = get_out(out, "census.md");
	assert_non_null(strstr(md, "- **foo_usb** (device-id): new_id gives "
				   "probe-error Input/output error, the table "
				   "bound"));
	assert_non_null(strstr(md, "\n  foo_usb 1-1:1.0: bad widget id\n"));
	free(md);
	fs_rm_rf(out);
}

/*
 * The times the next census shares its modules by (usbrig --balance): a
 * module's longest row, in the file's order; nothing for an unreadable
 * file.
 */
static void test_times(void **state)
{
	char out[] = "/tmp/usbrig-census-XXXXXX", path[300], *t;

	(void)state;
	assert_non_null(mkdtemp(out));
	put_out(out, "census.json",
		"{\"kernel\": \"6.1.0-test\", \"rows\": [\n"
		"{\"module\": \"a_usb\", \"kind\": \"device-id\", \"time_s\": 4.1, \"report\": \"\"},\n"
		"{\"module\": \"a_usb\", \"kind\": \"vendor\", \"time_s\": 6.0, \"report\": \"\"},\n"
		"{\"module\": \"b_usb\", \"kind\": \"device-id\", \"time_s\": 32.4, \"report\": \"\"}\n"
		"]}\n");
	snprintf(path, sizeof(path), "%s/census.json", out);
	t = census_times(path);
	assert_non_null(t);
	assert_string_equal(t, "census-a_usb 6.0\ncensus-b_usb 32.4\n");
	free(t);
	snprintf(path, sizeof(path), "%s/none.json", out);
	assert_null(census_times(path));
	fs_rm_rf(out);
}

/*
 * A module whose device never enumerated in the first boot: census-probe's
 * `reset` ended that boot (a crash that is no kernel report of the
 * module's), and the second run, in a fresh guest, replaces the first's
 * account; the table says it ran again.
 */
static void test_report_retry(void **state)
{
	char out[] = "/tmp/usbrig-census-XXXXXX", *json, *md;
	struct census_plan plan;

	(void)state;
	plan_foo_usb(out, &plan);
	put_out(out, "saved/census-foo_usb/report.txt",
		"nodev static 0\nnodev newid 0\nnodev replug 0\ndmesg\n");
	put_out(out, "run.log", "[1/1] FAIL census-foo_usb (41.0s)\n");
	put_out(out, "run.ktap", "KTAP version 1\n1..1\n"
		"# crash: Kernel panic - not syncing: sysrq triggered crash\n"
		"# | usbrig-census: foo_usb: " CENSUS_NODEV_RESET "\n"
		"# | sysrq: Trigger a crash\n"
		"not ok 1 census-foo_usb\n");
	assert_int_equal(report_of(out, &plan, NULL), CENSUS_EXIT_OK);
	md = get_out(out, "census.md");
	assert_null(strstr(md, "kernel report"));
	assert_null(strstr(md, "Run again"));
	assert_non_null(strstr(md, "| no-device |"));
	free(md);

	/* the second run: bound, in 5 s */
	put_out(out, "saved/census-foo_usb/report.txt",
		FOO_BOUND "dmesg\n");
	put_out(out, "retry.log", "[1/1] PASS census-foo_usb (5.0s)\n");
	put_out(out, "retry.ktap",
		"KTAP version 1\n1..1\nok 1 census-foo_usb\n");
	assert_int_equal(report_of(out, &plan, NULL), CENSUS_EXIT_OK);
	md = get_out(out, "census.md");
	assert_non_null(strstr(md, "Run again in a fresh guest, their device "
				   "not enumerated in the first boot: "
				   "foo_usb.\n"));
	assert_non_null(strstr(md, "| foo_usb | device-id | usb:foo_usb | usb "
				   "| bound |"));
	assert_non_null(strstr(md, "| 5.0 |"));
	free(md);
	json = get_out(out, "census.json");
	assert_non_null(strstr(json, "\"static\": \"bound\""));
	free(json);
	fs_rm_rf(out);
}

/*
 * --baseline: the same rows compare equal; a kernel report that the
 * baseline's row lacks is a change, as is one that is gone, and so is a
 * changed outcome.
 */
static void test_compare(void **state)
{
	char out[] = "/tmp/usbrig-census-XXXXXX", base[320];
	char *json, *empty, *p;
	struct census_plan plan;

	(void)state;
	plan_foo_usb(out, &plan);
	put_out(out, "saved/census-foo_usb/report.txt",
		FOO_BOUND
		"dmesg\n" FOO_STATIC_LOG
		"[    2.200000] WARNING: CPU: 0 PID: 7 at drivers/foo.c:12 foo_probe\n"
		"[    2.300000] Call Trace:\n");
	assert_int_equal(report_of(out, &plan, NULL), CENSUS_EXIT_OK);
	json = get_out(out, "census.json");
	assert_non_null(strstr(json, "\"report\": \"static: WARNING: CPU: 0"));
	snprintf(base, sizeof(base), "%s/base.json", out);
	put_out(out, "base.json", json);
	assert_int_equal(report_of(out, &plan, base), CENSUS_EXIT_OK);

	/* the baseline had no report: a new one is a change */
	empty = strdup(json);
	assert_non_null(empty);
	p = strstr(empty, "\"report\": \"");
	assert_non_null(p);
	p += strlen("\"report\": \"");
	assert_null(strstr(p, "\"logs\""));	/* the report is the last field */
	assert_non_null(strchr(p, '}'));
	memmove(p, strchr(p, '}') - 1, strlen(strchr(p, '}') - 1) + 1);
	assert_non_null(strstr(empty, "\"report\": \"\"}"));
	put_out(out, "base.json", empty);
	assert_int_equal(report_of(out, &plan, base), CENSUS_EXIT_CHANGED);

	/* the same outcomes without the report: gone is a change too */
	put_out(out, "saved/census-foo_usb/report.txt",
		FOO_BOUND "dmesg\n");
	put_out(out, "base.json", json);
	assert_int_equal(report_of(out, &plan, base), CENSUS_EXIT_CHANGED);
	put_out(out, "base.json", empty);
	assert_int_equal(report_of(out, &plan, base), CENSUS_EXIT_OK);

	/* an outcome changed */
	put_out(out, "saved/census-foo_usb/report.txt",
		"intf static 0 00 ff 1-1:1.0 none\n"
		"drivers static 0 usb:foo_usb\ndmesg\n");
	assert_int_equal(report_of(out, &plan, base), CENSUS_EXIT_CHANGED);
	free(empty);
	free(json);
	fs_rm_rf(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_gadgets),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_report_retry),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
