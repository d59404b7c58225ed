/* SPDX-License-Identifier: GPL-2.0 */
/*
 * census_report.h - from what the census's guests recorded to the table
 * (census_report.c), and the plan it is read against (census.c).
 */
#ifndef USBRIG_CENSUS_REPORT_H
#define USBRIG_CENSUS_REPORT_H

#include "census_int.h"

struct census_kind_plan {
	bool planned;			/* the module has an alias of it */
	char alias[192];		/* the alias the device follows */
	char unshaped[256];		/* why no device was made, or "" */
	struct census_dev dev;		/* matched by the alias */
	struct census_dev twin;		/* the same, ids no table lists */
	int newid_class;		/* new_id's class field, -1 none */
	bool twin_matches;		/* an alias of the module matches the twin */
};

struct census_plan {
	char module[CENSUS_NAME_MAX];
	bool builtin;
	int n_alias;
	struct census_kind_plan kind[CK_N];
};

/*
 * Read OUT/saved/census-MOD/report.txt of every plan, the child run's
 * OUT/run.ktap (kernel reports of guests that died) and OUT/run.log
 * (times), and for the plans retried, the second run's OUT/retry.ktap and
 * OUT/retry.log instead; write OUT/census.md, census.json and census.xml; print the
 * counts.  With baseline (a census.json), compare.  Returns a
 * CENSUS_EXIT_* code.
 */
int census_report(const char *out, const char *kver,
		  const struct census_plan *plans, int n, double elapsed_s,
		  unsigned int jobs, const char *baseline);

/*
 * The time of each module in the census.json at path, as usbrig's
 * --balance file wants it ("census-MOD SECONDS" lines, a module's longest
 * row), in a malloc'd string; NULL with errno set when path cannot be
 * read.  The next census shares its modules among the jobs by them.
 */
char *census_times(const char *path);

/* s as a JSON string, quotes included (also `usbrig fuzz`'s summary) */
void census_json_str(FILE *f, const char *s);

#endif /* USBRIG_CENSUS_REPORT_H */
