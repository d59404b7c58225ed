// SPDX-License-Identifier: GPL-2.0
/*
 * test_urb.c - the URB phase against the real usbrig-gadget: descriptors
 * read back byte for byte (against `--dump` of the same script, and by hand
 * for the test's own device), bulk loopback with URBs in flight, UNLINK,
 * STALL, the disconnect fault, concurrent endpoints, back-pressure and the
 * -v URB log lines.
 *
 * Devices: 1-1 the bulk device of scripts.c, 1-2 its fault device, 1-3 its
 * isochronous device, then every gadgets/examples/NAME.gadget in glob
 * order (1-4, ...).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "client.h"
#include "scripts.h"

#define MAX_SCRIPTS	(3 + 32)

static struct srv srv;
static char own_paths[3][PATH_MAX];
static const char *scripts[MAX_SCRIPTS];	/* index i is busid 1-(i+1) */
static size_t n_scripts;
static glob_t examples;
static bool teardown_failed;

static int group_setup(void **state)
{
	static const char *const opts[] = { "-v", NULL };
	const struct srv_script own[] = {
		{ "bulk.gadget", script_bulk, own_paths[0] },
		{ "faults.gadget", script_faults, own_paths[1] },
		{ "iso.gadget", script_iso, own_paths[2] },
	};
	const char *more[MAX_SCRIPTS + 1];
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < 3; i++)
		scripts[n_scripts++] = own_paths[i];
	if (glob("gadgets/examples/*.gadget", 0, NULL, &examples) == 0)
		for (i = 0; i < examples.gl_pathc && n_scripts < MAX_SCRIPTS;
		     i++) {
			scripts[n_scripts++] = examples.gl_pathv[i];
			more[n++] = examples.gl_pathv[i];
		}
	more[n] = NULL;
	return srv_start_scripts(&srv, own, 3, opts, more);
}

