// SPDX-License-Identifier: GPL-2.0
/*
 * modlist.c - the guest kernel's module lists (modlist.h).
 */
#include "modlist.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

FILE *modlist_open(const char *root, const char *kver, const char *list)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/lib/modules/%s/%s", root, kver, list);
	return fopen(path, "r");
}

void modlist_norm(char *s)
{
	for (; *s; s++)
		if (*s == '-')
			*s = '_';
}

int modlist_kind(const char *root, const char *kver, const char *name)
{
	static const char *const lists[] = { "modules.dep", "modules.builtin" };
	char want[64], line[1024];
	int i;

	snprintf(want, sizeof(want), "%s", name);
	modlist_norm(want);
	for (i = 0; i < 2; i++) {
		FILE *f = modlist_open(root, kver, lists[i]);

		if (!f) {
			if (i == 0)
				return -ENOENT;
			continue;
		}
		while (fgets(line, sizeof(line), f)) {
			char *base, *dot;

			line[strcspn(line, ":\n")] = '\0';
			base = strrchr(line, '/');
			base = base ? base + 1 : line;
			dot = strstr(base, ".ko");
			if (dot)
				*dot = '\0';
			modlist_norm(base);
			if (!strcmp(base, want)) {
				fclose(f);
				return i + 1;
			}
		}
		fclose(f);
	}
	return 0;
}
