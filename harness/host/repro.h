/* SPDX-License-Identifier: GPL-2.0 */
/*
 * repro.h - `usbrig repro DUMP ...`: from a bug report's dump to a verdict
 * on what the guest kernel binds, and to a regression scenario.
 *
 * docs/reproducing-bind-bugs.md is the user's guide; repro.c says how.
 */
#ifndef USBRIG_REPRO_H
#define USBRIG_REPRO_H

#include <stddef.h>

/* Exit codes, chosen for `git bisect run` */
#define REPRO_EXIT_GOOD		0	/* the expected outcome (or it ran) */
#define REPRO_EXIT_BAD		1	/* it ran; the outcome differs */
#define REPRO_EXIT_UNTESTED	125	/* could not test: bad flags, import
					 * failed, the guest did not boot */

/* argv[0] is "repro".  Returns one of the exit codes above. */
int repro_main(int argc, char **argv);

/* ---- from main.c, shared with repro.c ---- */

/* The repository root: $USBRIG_ROOT, or the nearest ancestor of bin_dir
 * holding harness/host, or ".". */
void find_root(const char *bin_dir, char *buf, size_t size);

#endif /* USBRIG_REPRO_H */