static int group_teardown(void **state)
{
	(void)state;
	globfree(&examples);
	return srv_finish(&srv, &teardown_failed);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void import_bulk(struct uc *u)
{
	assert_int_equal(uc_import_retry(srv.port, "1-1", u, 3000), 0);
}

static void set_config(struct uc *u, uint8_t value)
{
	int32_t status = 1;

	assert_int_equal(uc_control(u, 0x00, 0x09, value, 0, NULL, 0,
				    &status), 0);
	assert_int_equal(status, 0);
}

/* ---------------------------------------------------------------------
 * Descriptors
 * --------------------------------------------------------------------- */

/*
 * A connection that re-imports when the device hangs up (the fault
 * examples disconnect after a few URBs or milliseconds).
 */
struct desc_conn {
	struct uc u;
	const char *busid;
	bool open;
};

static int desc_get(struct desc_conn *dc, uint8_t type, uint8_t index,
		    uint16_t lang, uint8_t *buf, uint16_t len,
		    int32_t *status)
{
	int tries, n;

	for (tries = 0; tries < 3; tries++) {
		if (!dc->open) {
			if (uc_import_retry(srv.port, dc->busid, &dc->u,
					    3000) < 0)
				return -1;
			dc->open = true;
		}
		n = uc_get_descriptor(&dc->u, type, index, lang, buf, len,
				      status);
		if (n >= 0)
			return n;
		print_message("  %s hung up (a fault?): importing again\n",
			      dc->busid);
		uc_close(&dc->u);
		dc->open = false;
	}
	return -1;
}

static void expect_desc(struct desc_conn *dc, uint8_t type, uint8_t index,
			uint16_t lang, const struct dump_item *it)
{
	uint8_t buf[65535];
	int32_t status = 1;
	int n;

	/* the first bytes alone (the kernel reads 9 of a configuration,
	 * 5 of a BOS, then the whole) */
	if (it->len > 9) {
		n = desc_get(dc, type, index, lang, buf,
			     type == 0x0f ? 5 : 9, &status);
		assert_int_equal(status, 0);
		assert_int_equal(n, type == 0x0f ? 5 : 9);
		assert_memory_equal(buf, it->data, n);
	}
	/* then the whole set, asking for more than there is */
	n = desc_get(dc, type, index, lang, buf,
		     (uint16_t)(it->len < 65535 - 64 ? it->len + 64 : 65535),
		     &status);
	if (status != 0 || n != (int)it->len)
		print_error("%s %s: status %d, %d bytes, dump has %zu\n",
			    dc->busid, it->label, status, n, it->len);
	assert_int_equal(status, 0);
	assert_int_equal(n, (int)it->len);
	assert_memory_equal(buf, it->data, it->len);
}

/* Every descriptor --dump prints, read back over USB/IP. */
static void check_script_descriptors(const char *busid, const char *path)
{
	struct desc_conn dc = { .busid = busid };
	const struct dump_item *it, *s0;
	uint16_t lang = 0x0409;
	uint8_t buf[256];
	struct dump d;
	int32_t status;
	unsigned int idx;
	size_t i;
	int n;

	assert_int_equal(dump_load(path, &d), 0);
	s0 = dump_find(&d, "string 0");
	if (s0 && s0->len >= 4)
		lang = (uint16_t)(s0->data[2] | s0->data[3] << 8);
	assert_non_null(dump_find(&d, "device"));

	for (i = 0; i < d.n; i++) {
		it = &d.items[i];
		if (!strcmp(it->label, "device")) {
			/* the kernel's first request: 64 bytes */
			expect_desc(&dc, 0x01, 0, 0, it);
		} else if (sscanf(it->label, "config %u", &idx) == 1) {
			expect_desc(&dc, 0x02, (uint8_t)idx, 0, it);
		} else if (sscanf(it->label, "other-speed-config %u",
				  &idx) == 1) {
			expect_desc(&dc, 0x07, (uint8_t)idx, 0, it);
		} else if (!strcmp(it->label, "qualifier")) {
			expect_desc(&dc, 0x06, 0, 0, it);
		} else if (!strcmp(it->label, "bos")) {
			expect_desc(&dc, 0x0f, 0, 0, it);
		} else if (sscanf(it->label, "string %u", &idx) == 1) {
			expect_desc(&dc, 0x03, (uint8_t)idx,
				    idx ? lang : 0, it);
		} else {
			print_error("%s: unknown dump label '%s'\n", path,
				    it->label);
			fail();
		}
	}
	/* a string the script does not have STALLs */
	if (!dump_find(&d, "string 255")) {
		n = desc_get(&dc, 0x03, 255, lang, buf, 255, &status);
		assert_int_equal(n, 0);
		assert_int_equal(status, -EPIPE);
	}
	if (dc.open)
		uc_close(&dc.u);
	dump_free(&d);
}

static void test_descriptors_match_dump(void **state)
{
	char busid[32];
	size_t i;

	(void)state;
	for (i = 0; i < n_scripts; i++) {
		snprintf(busid, sizeof(busid), "1-%zu", i + 1);
		print_message("  %s %s\n", busid, scripts[i]);
		check_script_descriptors(busid, scripts[i]);
	}
}

static void test_descriptors_by_hand(void **state)
{
	uint8_t buf[256];
	int32_t status;
	struct uc u;

	(void)state;
	import_bulk(&u);
	/* GET_DESCRIPTOR(DEVICE), wLength 64 as usbcore asks first */
	assert_int_equal(uc_get_descriptor(&u, 0x01, 0, 0, buf, 64, &status),
			 18);
	assert_int_equal(status, 0);
	assert_memory_equal(buf, bulk_device_desc, 18);
	/* 8 bytes: the reply is cut to wLength */
	assert_int_equal(uc_get_descriptor(&u, 0x01, 0, 0, buf, 8, &status),
			 8);
	assert_memory_equal(buf, bulk_device_desc, 8);
	/* configuration: header first, then wTotalLength */
	assert_int_equal(uc_get_descriptor(&u, 0x02, 0, 0, buf, 9, &status),
			 9);
	assert_memory_equal(buf, bulk_config_desc, 9);
	assert_int_equal(uc_get_descriptor(&u, 0x02, 0, 0, buf, 255,
					   &status),
			 (int)sizeof(bulk_config_desc));
	assert_int_equal(status, 0);
	assert_memory_equal(buf, bulk_config_desc, sizeof(bulk_config_desc));
	/* no second configuration */
	assert_int_equal(uc_get_descriptor(&u, 0x02, 1, 0, buf, 255,
					   &status), 0);
	assert_int_equal(status, -EPIPE);
	/* strings */
	assert_int_equal(uc_get_descriptor(&u, 0x03, 0, 0, buf, 255,
					   &status), 4);
	assert_memory_equal(buf, bulk_string0, 4);
	assert_int_equal(uc_get_descriptor(&u, 0x03, 1, 0x0409, buf, 255,
					   &status),
			 (int)sizeof(bulk_string1));
	assert_int_equal(status, 0);
	assert_memory_equal(buf, bulk_string1, sizeof(bulk_string1));
	/* the 2-byte probe Windows and some drivers make */
	assert_int_equal(uc_get_descriptor(&u, 0x03, 1, 0x0409, buf, 2,
					   &status), 2);
	assert_memory_equal(buf, bulk_string1, 2);
	uc_close(&u);
}

/* ---------------------------------------------------------------------
 * Bulk loopback: 1 MiB in 64 KiB transfers, several in flight each way
 * --------------------------------------------------------------------- */

#define LB_TOTAL	(1024 * 1024)
#define LB_CHUNK	(64 * 1024)
#define LB_DEPTH	4

static void test_bulk_loopback_1mib(void **state)
{
	uint32_t in_seqs[LB_DEPTH * 2], out_seqs[LB_DEPTH * 2];
	size_t n_in = 0, n_out = 0, sent = 0, recvd = 0, i;
	uint8_t *src, *dst;
	uint32_t x = 0x12345678, seq;
	struct uc_ret r;
	struct uc u;
	bool found;

	(void)state;
	src = malloc(LB_TOTAL);
	dst = calloc(1, LB_TOTAL);
	assert_non_null(src);
	assert_non_null(dst);
	for (i = 0; i < LB_TOTAL; i++) {
		/* xorshift32: no period that a chunk size could hide */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		src[i] = (uint8_t)x;
	}

	import_bulk(&u);
	set_config(&u, 1);
	while (recvd < LB_TOTAL || n_out) {
		/* IN first: they wait (NAK) until the OUT data arrives */
		while (n_in < LB_DEPTH && recvd + n_in * LB_CHUNK < LB_TOTAL) {
			seq = uc_submit(&u, BULK_EP_LOOP_IN & 0x0f, true,
					NULL, NULL, LB_CHUNK);
			assert_true(seq != 0);
			in_seqs[n_in++] = seq;
		}
		while (n_out < LB_DEPTH && sent < LB_TOTAL) {
			seq = uc_submit(&u, BULK_EP_LOOP_OUT, false, NULL,
					src + sent, LB_CHUNK);
			assert_true(seq != 0);
			out_seqs[n_out++] = seq;
			sent += LB_CHUNK;
		}
		assert_int_equal(uc_read_ret(&u, &r), 0);
		assert_int_equal(r.command, USBIP_RET_SUBMIT);
		assert_int_equal(r.status, 0);
		found = false;
		for (i = 0; i < n_out && !found; i++) {
			if (out_seqs[i] != r.seqnum)
				continue;
			/* OUT reports the bytes taken: all of them */
			assert_int_equal(r.actual, LB_CHUNK);
			out_seqs[i] = out_seqs[--n_out];
			found = true;
		}
		for (i = 0; i < n_in && !found; i++) {
			if (in_seqs[i] != r.seqnum)
				continue;
			/* one IN endpoint completes in submission order */
			assert_int_equal(r.seqnum, in_seqs[0]);
			assert_true(r.actual > 0);
			assert_true(recvd + r.actual <= LB_TOTAL);
			memcpy(dst + recvd, r.data, r.actual);
			recvd += r.actual;
			memmove(in_seqs, in_seqs + 1,
				--n_in * sizeof(in_seqs[0]));
			found = true;
		}
		free(r.data);
		assert_true(found);
	}
	assert_int_equal(n_in, 0);
	assert_memory_equal(dst, src, LB_TOTAL);
	free(src);
	free(dst);
	uc_close(&u);
}

/* ---------------------------------------------------------------------
 * UNLINK
 * --------------------------------------------------------------------- */

static void expect_unlink(struct uc *u, uint32_t victim, int32_t want)
{
	struct uc_ret r;
	uint32_t seq;

	seq = uc_unlink(u, victim);
	assert_true(seq != 0);
	assert_int_equal(uc_read_ret(u, &r), 0);
	assert_int_equal(r.command, USBIP_RET_UNLINK);
	assert_int_equal(r.seqnum, seq);
	assert_int_equal(r.status, want);
}

static void test_unlink_pending_in(void **state)
{
	uint8_t buf[64], data[10] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };
	uint32_t bulk_seq, int_seq, done_seq;
	int32_t status;
	struct uc u;

	(void)state;
	import_bulk(&u);
	set_config(&u, 1);
	/* both NAK: the loopback fifo is empty, 0x83 NAKs for ever */
	bulk_seq = uc_submit(&u, 1, true, NULL, NULL, 512);
	int_seq = uc_submit(&u, 3, true, NULL, NULL, 8);
	assert_true(bulk_seq && int_seq);

	/* cancelled: RET_UNLINK -ECONNRESET and never a RET_SUBMIT; the
	 * client treats a reply to the victim as a protocol violation */
	expect_unlink(&u, bulk_seq, -ECONNRESET);
	assert_int_equal(uc_get_descriptor(&u, 0x01, 0, 0, buf, 18, &status),
			 18);
	assert_int_equal(status, 0);
	expect_unlink(&u, int_seq, -ECONNRESET);

	/* the cancelled IN took nothing: fresh data goes to the next IN */
	assert_int_equal(uc_transfer(&u, 2, false, data, sizeof(data),
				     &status), (int)sizeof(data));
	assert_int_equal(status, 0);
	assert_int_equal(uc_transfer(&u, 1, true, buf, 512, &status),
			 (int)sizeof(data));
	assert_int_equal(status, 0);
	assert_memory_equal(buf, data, sizeof(data));

	/* already completed: RET_UNLINK 0 (its RET_SUBMIT came first) */
	done_seq = u.next_seq - 1;
	expect_unlink(&u, done_seq, 0);
	/* never seen: 0 as well */
	expect_unlink(&u, 0x7fff0000, 0);
	/* twice the same victim: the second finds nothing */
	int_seq = uc_submit(&u, 3, true, NULL, NULL, 8);
	expect_unlink(&u, int_seq, -ECONNRESET);
	expect_unlink(&u, int_seq, 0);

	/* and the connection still works */
	assert_int_equal(uc_get_descriptor(&u, 0x01, 0, 0, buf, 64, &status),
			 18);
	assert_memory_equal(buf, bulk_device_desc, 18);
	uc_close(&u);
}

