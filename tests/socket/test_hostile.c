// SPDX-License-Identifier: GPL-2.0
/*
 * test_hostile.c - clients that lie, stop half way or send garbage lose
 * their own connection and nothing else.  After every test the server
 * process must still run and a well-behaved client must import 1-1 and
 * read its device descriptor byte for byte.
 *
 * Devices: 1-1 the bulk device of scripts.c, 1-2 the same script again.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "client.h"
#include "scripts.h"

static struct srv srv;
static char bulk_path[PATH_MAX];
static bool teardown_failed;

static int group_setup(void **state)
{
	const struct srv_script bulk = { "bulk.gadget", script_bulk, bulk_path };
	const struct srv_script two[] = { bulk, bulk };

	(void)state;
	return srv_start_scripts(&srv, two, 2, NULL, NULL);
}

static int group_teardown(void **state)
{
	(void)state;
	return srv_finish(&srv, &teardown_failed);
}

/* Alive, importable, byte-exact. */
static int healthy(void)
{
	uint8_t buf[64];
	int32_t status;
	struct uc u;
	int n;

	if (!srv_alive(&srv)) {
		print_error("the server died\n");
		return -1;
	}
	/* the hostile client's close may still be on its way */
	if (uc_import_retry(srv.port, "1-1", &u, 5000) < 0)
		return -1;
	n = uc_get_descriptor(&u, 0x01, 0, 0, buf, 64, &status);
	uc_close(&u);
	if (n != 18 || status != 0 || memcmp(buf, bulk_device_desc, 18)) {
		print_error("device descriptor: %d bytes, status %d\n", n,
			    status);
		return -1;
	}
	return 0;
}

/* After each test: whatever it left open is closed, then healthy(). */
static int check_healthy(void **state)
{
	uc_teardown(state);
	return healthy();
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Close with a reset instead of a FIN. */
static void abort_fd(int fd)
{
	struct linger lg = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	uc_disconnect(fd);
}

static int import_raw(const char *busid)
{
	struct uc u;

	assert_int_equal(uc_import_retry(srv.port, busid, &u, 5000), 0);
	return u.fd;
}

/* The server must hang up on us: EOF (or reset), no reply. */
static void expect_dropped(int fd)
{
	assert_int_equal(uc_expect_eof(fd, 5000), 0);
	uc_disconnect(fd);
}

static void send_hdr(int fd, uint32_t cmd, uint32_t dir, uint32_t ep,
		     int32_t len, int32_t np)
{
	uint8_t raw[USBIP_HDR_SIZE];

	uc_make_submit(raw, 1, 1u << 16 | 1, dir, ep, len, np, NULL);
	/* the command word is big-endian at offset 0 */
	raw[0] = (uint8_t)(cmd >> 24);
	raw[1] = (uint8_t)(cmd >> 16);
	raw[2] = (uint8_t)(cmd >> 8);
	raw[3] = (uint8_t)cmd;
	assert_int_equal(uc_send(fd, raw, sizeof(raw)), 0);
}

/* ---------------------------------------------------------------------
 * Op phase
 * --------------------------------------------------------------------- */

static void test_truncated_op_header(void **state)
{
	uint8_t req[USBIP_IMPORT_REQ_SIZE];
	struct usbip_op_common op = { USBIP_VERSION, OP_REQ_IMPORT, 0 };
	size_t n;
	int fd;

	(void)state;
	usbip_op_common_pack(&op, req);
	memset(req + 8, 0, USBIP_BUSID_SIZE);
	memcpy(req + 8, "1-1", 3);
	/* every cut of an import request, closed at once */
	for (n = 0; n < sizeof(req); n++) {
		fd = uc_connect(srv.port);
		assert_true(fd >= 0);
		assert_int_equal(uc_send(fd, req, n), 0);
		if (n & 1)
			abort_fd(fd);
		else
			uc_disconnect(fd);
	}
	/* half a header, then the write side shut: the server closes too */
	fd = uc_connect(srv.port);
	assert_true(fd >= 0);
	assert_int_equal(uc_send(fd, req, 4), 0);
	shutdown(fd, SHUT_WR);
	expect_dropped(fd);
	/* the import that was cut off did not take the device */
	assert_int_equal(healthy(), 0);
}

static void test_unknown_op_code(void **state)
{
	static const uint16_t codes[] = { 0x8077, 0x0005, 0x0003, 0xffff,
					  0x0000, 0x8004 };
	struct usbip_op_common op;
	size_t i;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		fd = uc_connect(srv.port);
		assert_true(fd >= 0);
		assert_int_equal(uc_send_op(fd, USBIP_VERSION, codes[i], 0),
				 0);
		/* answered ST_ERROR with the reply code, then closed */
		assert_int_equal(uc_recv_op(fd, &op), 0);
		assert_int_equal(op.version, USBIP_VERSION);
		assert_int_equal(op.code, codes[i] & ~OP_REQUEST);
		assert_int_equal(op.status, ST_ERROR);
		expect_dropped(fd);
	}
}

