/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz.h - `usbrig fuzz`: hostile devices, mutated from the example and
 * census gadgets, against the guest kernel; a kernel report is kept as a
 * minimised gadget and a scenario.  docs/fuzzing.md ("Hostile devices
 * against the guest kernel") is the user's guide; fuzz_int.h lists the
 * parts.
 */
#ifndef USBRIG_FUZZ_H
#define USBRIG_FUZZ_H

#define FUZZ_EXIT_OK		0	/* ran, no kernel report */
#define FUZZ_EXIT_FINDINGS	1	/* ran, kernel reports found */
#define FUZZ_EXIT_ERROR		2	/* bad usage, or it could not run */

/* argv[0] is "fuzz".  Returns one of the exit codes above. */
int fuzz_main(int argc, char **argv);

#endif /* USBRIG_FUZZ_H */