/* A control request whose reply is delayed is pending too. */
static void test_unlink_delayed_control(void **state)
{
	uint8_t setup[8] = { 0xc0, 0x04, 0, 0, 0, 0, 4, 0 };
	uint8_t buf[64];
	int32_t status;
	uint32_t seq;
	struct uc u;

	(void)state;
	import_bulk(&u);
	seq = uc_submit(&u, 0, true, setup, NULL, 4);
	assert_true(seq != 0);
	expect_unlink(&u, seq, -ECONNRESET);
	/* well past the delay: its reply must not come */
	sleep_ms(BULK_DELAY_MS + 200);
	assert_int_equal(uc_get_descriptor(&u, 0x01, 0, 0, buf, 18, &status),
			 18);
	assert_int_equal(status, 0);

	/* not unlinked, it completes after the delay */
	assert_int_equal(uc_control(&u, 0xc0, 0x04, 0, 0, buf, 4, &status),
			 4);
	assert_int_equal(status, 0);
	assert_memory_equal(buf, "\xde\xad\xbe\xef", 4);
	uc_close(&u);
}

/* A CMD_SUBMIT under a seqnum the test numbered earlier, as vhci does. */
static uint32_t submit_as(struct uc *u, uint32_t seqnum, uint8_t ep, bool in,
			  const void *out, uint32_t len)
{
	uint32_t next = u->next_seq, seq;

	u->next_seq = seqnum;
	seq = uc_submit(u, ep, in, NULL, out, len);
	u->next_seq = next;
	return seq;
}