static void test_wrong_version(void **state)
{
	uint8_t busid[USBIP_BUSID_SIZE] = "1-1";
	struct usbip_op_common op;
	int fd;

	(void)state;
	/* a known request: answered ST_ERROR, closed */
	fd = uc_connect(srv.port);
	assert_true(fd >= 0);
	assert_int_equal(uc_send_op(fd, 0x0100, OP_REQ_DEVLIST, 0), 0);
	assert_int_equal(uc_recv_op(fd, &op), 0);
	assert_int_equal(op.code, OP_REP_DEVLIST);
	assert_int_equal(op.status, ST_ERROR);
	expect_dropped(fd);

	/* an import with the wrong version does not import */
	fd = uc_connect(srv.port);
	assert_true(fd >= 0);
	assert_int_equal(uc_send_op(fd, 0x0100, OP_REQ_IMPORT, 0), 0);
	assert_int_equal(uc_send(fd, busid, sizeof(busid)), 0);
	assert_int_equal(uc_recv_op(fd, &op), 0);
	assert_int_equal(op.code, OP_REP_IMPORT);
	assert_int_equal(op.status, ST_ERROR);
	expect_dropped(fd);

	/* wrong version and an unknown code: just closed */
	fd = uc_connect(srv.port);
	assert_true(fd >= 0);
	assert_int_equal(uc_send_op(fd, 0x0200, 0x1234, 0), 0);
	expect_dropped(fd);
}

/* ---------------------------------------------------------------------
 * URB phase
 * --------------------------------------------------------------------- */

static void test_truncated_urb_header(void **state)
{
	uint8_t raw[USBIP_HDR_SIZE];
	size_t n;
	int fd;

	(void)state;
	uc_make_submit(raw, 1, 1u << 16 | 1, USBIP_DIR_IN, 0, 64, 0,
		       (const uint8_t *)"\x80\x06\x00\x01\x00\x00\x40\x00");
	for (n = 1; n < sizeof(raw); n += 7) {
		fd = import_raw("1-1");
		assert_int_equal(uc_send(fd, raw, n), 0);
		if (n & 1)
			abort_fd(fd);
		else
			uc_disconnect(fd);
	}
	/* 47 bytes and the write side shut: the server hangs up */
	fd = import_raw("1-1");
	assert_int_equal(uc_send(fd, raw, sizeof(raw) - 1), 0);
	shutdown(fd, SHUT_WR);
	expect_dropped(fd);
}

static void test_huge_transfer_length(void **state)
{
	static const uint32_t lens[] = {
		0x7fffffff, 0xffffffff, 0x80000000, USBIP_MAX_TRANSFER + 1,
	};
	uint32_t dir, seq;
	size_t i;
	struct uc u;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (dir = 0; dir < 2; dir++) {
			int fd = import_raw("1-1");

			send_hdr(fd, USBIP_CMD_SUBMIT, dir, dir ? 1 : 2,
				 (int32_t)lens[i], 0);
			expect_dropped(fd);
		}
	}
	/* exactly the maximum is fine: an IN URB that waits, unlinked */
	assert_int_equal(uc_import_retry(srv.port, "1-1", &u, 5000), 0);
	assert_int_equal(uc_control(&u, 0, 0x09, 1, 0, NULL, 0,
				    &(int32_t){ 0 }), 0);
	seq = uc_submit(&u, 3, true, NULL, NULL, USBIP_MAX_TRANSFER);
	assert_true(seq != 0);
	assert_true(uc_unlink(&u, seq) != 0);
	{
		struct uc_ret r;

		assert_int_equal(uc_read_ret(&u, &r), 0);
		assert_int_equal(r.command, USBIP_RET_UNLINK);
		assert_int_equal(r.status, -ECONNRESET);
	}
	uc_close(&u);
}

