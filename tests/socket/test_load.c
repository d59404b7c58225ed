// SPDX-License-Identifier: GPL-2.0
/*
 * test_load.c - one server, 1,000 connections at once on loopback.
 *
 * Each of them has sent half of an OP_REQ_DEVLIST header and waits.  While
 * they are all open, a well-behaved client imports 1-1 and reads its device
 * descriptor again and again: every answer byte-exact and none slower than
 * LATENCY_BOUND_MS (a bound on being served at all, not a speed figure:
 * those are in `make bench`).  Then every one of the 1,000 finishes its
 * request and must get the whole device list: the server dropped none.
 * The server's resident memory is printed per connection.
 *
 * Devices: 1-1 and 1-2, the bulk device of scripts.c twice.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "client.h"
#include "scripts.h"

#define N_CONNS			1000
#define N_ROUNDS		500
#define LATENCY_BOUND_MS	2000

static struct srv srv;
static char bulk_path[PATH_MAX];
static bool teardown_failed;

static int group_setup(void **state)
{
	const struct srv_script bulk = { "bulk.gadget", script_bulk, bulk_path };
	const struct srv_script two[] = { bulk, bulk };
	struct rlimit rl;

	(void)state;
	/* the test's own end of every connection */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2 * N_CONNS &&
	    rl.rlim_max >= 2 * N_CONNS) {
		rl.rlim_cur = 2 * N_CONNS;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return srv_start_scripts(&srv, two, 2, NULL, NULL);
}

static int group_teardown(void **state)
{
	(void)state;
	return srv_finish(&srv, &teardown_failed);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The server's VmRSS in KiB, or -1. */
static long server_rss_kib(void)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)srv.pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void test_1000_connections(void **state)
{
	static int fds[N_CONNS];
	static double lat[N_ROUNDS];
	uint8_t op[USBIP_OP_COMMON_SIZE], buf[64], ndev[4];
	struct usbip_op_common c = { USBIP_VERSION, OP_REQ_DEVLIST, 0 };
	struct usbip_op_common rep;
	long rss0, rss1;
	int32_t status;
	struct uc u;
	int i, n;

	(void)state;
	usbip_op_common_pack(&c, op);
	rss0 = server_rss_kib();
	for (i = 0; i < N_CONNS; i++) {
		fds[i] = uc_connect(srv.port);
		if (fds[i] < 0)
			fail_msg("connection %d: %s", i, strerror(errno));
		assert_int_equal(uc_send(fds[i], op, 4), 0);
	}

	/* a good client, served while all of them wait */
	assert_int_equal(uc_import_retry(srv.port, "1-1", &u, 5000), 0);
	for (i = 0; i < N_ROUNDS; i++) {
		double t0 = now_ms();

		n = uc_get_descriptor(&u, 0x01, 0, 0, buf, 64, &status);
		lat[i] = now_ms() - t0;
		assert_int_equal(n, 18);
		assert_int_equal(status, 0);
		assert_memory_equal(buf, bulk_device_desc, 18);
	}
	uc_close(&u);
	rss1 = server_rss_kib();
	qsort(lat, N_ROUNDS, sizeof(lat[0]), cmp_double);
	print_message("# %d connections open: descriptor round trip median "
		      "%.3f ms, p99 %.3f ms, max %.3f ms; server RSS %ld -> "
		      "%ld KiB (%.1f KiB per connection)\n", N_CONNS,
		      lat[N_ROUNDS / 2], lat[N_ROUNDS * 99 / 100],
		      lat[N_ROUNDS - 1], rss0, rss1,
		      (double)(rss1 - rss0) / N_CONNS);
	if (lat[N_ROUNDS - 1] > LATENCY_BOUND_MS)
		fail_msg("a round trip took %.0f ms with %d connections open",
			 lat[N_ROUNDS - 1], N_CONNS);

	/* every waiting one finishes its request and is answered */
	for (i = 0; i < N_CONNS; i++)
		assert_int_equal(uc_send(fds[i], op + 4, 4), 0);
	for (i = 0; i < N_CONNS; i++) {
		if (uc_recv_op(fds[i], &rep) < 0)
			fail_msg("connection %d: no reply", i);
		assert_int_equal(rep.code, OP_REP_DEVLIST);
		assert_int_equal(rep.status, 0);
		assert_int_equal(uc_recv(fds[i], ndev, 4), 0);
		assert_int_equal(ndev[3], 2);
		uc_disconnect(fds[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_1000_connections, uc_teardown),
	};
	int failed;

	failed = cmocka_run_group_tests(tests, group_setup, group_teardown);
	return failed || teardown_failed ? 1 : 0;
}
