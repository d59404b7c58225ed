// SPDX-License-Identifier: GPL-2.0
/*
 * replay.c - main() for a fuzz target without libFuzzer: every file named
 * on the command line, and every file of every folder named (not
 * recursively, in name order), is fed to LLVMFuzzerTestOneInput() once,
 * in a buffer of exactly its size so ASan sees a read past the end.
 * `make check-fuzz` runs each target this way over its corpus and its
 * regressions.  Prints "replay: N inputs" and exits 0; a crash is the
 * sanitizer's or fz_fail()'s abort.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
	uint8_t *buf;
	size_t len, got;
	FILE *f;
	long sz;

	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	sz = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (sz < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		fclose(f);
		return -1;
	}
	len = (size_t)sz;
	/* malloc(0) may return NULL; the target must not read it anyway */
	buf = malloc(len ? len : 1);
	if (!buf) {
		fclose(f);
		return -1;
	}
	got = fread(buf, 1, len, f);
	fclose(f);
	if (got != len) {
		fprintf(stderr, "replay: %s: short read\n", path);
		free(buf);
		return -1;
	}
	if (getenv("USBRIG_FUZZ_VERBOSE"))
		fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir, in name order; the count or -1. */
static int replay_dir(const char *dir)
{
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	int done = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **p;

			cap = cap ? 2 * cap : 64;
			p = realloc(names, cap * sizeof(*names));
			if (!p)
				break;
			names = p;
		}
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!stat(path, &st) && S_ISREG(st.st_mode) &&
		    !strstr(names[i], "README")) {
			if (replay_file(path) < 0)
				done = -1;
			else if (done >= 0)
				done++;
		}
		free(names[i]);
	}
	free(names);
	return done;
}

int main(int argc, char **argv)
{
	struct stat st;
	int i, n, total = 0, bad = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
				strerror(errno));
			bad++;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			n = replay_dir(argv[i]);
		} else {
			n = replay_file(argv[i]);
			if (n == 0)
				n = 1;
		}
		if (n < 0)
			bad++;
		else
			total += n;
	}
	printf("replay: %s: %d inputs\n", argv[0], total);
	return bad ? 1 : 0;
}