static void test_bad_number_of_packets(void **state)
{
	static const int32_t nps[] = { 5000, -5, USBIP_MAX_ISO_PACKETS + 1,
				       INT32_MIN, INT32_MAX };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(nps) / sizeof(nps[0]); i++) {
		int fd = import_raw("1-1");

		send_hdr(fd, USBIP_CMD_SUBMIT, USBIP_DIR_OUT, 2, 16, nps[i]);
		expect_dropped(fd);
	}
}

/* iso packet descriptors for a bulk endpoint: read and ignored */
static void test_iso_packets_on_bulk(void **state)
{
	uint8_t raw[USBIP_HDR_SIZE], data[16], desc[3][USBIP_ISO_DESC_SIZE];
	uint8_t in[64];
	struct usbip_iso_desc d;
	struct uc_ret r;
	int32_t status;
	struct uc u;
	int i;

	(void)state;
	assert_int_equal(uc_import_retry(srv.port, "1-1", &u, 5000), 0);
	assert_int_equal(uc_control(&u, 0, 0x09, 1, 0, NULL, 0, &status), 0);
	for (i = 0; i < 16; i++)
		data[i] = (uint8_t)(0xa0 + i);
	for (i = 0; i < 3; i++) {
		d.offset = (uint32_t)i * 4;
		d.length = 4;
		d.actual_length = 0;
		d.status = 0;
		usbip_iso_desc_pack(&d, desc[i]);
	}
	/* by hand: uc_submit sends no descriptors; seqnum 100 is ours */
	uc_make_submit(raw, 100, u.devid, USBIP_DIR_OUT, 2, 16, 3, NULL);
	u.pend[0].used = true;
	u.pend[0].seqnum = 100;
	u.pend[0].in = false;
	u.pend[0].len = 16;
	assert_int_equal(uc_send(u.fd, raw, sizeof(raw)), 0);
	assert_int_equal(uc_send(u.fd, data, sizeof(data)), 0);
	assert_int_equal(uc_send(u.fd, desc, sizeof(desc)), 0);
	/* a bulk reply: number_of_packets 0 (uc_read_ret checks it) */
	assert_int_equal(uc_read_ret(&u, &r), 0);
	assert_int_equal(r.seqnum, 100);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.actual, 16);
	/* and the stream is still in step */
	assert_int_equal(uc_transfer(&u, 1, true, in, 64, &status), 16);
	assert_memory_equal(in, data, 16);
	uc_close(&u);
}

static void test_unknown_command(void **state)
{
	static const uint32_t cmds[] = {
		0x77, 0, USBIP_RET_SUBMIT, USBIP_RET_UNLINK, 0x01000001,
		0xffffffff,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int fd = import_raw("1-1");

		send_hdr(fd, cmds[i], USBIP_DIR_IN, 0, 8, 0);
		expect_dropped(fd);
	}
}

static void test_bad_direction_ep_devid(void **state)
{
	uint8_t raw[USBIP_HDR_SIZE];
	int fd;

	(void)state;
	fd = import_raw("1-1");
	send_hdr(fd, USBIP_CMD_SUBMIT, 2, 1, 8, 0);	/* direction 2 */
	expect_dropped(fd);
	fd = import_raw("1-1");
	send_hdr(fd, USBIP_CMD_SUBMIT, USBIP_DIR_IN, 16, 8, 0); /* ep 16 */
	expect_dropped(fd);
	/* the devid of 1-2 on the connection that imported 1-1 */
	fd = import_raw("1-1");
	uc_make_submit(raw, 1, 1u << 16 | 2, USBIP_DIR_IN, 0, 18,
		       0, (const uint8_t *)"\x80\x06\x00\x01\x00\x00\x12\x00");
	assert_int_equal(uc_send(fd, raw, sizeof(raw)), 0);
	expect_dropped(fd);
}

