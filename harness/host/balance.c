// SPDX-License-Identifier: GPL-2.0
/*
 * balance.c - the jobs' share of the scenarios (balance.h): the times
 * file, and the longest-first assignment.
 */
#include "balance.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BALANCE_MAX_S	86400.0		/* a day: more is a typo */

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

void balance_free(struct balance_time *t, int n)
{
	for (int i = 0; i < n; i++)
		free(t[i].name);
	free(t);
}

/* One line (no '\n') into t; -EINVAL with err set. */
static int parse_line(const char *file, int lineno, const char *s,
		      size_t len, struct balance_time *t, char *err,
		      size_t errlen)
{
	size_t i = 0, name_at, name_len, num_at;
	char num[64], *end;
	double v;

	while (i < len && blank(s[i]))
		i++;
	name_at = i;
	while (i < len && !blank(s[i]))
		i++;
	name_len = i - name_at;
	while (i < len && blank(s[i]))
		i++;
	num_at = i;
	while (i < len && !blank(s[i]))
		i++;
	if (i == num_at) {
		snprintf(err, errlen, "%s:%d:%zu: expected NAME SECONDS, "
			 "found no SECONDS after '%.*s'", file, lineno,
			 num_at + 1, (int)name_len, s + name_at);
		return -EINVAL;
	}
	if (i - num_at >= sizeof(num)) {
		snprintf(err, errlen, "%s:%d:%zu: SECONDS is too long", file,
			 lineno, num_at + 1);
		return -EINVAL;
	}
	memcpy(num, s + num_at, i - num_at);
	num[i - num_at] = '\0';
	errno = 0;
	v = strtod(num, &end);
	if (*end || errno || !isfinite(v) || v < 0 || v > BALANCE_MAX_S) {
		snprintf(err, errlen, "%s:%d:%zu: '%s' is not a time in "
			 "seconds (0 to %.0f)", file, lineno, num_at + 1, num,
			 BALANCE_MAX_S);
		return -EINVAL;
	}
	while (i < len && blank(s[i]))
		i++;
	if (i < len) {
		snprintf(err, errlen, "%s:%d:%zu: unexpected '%.*s' after the "
			 "time", file, lineno, i + 1, (int)(len - i), s + i);
		return -EINVAL;
	}
	t->name = strndup(s + name_at, name_len);
	if (!t->name) {
		snprintf(err, errlen, "%s: out of memory", file);
		return -ENOMEM;
	}
	t->seconds = v;
	return 0;
}

int balance_parse(const char *file, const char *text, size_t len,
		  struct balance_time **out, int *n, char *err,
		  size_t errlen)
{
	struct balance_time *t = NULL;
	int k = 0, cap = 0, lineno = 0, ret;
	size_t at = 0;

	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t ll = nl ? (size_t)(nl - (text + at)) : len - at;
		const char *s = text + at;
		size_t i = 0;

		lineno++;
		at += ll + (nl ? 1 : 0);
		while (i < ll && blank(s[i]))
			i++;
		if (i == ll || s[i] == '#')
			continue;
		if (memchr(s, '\0', ll)) {
			snprintf(err, errlen, "%s:%d:%zu: a NUL byte", file,
				 lineno, (size_t)((const char *)memchr(s, '\0',
							ll) - s) + 1);
			ret = -EINVAL;
			goto fail;
		}
		if (k == cap) {
			int nc = cap ? cap * 2 : 64;
			struct balance_time *nt = realloc(t, sizeof(*nt) *
							  (size_t)nc);

			if (!nt) {
				snprintf(err, errlen, "%s: out of memory", file);
				ret = -ENOMEM;
				goto fail;
			}
			t = nt;
			cap = nc;
		}
		ret = parse_line(file, lineno, s, ll, &t[k], err, errlen);
		if (ret)
			goto fail;
		k++;
	}
	*out = t;
	*n = k;
	return 0;
fail:
	balance_free(t, k);
	return ret;
}

void balance_assign(const double *est, int n, unsigned int n_jobs, int *job)
{
	double known = 0, *load, *cost;
	int n_known = 0, *order;

	for (int i = 0; i < n; i++)
		if (est[i] > 0) {
			known += est[i];
			n_known++;
		}
	load = calloc(n_jobs, sizeof(*load));
	cost = calloc((size_t)n + 1, sizeof(*cost));
	order = calloc((size_t)n + 1, sizeof(*order));
	if (!n_known || n_jobs < 2 || !load || !cost || !order) {
		for (int i = 0; i < n; i++)
			job[i] = (int)((unsigned int)i % (n_jobs ? n_jobs : 1));
		goto out;
	}
	for (int i = 0; i < n; i++) {
		cost[i] = est[i] > 0 ? est[i] : known / n_known;
		order[i] = i;
	}
	/* costliest first; equal costs in list order (insertion sort: a
	 * run has hundreds of scenarios at most, and it is stable) */
	for (int i = 1; i < n; i++) {
		int o = order[i], k = i;

		while (k > 0 && cost[order[k - 1]] < cost[o]) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = o;
	}
	for (int i = 0; i < n; i++) {
		unsigned int best = 0;

		for (unsigned int m = 1; m < n_jobs; m++)
			if (load[m] < load[best])
				best = m;
		job[order[i]] = (int)best;
		load[best] += cost[order[i]];
	}
out:
	free(load);
	free(cost);
	free(order);
}
