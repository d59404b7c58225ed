// SPDX-License-Identifier: GPL-2.0
/* common.c - what the fuzz targets share (fuzz.h). */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "log.h"

static FILE *fz_stderr;		/* the real stderr, once fz_init() ran */

void fz_fail(const char *fmt, ...)
{
	FILE *f = fz_stderr ? fz_stderr : stderr;
	va_list ap;

	fputs("fuzz: ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
	abort();
}

void fz_init(void)
{
	FILE *null;

	if (fz_stderr)
		return;
	signal(SIGPIPE, SIG_IGN);
	fz_stderr = stderr;
	log_threshold = GLOG_DBG;
	if (getenv("USBRIG_FUZZ_LOG"))
		return;
	/*
	 * log.c writes to stderr: point it at /dev/null.  libFuzzer keeps the
	 * FILE it took at start-up and the sanitizers write to fd 2, so their
	 * reports still show.
	 */
	null = fopen("/dev/null", "w");
	if (!null)
		fz_fail("/dev/null: %m");
	stderr = null;
}

/* ---- the virtual clock ---- */

static struct timespec fz_now = { 1000, 0 };

void fz_clock_advance_ms(uint64_t ms)
{
	uint64_t ns = (uint64_t)fz_now.tv_nsec + ms % 1000 * 1000000;

	fz_now.tv_sec += ms / 1000 + ns / 1000000000;
	fz_now.tv_nsec = ns % 1000000000;
}

/*
 * Takes the place of the C library's for every caller in the process
 * (the executable's definition comes first in symbol lookup); the real
 * clocks through the system call.
 */
int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (id == CLOCK_MONOTONIC_COARSE) {
		*ts = fz_now;
		return 0;
	}
	return syscall(SYS_clock_gettime, id, ts);
}

/* ---- input reader ---- */

uint8_t fz_u8(struct fz_in *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

uint16_t fz_u16(struct fz_in *in)
{
	uint16_t lo = fz_u8(in);

	return lo | fz_u8(in) << 8;
}

const uint8_t *fz_bytes(struct fz_in *in, size_t *n)
{
	const uint8_t *p = in->p;

	if (*n > in->left)
		*n = in->left;
	in->p += *n;
	in->left -= *n;
	return p;
}
