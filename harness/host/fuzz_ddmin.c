// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ddmin.c - delta debugging over a set of mutations (ddmin, Zeller
 * and Hildebrandt 2002, section 3): split the failing set into g parts;
 * if a part fails alone, go on with it (g = 2); else if a complement
 * fails, go on with that (g - 1); else split finer (2g) until the parts
 * are single elements.  A guest run costs seconds of boot, so every
 * subset and complement of one round is handed to the predicate at once
 * and runs in one guest (or --jobs guests); the first one that fails, in
 * the order above, is taken, so the result does not depend on timing.
 */
#include "fuzz_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* the members of keep, in order, into idx; their count */
static int members(const bool *keep, int n, int *idx)
{
	int m = 0;

	for (int i = 0; i < n; i++)
		if (keep[i])
			idx[m++] = i;
	return m;
}

int fz_ddmin(int n, bool *keep, fz_test_fn test, void *ctx)
{
	int *idx = calloc((size_t)n + 1, sizeof(*idx));
	bool *cands = NULL, *hit = NULL;
	int calls = 0, g = 2, ret = 0;

	if (!idx)
		return -ENOMEM;
	/* at most 2g candidates of n flags, g <= n */
	cands = calloc((size_t)(2 * n + 2) * (size_t)n + 1, sizeof(*cands));
	hit = calloc((size_t)(2 * n + 2), sizeof(*hit));
	if (!cands || !hit) {
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		int m = members(keep, n, idx), nc = 0, pick = -1;

		if (m < 2)
			break;
		if (g > m)
			g = m;
		/* part p: members [p*m/g, (p+1)*m/g); then the complements,
		 * which are new only when g > 2 */
		memset(cands, 0, (size_t)(2 * g) * (size_t)n * sizeof(*cands));
		for (int p = 0; p < g; p++, nc++)
			for (int j = p * m / g; j < (p + 1) * m / g; j++)
				cands[nc * n + idx[j]] = true;
		if (g > 2)
			for (int p = 0; p < g; p++, nc++)
				for (int j = 0; j < m; j++)
					cands[nc * n + idx[j]] =
						j < p * m / g ||
						j >= (p + 1) * m / g;
		memset(hit, 0, (size_t)nc * sizeof(*hit));
		ret = test(ctx, cands, nc, n, hit);
		calls++;
		if (ret)
			goto out;
		for (int c = 0; c < nc && pick < 0; c++)
			if (hit[c])
				pick = c;
		if (pick >= 0) {
			memcpy(keep, cands + pick * n, (size_t)n * sizeof(*keep));
			g = pick < g ? 2 : (g - 1 > 2 ? g - 1 : 2);
			continue;
		}
		if (g >= m)
			break;
		g = 2 * g < m ? 2 * g : m;
	}
	ret = calls;
out:
	free(idx);
	free(cands);
	free(hit);
	return ret;
}
