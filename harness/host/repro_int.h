/* SPDX-License-Identifier: GPL-2.0 */
/*
 * repro_int.h - what repro.c (import, modules, the scenario, the run) and
 * repro_report.c (what came back: report, verdict, --out) share.
 */
#ifndef USBRIG_REPRO_INT_H
#define USBRIG_REPRO_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "kernel.h"
#include "repro.h"

#define REPRO_INTF_MAX		32	/* interfaces of one configuration */
#define REPRO_MODULES_MAX	16	/* modules loaded by alias */
#define REPRO_ERRS_MAX		32
#define REPRO_CRASH_MAX		8
#define REPRO_EXPECT_MAX	16
#define REPRO_LINE_MAX		4096
#define REPRO_EXCERPT_LINES	24
#define REPRO_GUEST_SCRIPT	"/usr/lib/usbrig-repro/probe"
#define REPRO_GUEST_REPORT	"/tmp/usbrig-repro/report"

/* ---- the device, from `usbrig-gadget --dump` ---- */

struct repro_intf {
	int num;		/* bInterfaceNumber */
	int cls, sub, proto;	/* of alternate setting 0 */
};

struct repro_dev {
	unsigned int vid, pid, bcd;
	int cls, sub, proto;
	int cfg;		/* bConfigurationValue of the first config */
	struct repro_intf intf[REPRO_INTF_MAX];	/* of the first config */
	int n_intf;
	char alias[REPRO_INTF_MAX][96];	/* each interface's modalias */
};

/* ---- what the guest saw ---- */

enum repro_phase { PH_ATTACH, PH_NEWID, PH_N };

struct repro_seen {
	int num;
	int cls;
	char name[32];		/* 3-1:1.0 */
	char drv[64];		/* "none" when unbound */
};

struct repro_state {
	bool seen;
	struct repro_seen intf[REPRO_INTF_MAX];
	int n;
};

struct repro_perr {
	enum repro_phase phase;
	char intf[32];
	char drv[64];		/* "" when the kernel did not name it */
	int err;		/* positive errno */
	char line[256];
};

struct repro_out {
	bool ran;		/* the saved report came back */
	bool enumerated;
	char dev[32];
	struct repro_state st[PH_N];
	/* new_id */
	bool newid_tried;
	char newid_path[256];	/* "" when no new_id file was found */
	char newid_note[256];
	int newid_err;		/* 0 ok, else positive errno, -1 unknown */
	char newid_text[256];
	/* usb drivers in the guest and their modules */
	char (*usbdrv)[2][64];
	int n_usbdrv;
	struct repro_perr perr[REPRO_ERRS_MAX];
	int n_perr;
	char *crash[REPRO_CRASH_MAX];	/* excerpts */
	int n_crash;
	char child_fail[1024];	/* why the child run failed, "" when it did not */
};

/* ---- --expect ---- */

enum repro_ek { EK_BOUND, EK_UNBOUND, EK_PERR, EK_CRASH, EK_NO_CRASH,
		EK_NEWID };

struct repro_expect {
	const char *text;
	enum repro_ek kind;
	int intf;		/* -1: any / all */
	char drv[64];		/* "*" any */
	int err;		/* EK_PERR, EK_NEWID (0 ok) */
};

struct repro_opts {
	struct guest_opts guest;	/* the kernel, passed on to usbrig */
	const char *dump, *select, *driver, *module, *class_arg;
	const char *out_dir, *name;
	struct repro_expect expect[REPRO_EXPECT_MAX];
	int n_expect;
	int verbose;
};

struct repro {
	struct repro_opts o;
	char bin_dir[PATH_MAX], root[PATH_MAX], work[PATH_MAX + 64];
	char name[64], gadget[PATH_MAX * 2], scenario[PATH_MAX * 2];
	struct guest_kernel k;
	struct repro_dev dev;
	char reporter[256];	/* drivers the dump says were bound */
	char modules[REPRO_MODULES_MAX][64];
	int n_modules;
	int n_alias;		/* the first n_alias: by modules.alias */
	char drv_module[64];	/* module of --driver, "" built in */
	char newid_value[32];	/* "0403 7e57[ ff]" */
	char class_note[256];
	struct repro_out r;
	struct timespec t0;
};
/* ---- helpers (repro.c) ---- */

void repro_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* the most repro reads of one of its files (fs_read_file) */
#define REPRO_MAX_FILE	(64u << 20)
int repro_copy_file(const char *from, const char *to);
/* rp->gadget as usbrig-gadget --dump serves it into rp->dev, each
 * interface's modalias with it (rp->bin_dir, rp->work set); 0 or -errno.
 * Also `usbrig fuzz`'s. */
int repro_read_gadget(struct repro *rp);
/* A scenario's `run "COMMAND" status any within S` line (also
 * `usbrig fuzz`'s). */
void repro_put_run(FILE *f, const char *cmd, int within_s);
bool repro_is_name(const char *s);

/* ---- what came back (repro_report.c) ---- */

/* Fill rp->r from the saved guest report and the child's KTAP. */
void repro_read_results(struct repro *rp, const char *saved,
			const char *ktap);
void repro_print_report(const struct repro *rp);
bool repro_expect_holds(const struct repro *rp, const struct repro_expect *x);
/* OUTCOME of --expect into x; -EINVAL (message printed) when it is none */
int repro_parse_expect(const char *text, struct repro_expect *x);
/* --out: DIR/NAME.gadget and DIR/NAME.scenario, checked by usbrig --check */
int repro_write_out(struct repro *rp);

#endif /* USBRIG_REPRO_INT_H */