static void expect_ret(struct uc *u, uint32_t command, uint32_t seqnum,
		       int32_t status)
{
	struct uc_ret r;

	assert_int_equal(uc_read_ret(u, &r), 0);
	uc_ret_free(&r);
	assert_int_equal(r.command, command);
	assert_int_equal(r.seqnum, seqnum);
	assert_int_equal(r.status, status);
}

/*
 * vhci-hcd's order when an URB is queued and unlinked while vhci_tx is
 * still sending earlier unlinks (docs/usbip-protocol.md 4.6): the
 * CMD_UNLINK names a seqnum whose CMD_SUBMIT comes after it.  vhci gives
 * the URB back on the RET_UNLINK, whatever its status, and drops the
 * connection on a RET_SUBMIT for it after that; a RET_UNLINK 0 before
 * the RET_SUBMIT it vouches for is a lie.  So: RET_UNLINK -ECONNRESET
 * once the CMD_SUBMIT is there, never a RET_SUBMIT, and the URB never
 * reaches the device.
 */
static void test_unlink_before_submit(void **state)
{
	uint8_t data[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	static uint8_t big[4096], buf[4096];
	uint32_t done, p, q, q2, seq;
	int32_t status;
	struct uc u;

	(void)state;
	import_bulk(&u);
	set_config(&u, 1);
	memset(big, 0x5a, sizeof(big));

	/* the wire of usbtest's case 12 on Debian's 6.12: an unlink of an
	 * URB already answered, then one that overtook its 4 KiB OUT */
	done = uc_submit(&u, 2, false, NULL, data, 1);
	expect_ret(&u, USBIP_RET_SUBMIT, done, 0);
	q = uc_unlink(&u, done);
	p = u.next_seq++;
	q2 = uc_unlink(&u, p);
	assert_int_equal(submit_as(&u, p, 2, false, big, sizeof(big)), p);
	expect_ret(&u, USBIP_RET_UNLINK, q, 0);
	expect_ret(&u, USBIP_RET_UNLINK, q2, -ECONNRESET);
	/* no RET_SUBMIT of p: the client would take it for a violation */
	assert_int_equal(uc_get_descriptor(&u, 0x01, 0, 0, buf, 18, &status),
			 18);
	/* neither OUT reached the fifo but the one answered */
	assert_int_equal(uc_transfer(&u, 2, false, data + 1, 9, &status), 9);
	assert_int_equal(uc_transfer(&u, 1, true, buf, 512, &status),
			 (int)sizeof(data));
	assert_memory_equal(buf, data, sizeof(data));

	/* an IN that would wait for data: cancelled the same way */
	p = u.next_seq++;
	q = uc_unlink(&u, p);
	assert_int_equal(submit_as(&u, p, 1, true, NULL, 512), p);
	expect_ret(&u, USBIP_RET_UNLINK, q, -ECONNRESET);

	/* a victim skipped by a later CMD_SUBMIT never comes: RET_UNLINK 0,
	 * ahead of that submit's answer */
	p = u.next_seq++;
	q = uc_unlink(&u, p);
	seq = uc_submit(&u, 2, false, NULL, data, 4);
	expect_ret(&u, USBIP_RET_UNLINK, q, 0);
	expect_ret(&u, USBIP_RET_SUBMIT, seq, 0);
	assert_int_equal(uc_transfer(&u, 1, true, buf, 512, &status), 4);

	/* vhci's usual order still gets the usual answers */
	seq = uc_submit(&u, 2, false, NULL, data, 4);
	q = uc_unlink(&u, seq);
	expect_ret(&u, USBIP_RET_SUBMIT, seq, 0);
	expect_ret(&u, USBIP_RET_UNLINK, q, 0);
	assert_int_equal(uc_transfer(&u, 1, true, buf, 512, &status), 4);
	uc_close(&u);
}

/* ---------------------------------------------------------------------
 * STALL and vendor replies
 * --------------------------------------------------------------------- */

static void test_stall_rule(void **state)
{
	uint8_t buf[64] = { 1, 2, 3, 4 };
	int32_t status;
	struct uc u;

	(void)state;
	import_bulk(&u);
	/* vendor OUT with a data stage: STALL, nothing taken */
	assert_int_equal(uc_control(&u, 0x40, 0x02, 0, 0, buf, 4, &status),
			 0);
	assert_int_equal(status, -EPIPE);
	/* vendor IN: STALL, no data */
	assert_int_equal(uc_control(&u, 0xc0, 0x03, 0, 0, buf, 64, &status),
			 0);
	assert_int_equal(status, -EPIPE);
	/* an unknown vendor request STALLs too */
	assert_int_equal(uc_control(&u, 0xc0, 0x7e, 0, 0, buf, 64, &status),
			 0);
	assert_int_equal(status, -EPIPE);
	/* ep0 recovers at the next SETUP: a reply rule, whole and cut */
	assert_int_equal(uc_control(&u, 0xc0, 0x01, 0, 0, buf, 64, &status),
			 (int)strlen(BULK_HELLO));
	assert_int_equal(status, 0);
	assert_memory_equal(buf, BULK_HELLO, strlen(BULK_HELLO));
	assert_int_equal(uc_control(&u, 0xc0, 0x01, 0, 0, buf, 5, &status),
			 5);
	assert_memory_equal(buf, "hello", 5);
	/* an endpoint not in the active configuration: STALL */
	assert_int_equal(uc_transfer(&u, 1, true, buf, 64, &status), 0);
	assert_int_equal(status, -EPIPE);
	uc_close(&u);
}

/* ---------------------------------------------------------------------
 * Disconnect fault: after FAULT_URBS URBs the device hangs up.  Design:
 * the Nth URB completes and its RET_SUBMIT is delivered, then EOF; the
 * device is importable again and counts from zero.
 * --------------------------------------------------------------------- */

static void test_disconnect_fault(void **state)
{
	uint8_t buf[64];
	int32_t status;
	struct uc u;
	int round, i;

	(void)state;
	for (round = 0; round < 2; round++) {
		assert_int_equal(uc_import_retry(srv.port, "1-2", &u, 3000),
				 0);
		for (i = 0; i < FAULT_URBS; i++) {
			assert_int_equal(uc_get_descriptor(&u, 0x01, 0, 0,
							   buf, 18, &status),
					 18);
			assert_int_equal(status, 0);
		}
		assert_int_equal(uc_expect_eof(u.fd, 5000), 0);
		uc_close(&u);
	}
}

/* ---------------------------------------------------------------------
 * Two endpoints at once: an interrupt IN stays pending while bulk works
 * --------------------------------------------------------------------- */

static void test_concurrent_endpoints(void **state)
{
	uint8_t out[4096], in[4096];
	uint32_t int_seq;
	int32_t status;
	struct uc u;
	int i, j;

	(void)state;
	import_bulk(&u);
	set_config(&u, 1);
	int_seq = uc_submit(&u, 3, true, NULL, NULL, 8);
	assert_true(int_seq != 0);
	for (i = 0; i < 16; i++) {
		for (j = 0; j < (int)sizeof(out); j++)
			out[j] = (uint8_t)(i * 31 + j);
		assert_int_equal(uc_transfer(&u, 2, false, out, sizeof(out),
					     &status), (int)sizeof(out));
		assert_int_equal(status, 0);
		assert_int_equal(uc_transfer(&u, 1, true, in, sizeof(in),
					     &status), (int)sizeof(in));
		assert_int_equal(status, 0);
		assert_memory_equal(in, out, sizeof(out));
		/* ep0 too */
		assert_int_equal(uc_get_descriptor(&u, 0x01, 0, 0, in, 18,
						   &status), 18);
	}
	/* the interrupt URB was pending all along */
	expect_unlink(&u, int_seq, -ECONNRESET);
	uc_close(&u);
}

/* ---------------------------------------------------------------------
 * Isochronous: packets go out packed, actual_length is their sum
 * --------------------------------------------------------------------- */

static void test_isochronous(void **state)
{
	struct usbip_iso_desc iso[4];
	uint8_t out[1024];
	struct uc_ret r;
	int32_t status;
	uint32_t seq, k;
	struct uc u;
	int i;

	(void)state;
	assert_int_equal(uc_import_retry(srv.port, "1-3", &u, 3000), 0);
	set_config(&u, 1);
	for (i = 0; i < 4; i++) {
		iso[i].offset = (uint32_t)i * 256;
		iso[i].length = 192;
		iso[i].actual_length = 0;
		iso[i].status = 0;
	}
	/* alt 0 has no endpoints: STALL, the packets come back empty */
	seq = uc_submit_iso(&u, 1, true, NULL, 1024, iso, 4);
	assert_true(seq != 0);
	assert_int_equal(uc_read_ret(&u, &r), 0);
	assert_int_equal(r.status, -EPIPE);
	assert_int_equal(r.npackets, 4);
	assert_int_equal(r.actual, 0);
	uc_ret_free(&r);

	/* SET_INTERFACE(0, 1) */
	assert_int_equal(uc_control(&u, 0x01, 0x0b, 1, 0, NULL, 0, &status),
			 0);
	assert_int_equal(status, 0);
	seq = uc_submit_iso(&u, 1, true, NULL, 1024, iso, 4);
	assert_int_equal(uc_read_ret(&u, &r), 0);
	assert_int_equal(r.seqnum, seq);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.npackets, 4);
	assert_int_equal(r.actual, 4 * 192);
	for (i = 0; i < 4; i++) {
		assert_int_equal(r.iso[i].offset, (uint32_t)i * 256);
		assert_int_equal(r.iso[i].length, 192);
		assert_int_equal(r.iso[i].actual_length, 192);
		assert_int_equal(r.iso[i].status, 0);
	}
	/* packed back to back: 768 bytes of the device's zeros */
	for (k = 0; k < r.actual; k++)
		if (r.data[k] != 0)
			break;
	assert_int_equal(k, r.actual);
	uc_ret_free(&r);

	/* OUT: every packet taken whole, no data comes back */
	memset(out, 0x5a, sizeof(out));
	for (i = 0; i < 4; i++)
		iso[i].length = 100;
	seq = uc_submit_iso(&u, 2, false, out, sizeof(out), iso, 4);
	assert_int_equal(uc_read_ret(&u, &r), 0);
	assert_int_equal(r.seqnum, seq);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.actual, 400);
	for (i = 0; i < 4; i++)
		assert_int_equal(r.iso[i].actual_length, 100);
	uc_ret_free(&r);
	uc_close(&u);
}

