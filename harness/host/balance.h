/* SPDX-License-Identifier: GPL-2.0 */
/*
 * balance.h - which scenarios go to which job: round robin over the sorted
 * list, or, when an earlier run's times are known (`--balance FILE`), the
 * longest first to the job with the least work so far, so that no job
 * runs alone at the end (a census module whose probe waits 30 s on a
 * sensor, at the end of one job's list, kept the other job idle).
 *
 * The times file is text, a scenario a line:
 *
 *	NAME SECONDS		# the scenario `name`, its time in seconds
 *
 * Blank lines and lines starting with '#' are ignored; so are names no
 * scenario of the run has (scenarios come and go).
 */
#ifndef USBRIG_BALANCE_H
#define USBRIG_BALANCE_H

#include <stddef.h>

#define BALANCE_FILE_MAX	(4 << 20)	/* bytes of a times file */

/* A name and a time read from a times file. */
struct balance_time {
	char *name;
	double seconds;
};

/*
 * Parse the text of a times file (file names it in errors).  On success 0,
 * *out and *n set (free with balance_free()).  A bad line: -EINVAL with
 * err filled as "FILE:LINE:COL: what"; nothing is returned.
 */
int balance_parse(const char *file, const char *text, size_t len,
		  struct balance_time **out, int *n, char *err,
		  size_t errlen);
void balance_free(struct balance_time *t, int n);

/*
 * Assign n scenarios (costs est[i] seconds, 0 unknown) to jobs: job[i]
 * gets the job (0 .. n_jobs - 1) of scenario i.  Without any known cost,
 * round robin in list order.  Otherwise an unknown cost counts as the
 * mean of the known ones, and the costliest scenario goes first to the
 * job with the least so far (ties: the lower index, so the same input
 * gives the same assignment).  Within a job the list order stays.
 */
void balance_assign(const double *est, int n, unsigned int n_jobs, int *job);

#endif /* USBRIG_BALANCE_H */
