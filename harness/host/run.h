/* SPDX-License-Identifier: GPL-2.0 */
/*
 * run.h - run scenarios in guests: batches per boot, jobs in parallel,
 * re-boots after a hang or crash, host-side deadlines.
 *
 * Each job owns a fixed list of scenarios (balance.h) and runs them in
 * order, many per boot.  Every boot is a child process (its own process
 * group) that calls vm_run() and forwards what it hears on a pipe; the
 * parent reads all pipes, fills the report, enforces deadlines (killing
 * the boot's process group when one passes) and boots again for the
 * scenarios left.  Every boot finishes at least one scenario, so a run
 * always ends.
 */
#ifndef USBRIG_RUN_H
#define USBRIG_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "report.h"
#include "scenario.h"

struct run_opts {
	const char *kernel;		/* bzImage (resolved, not NULL) */
	const char *kver;		/* its release */
	const char *modules_dir;	/* holds lib/modules/KVER; NULL "/" */
	bool patched;			/* --kernel patched: the build of
					 * kernel-patch/, so the usb_core
					 * trace events must be there */
	const char *kconfig;		/* its .config, NULL: not found */
	const char *bin_dir;		/* usbrig-agent, usbrig-gadget */
	const char *cache_dir;		/* initramfs cache */
	const char *runs_dir;		/* work dirs: RUNS/<run>/jobK-bootB */
	const char *save_dir;		/* `save` steps' relative host paths:
					 * SAVE/<scenario name>/HOSTPATH */
	unsigned int jobs;
	const double *est_s;		/* per scenario: its time in an earlier
					 * run (--balance), 0 not known; NULL:
					 * round robin (balance.h) */
	unsigned int boot_timeout_s;
	bool gadget_on_host;
	bool panic_on_oops;		/* boot with oops=panic */
	const char *cmdline;		/* more kernel parameters, NULL: none */
	bool keep;			/* keep every boot's work dir */
	bool bench;			/* print timing figures at the end */
	int verbose;
};

/*
 * Mark scenarios that cannot run on this kernel as skipped (`skip`,
 * `requires module`, `requires config`, a module the kernel does not
 * have).  `requires kernel patched` is decided by the agent in the guest.
 * Call before run_suite().
 */
void run_preflight(struct scenario *const *sc, int n, struct report *r,
		   const struct run_opts *o);

/* Run every scenario not yet done; fills r (report_done() each). Returns
 * 0, or -EINTR when interrupted (the rest is failed as interrupted). */
int run_suite(struct scenario *const *sc, int n, struct report *r,
	      const struct run_opts *o);

/*
 * Work dirs: RUNS/YYYYMMDD-HHMMSS-PID for a run that pid started at tm,
 * and RUN/jobJ-bootB for boot B of job J, written to dst[size].  0, or
 * -ENAMETOOLONG when the path does not fit dst: a cut path would name
 * another folder, and the boot would write its plan there.
 */
int run_dir_path(char *dst, size_t size, const char *runs_dir,
		 const struct tm *tm, int pid);
int run_boot_dir_path(char *dst, size_t size, const char *run_dir, int job,
		      int boot);

#endif /* USBRIG_RUN_H */