/* ---------------------------------------------------------------------
 * Back-pressure: many big IN URBs, nothing read for a while
 * --------------------------------------------------------------------- */

#define BP_URBS		160
#define BP_LEN		(64 * 1024)

static void test_backpressure(void **state)
{
	uint32_t first, seq;
	uint64_t off = 0;
	struct uc_ret r;
	struct uc u;
	int i;
	uint32_t k;

	(void)state;
	import_bulk(&u);
	set_config(&u, 1);
	first = u.next_seq;
	for (i = 0; i < BP_URBS; i++) {
		seq = uc_submit(&u, BULK_EP_SOURCE & 0x0f, true, NULL, NULL,
				BP_LEN);
		assert_true(seq != 0);
	}
	/* 10 MiB of replies wait for us: the server stops reading */
	sleep_ms(300);
	for (i = 0; i < BP_URBS; i++) {
		assert_int_equal(uc_read_ret(&u, &r), 0);
		assert_int_equal(r.seqnum, first + (uint32_t)i);
		assert_int_equal(r.status, 0);
		assert_int_equal(r.actual, BP_LEN);
		/* the pattern continues across URBs */
		for (k = 0; k < r.actual; k++, off++)
			if (r.data[k] != bulk_pattern[off %
						sizeof(bulk_pattern)])
				break;
		assert_int_equal(k, r.actual);
		free(r.data);
	}
	uc_close(&u);
	assert_true(srv_log_count(&srv, "reading paused") > 0);
	assert_true(srv_log_count(&srv, "reading resumed") > 0);
}