static void test_out_length_lie(void **state)
{
	uint8_t data[10] = { 0 };
	int fd;

	(void)state;
	/* 4096 announced, 10 sent, closed */
	fd = import_raw("1-1");
	send_hdr(fd, USBIP_CMD_SUBMIT, USBIP_DIR_OUT, 2, 4096, 0);
	assert_int_equal(uc_send(fd, data, sizeof(data)), 0);
	uc_disconnect(fd);
	/* the same, reset */
	fd = import_raw("1-1");
	send_hdr(fd, USBIP_CMD_SUBMIT, USBIP_DIR_OUT, 2, 4096, 0);
	assert_int_equal(uc_send(fd, data, sizeof(data)), 0);
	abort_fd(fd);
	/* the same, write side shut: the server hangs up, no reply */
	fd = import_raw("1-1");
	send_hdr(fd, USBIP_CMD_SUBMIT, USBIP_DIR_OUT, 2, 4096, 0);
	assert_int_equal(uc_send(fd, data, sizeof(data)), 0);
	shutdown(fd, SHUT_WR);
	expect_dropped(fd);
}

static void test_garbage_stream(void **state)
{
	uint8_t junk[4096];
	uint32_t x = 0xdecafbad;
	size_t i;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(junk); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		junk[i] = (uint8_t)x;
	}
	/* in the op phase */
	fd = uc_connect(srv.port);
	assert_true(fd >= 0);
	uc_send(fd, junk, sizeof(junk));
	expect_dropped(fd);
	/* in the URB phase */
	fd = import_raw("1-1");
	uc_send(fd, junk, sizeof(junk));
	expect_dropped(fd);
}

/* A client that submits 25 MiB of IN and never reads, then vanishes. */
static void test_never_reads(void **state)
{
	uint8_t raw[USBIP_HDR_SIZE];
	uint32_t i;
	int fd;

	(void)state;
	fd = import_raw("1-1");
	uc_make_submit(raw, 1, 1u << 16 | 1, USBIP_DIR_OUT, 0, 0, 0,
		       (const uint8_t *)"\x00\x09\x01\x00\x00\x00\x00\x00");
	assert_int_equal(uc_send(fd, raw, sizeof(raw)), 0);
	for (i = 0; i < 400; i++) {
		uc_make_submit(raw, 2 + i, 1u << 16 | 1, USBIP_DIR_IN, 4,
			       64 * 1024, 0, NULL);
		if (uc_send(fd, raw, sizeof(raw)) < 0)
			break;	/* the server stopped reading: fine */
	}
	sleep_ms(200);
	abort_fd(fd);
}

/*
 * Unlinks of URBs still to come (as vhci sends when an unlink overtakes
 * its submit) that never come: the server holds a bounded number, answers
 * the rest at once, and answers the held ones (0) when a later submit
 * shows their victims are not coming.
 */
#define N_EARLY		100

static void test_unlinks_never_submitted(void **state)
{
	unsigned int i, n_unlinks = 0;
	struct uc_ret r;
	uint32_t seq;
	struct uc u;

	(void)state;
	assert_int_equal(uc_import_retry(srv.port, "1-1", &u, 5000), 0);
	for (i = 0; i < N_EARLY; i++)
		assert_true(uc_unlink(&u, u.next_seq++) != 0);
	seq = uc_submit(&u, 0, true, (const uint8_t *)
			"\x80\x06\x00\x01\x00\x00\x12\x00", NULL, 18);
	assert_true(seq != 0);
	for (i = 0; i <= N_EARLY; i++) {
		assert_int_equal(uc_read_ret(&u, &r), 0);
		uc_ret_free(&r);
		if (r.command == USBIP_RET_SUBMIT)
			break;
		assert_int_equal(r.command, USBIP_RET_UNLINK);
		assert_int_equal(r.status, 0);
		n_unlinks++;
	}
	/* every unlink answered, before the submit that settled them */
	assert_int_equal(n_unlinks, N_EARLY);
	assert_int_equal(r.seqnum, seq);
	assert_int_equal(r.status, 0);
	uc_close(&u);
	assert_true(srv_log_count(&srv, "unlinks of URBs not submitted yet") > 0);
}

