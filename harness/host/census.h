/* SPDX-License-Identifier: GPL-2.0 */
/*
 * census.h - `usbrig census`: what every USB driver of the guest kernel
 * does with a device it claims, through its id table and through new_id.
 * docs/census.md is the user's guide; census_int.h lists the parts.
 */
#ifndef USBRIG_CENSUS_H
#define USBRIG_CENSUS_H

#define CENSUS_EXIT_OK		0	/* ran (no change from --baseline) */
#define CENSUS_EXIT_CHANGED	1	/* an outcome differs from --baseline */
#define CENSUS_EXIT_ERROR	2	/* bad usage, or it could not run */

/* argv[0] is "census".  Returns one of the exit codes above. */
int census_main(int argc, char **argv);

#endif /* USBRIG_CENSUS_H */