/* ---------------------------------------------------------------------
 * -v: one greppable line per URB completion and per unlink
 * --------------------------------------------------------------------- */

static void test_verbose_lines(void **state)
{
	uint8_t buf[64];
	int32_t status;
	struct uc u;
	uint32_t seq;
	char needle[128];

	(void)state;
	import_bulk(&u);
	/* seqnums start over on every connection: pick unused ones */
	u.next_seq = seq = 0x5eed0;
	assert_int_equal(uc_get_descriptor(&u, 0x01, 0, 0, buf, 64, &status),
			 18);
	expect_unlink(&u, 0x7000, 0);
	uc_close(&u);
	/* the line is written before the reply is sent */
	snprintf(needle, sizeof(needle),
		 ": 1-1 seq=%u ep=0 in len=64 setup=8006000100004000 -> status=0 actual=18",
		 seq);
	assert_int_equal(srv_log_count(&srv, needle), 1);
	snprintf(needle, sizeof(needle),
		 ": 1-1 seq=%u unlink victim=28672 -> status=0", seq + 1);
	assert_int_equal(srv_log_count(&srv, needle), 1);
	assert_true(srv_log_count(&srv, "usbrig-gadget: debug: ") > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_descriptors_match_dump,
					  uc_teardown),
		cmocka_unit_test_teardown(test_descriptors_by_hand,
					  uc_teardown),
		cmocka_unit_test_teardown(test_bulk_loopback_1mib, uc_teardown),
		cmocka_unit_test_teardown(test_unlink_pending_in, uc_teardown),
		cmocka_unit_test_teardown(test_unlink_delayed_control,
					  uc_teardown),
		cmocka_unit_test_teardown(test_unlink_before_submit,
					  uc_teardown),
		cmocka_unit_test_teardown(test_stall_rule, uc_teardown),
		cmocka_unit_test_teardown(test_disconnect_fault, uc_teardown),
		cmocka_unit_test_teardown(test_concurrent_endpoints,
					  uc_teardown),
		cmocka_unit_test_teardown(test_isochronous, uc_teardown),
		cmocka_unit_test_teardown(test_backpressure, uc_teardown),
		cmocka_unit_test_teardown(test_verbose_lines, uc_teardown),
	};
	int failed;

	failed = cmocka_run_group_tests(tests, group_setup, group_teardown);
	return failed || teardown_failed ? 1 : 0;
}