/* ---------------------------------------------------------------------
 * 200 connections dropped mid-PDU, some mid-op, some mid-URB
 * --------------------------------------------------------------------- */

#define N_CONNS		200

static void test_200_connections(void **state)
{
	uint8_t op[USBIP_IMPORT_REQ_SIZE], hdr[USBIP_HDR_SIZE];
	uint8_t payload[100] = { 0 };
	struct usbip_op_common c = { USBIP_VERSION, OP_REQ_IMPORT, 0 };
	static int fds[N_CONNS];
	int i, imported = 0;
	const char *busid;

	(void)state;
	usbip_op_common_pack(&c, op);
	memset(op + 8, 0, USBIP_BUSID_SIZE);
	memcpy(op + 8, "1-1", 3);
	uc_make_submit(hdr, 1, 0, USBIP_DIR_OUT, 2, 4096, 0, NULL);

	for (i = 0; i < N_CONNS; i++) {
		if (i % 20 == 19) {
			/* mid-URB: import for real, then half a PDU; the
			 * two devices take turns, each freed right after */
			busid = (i / 20) & 1 ? "1-2" : "1-1";
			fds[i] = import_raw(busid);
			hdr[8] = 0;
			hdr[9] = 1;
			hdr[10] = 0;
			hdr[11] = busid[2] - '0';
			if (i % 40 == 19) {
				/* header done, payload cut */
				assert_int_equal(uc_send(fds[i], hdr,
							 sizeof(hdr)), 0);
				assert_int_equal(uc_send(fds[i], payload,
							 sizeof(payload)), 0);
			} else {
				assert_int_equal(uc_send(fds[i], hdr, 30), 0);
			}
			abort_fd(fds[i]);
			fds[i] = -1;
			imported++;
			continue;
		}
		/* mid-op: a prefix of an import request, kept open */
		fds[i] = uc_connect(srv.port);
		assert_true(fds[i] >= 0);
		assert_int_equal(uc_send(fds[i], op, (size_t)(i % 40)), 0);
	}
	assert_int_equal(imported, N_CONNS / 20);
	/* all those half-open connections do not stop a good client */
	assert_int_equal(healthy(), 0);
	for (i = 0; i < N_CONNS; i++) {
		if (fds[i] < 0)
			continue;
		if (i & 1)
			abort_fd(fds[i]);
		else
			uc_disconnect(fds[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_truncated_op_header,
					  check_healthy),
		cmocka_unit_test_teardown(test_unknown_op_code, check_healthy),
		cmocka_unit_test_teardown(test_wrong_version, check_healthy),
		cmocka_unit_test_teardown(test_truncated_urb_header,
					  check_healthy),
		cmocka_unit_test_teardown(test_huge_transfer_length,
					  check_healthy),
		cmocka_unit_test_teardown(test_bad_number_of_packets,
					  check_healthy),
		cmocka_unit_test_teardown(test_iso_packets_on_bulk,
					  check_healthy),
		cmocka_unit_test_teardown(test_unknown_command, check_healthy),
		cmocka_unit_test_teardown(test_bad_direction_ep_devid,
					  check_healthy),
		cmocka_unit_test_teardown(test_out_length_lie, check_healthy),
		cmocka_unit_test_teardown(test_garbage_stream, check_healthy),
		cmocka_unit_test_teardown(test_never_reads, check_healthy),
		cmocka_unit_test_teardown(test_unlinks_never_submitted,
					  check_healthy),
		cmocka_unit_test_teardown(test_200_connections, check_healthy),
	};
	int failed;

	failed = cmocka_run_group_tests(tests, group_setup, group_teardown);
	return failed || teardown_failed ? 1 : 0;
}
