// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - usbrig: run scenario files in QEMU guests, print KTAP.
 *
 * Loads every scenario first (any error stops the run before a guest
 * starts), selects by --filter and --shard, then hands them to run.c.
 * stdout carries only the KTAP stream (or the transcript) and ends with
 * "N passed, N failed, N skipped"; everything else goes to stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/fsutil.h"
#include "balance.h"
#include "census.h"
#include "initramfs.h"
#include "fuzz.h"
#include "kernel.h"
#include "repro.h"
#include "report.h"
#include "run.h"
#include "scenario.h"

#define EXIT_USAGE	2
#define EXIT_UNTESTED	125	/* git bisect run: cannot test */

static const char usage[] =
"usage: usbrig [options] SCENARIO|DIR...\n"
"       usbrig repro DUMP [options]   (usbrig repro --help)\n"
"       usbrig fuzz [options]         (usbrig fuzz --help)\n"
"Run scenario files (tests/scenarios/*.scenario) in QEMU guests and print\n"
"KTAP on stdout; the last line is \"N passed, N failed, N skipped\".\n"
"A DIR stands for its *.scenario files.\n"
"\n"
"  --kernel BZIMAGE     guest kernel (default: the newest /boot/vmlinuz-*);\n"
"                       in a folder as kernel-patch/build.sh leaves it\n"
"                       (a regression mutant's), with that folder's modules;\n"
"                       repeat it to run the suite on each kernel, then\n"
"                       print each scenario's outcome side by side\n"
"  --kernel patched     the kernel `make kernel` built from kernel-patch/\n"
"                       (patched-6.12: `make kernel KVER=6.12`):\n"
"                       build/kernel/bzImage and its modules (patched-kasan:\n"
"                       build/kernel/kasan/, `make kernel-kasan`); the folder\n"
"                       is $USBRIG_KERNEL_DIR when set\n"
"  --kernel debian:V    Debian's kernel image package V (6.12, 6.1.0-57,\n"
"                       6.12.113+deb12; the newest that matches), fetched\n"
"                       with apt-get download and unpacked into\n"
"                       build/kernel/debian/, not installed\n"
"  --kernel-tree DIR    a built kernel tree (or its O= folder): its\n"
"                       arch/x86/boot/bzImage, its modules installed into\n"
"                       build/kernel/tree/ when they changed (repeatable,\n"
"                       with --kernel too)\n"
"  --modules DIR        modules from DIR/lib/modules/VERSION (default: /)\n"
"  --jobs N             N guests in parallel (default 1)\n"
"  --balance FILE       share the scenarios among the jobs by their times\n"
"                       in FILE, lines \"NAME SECONDS\" (an earlier run's;\n"
"                       `usbrig census` writes one): the longest first\n"
"                       (default: round robin by name)\n"
"  --shard K/N          run only slice K of N (1-based, by sorted name)\n"
"  --filter GLOB        only scenarios whose name matches (repeatable)\n"
"  --junit FILE         also write JUnit XML to FILE\n"
"  --transcript         a readable step-by-step transcript, not KTAP\n"
"  --bench              print timing figures (KTAP # lines) at the end\n"
"  --gadget-on-host     serve gadgets from the host, not the guest's device vCPU\n"
"  --panic-on-oops      an oops, or a task hung for 60 s, ends the boot at\n"
"                       once: the rest of its scenarios go on in a new one\n"
"  --timeout S          budget of scenarios without `timeout` (default 60)\n"
"  --boot-timeout S     boot until the agent's first line (default 60)\n"
"  --cmdline ARGS       kernel parameters added to the guest's command line\n"
"                       (repeatable; they come after usbrig's own)\n"
"  --save-dir DIR       where `save` steps put relative host paths:\n"
"                       DIR/<scenario name>/PATH (default: saved/ next to\n"
"                       the usbrig binary)\n"
"  --keep               keep every boot's work dir under build/runs/\n"
"                       (default: only boots with a failure are kept)\n"
"  --check              parse and check the scenarios only, run nothing\n"
"  --plan               print the plan the agent would get, run nothing\n"
"  -v                   more detail on stderr (twice: every agent line)\n"
"  --help               this text\n"
"  --version            print \"usbrig VERSION\" and exit\n"
"\n"
"Exit status: 0 nothing failed, 1 something failed, 2 bad usage or a\n"
"scenario that does not load, 125 the guest never ran a scenario (it did\n"
"not boot: cannot test, for git bisect run).\n";

/* --kernel is repeatable: the suite runs on each, then side by side */
#define MAX_KERNELS	8

struct opts {
	const char *kernels[MAX_KERNELS];
	bool is_tree[MAX_KERNELS];	/* --kernel-tree, not --kernel */
	int n_kernels;
	const char *modules_dir;
	unsigned int jobs;
	unsigned int shard_k, shard_n;
	const char **filters;
	int n_filters;
	const char *junit;
	const char *save_dir;
	const char *balance;
	bool transcript, bench, gadget_on_host, keep, check, plan;
	bool panic_on_oops;
	char cmdline[GUEST_CMDLINE_MAX];	/* every --cmdline, in order */
	unsigned int timeout_s, boot_timeout_s;
	int verbose;
};

/* ---- gadget checks: `usbrig-gadget --check FILE`, once per file ---- */

struct gadget_check {
	char *path;
	int ret;
	char msg[512];
};

struct checker {
	const char *gadget_bin;
	struct gadget_check *v;
	int n;
};

static int run_gadget_check(const char *bin, const char *path, char *msg,
			    size_t len)
{
	int fds[2], status = 0;
	size_t n = 0;
	pid_t pid;

	if (access(bin, X_OK)) {
		snprintf(msg, len, "cannot check it: %s: %s (make %s)", bin,
			 strerror(errno), bin);
		return -1;
	}
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		snprintf(msg, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		execl(bin, bin, "--check", path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		char tmp[1024];
		ssize_t r = read(fds[0], tmp, sizeof(tmp));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (n + 1 < len) {
			size_t take = (size_t)r < len - 1 - n ? (size_t)r :
				      len - 1 - n;

			memcpy(msg + n, tmp, take);
			n += take;
		}
	}
	msg[n] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	/* keep the first line: "file:line:col: message" */
	msg[strcspn(msg, "\n")] = '\0';
	if (!msg[0])
		snprintf(msg, len, "%s --check failed (status 0x%x)", bin,
			 status);
	return -1;
}

static int check_gadget_cb(void *ctx, const char *path, char *msg,
			   size_t len)
{
	struct checker *ck = ctx;
	struct gadget_check *nv;
	int i;

	for (i = 0; i < ck->n; i++)
		if (!strcmp(ck->v[i].path, path)) {
			snprintf(msg, len, "%s", ck->v[i].msg);
			return ck->v[i].ret;
		}
	nv = realloc(ck->v, sizeof(*nv) * (size_t)(ck->n + 1));
	if (!nv)
		return -1;
	ck->v = nv;
	nv[ck->n].path = strdup(path);
	if (access(path, R_OK)) {
		snprintf(nv[ck->n].msg, sizeof(nv[ck->n].msg), "%s",
			 strerror(errno));
		nv[ck->n].ret = -1;
	} else {
		nv[ck->n].ret = run_gadget_check(ck->gadget_bin, path,
						 nv[ck->n].msg,
						 sizeof(nv[ck->n].msg));
	}
	snprintf(msg, len, "%s", nv[ck->n].msg);
	return nv[ck->n++].ret;
}

/* ---- paths ---- */

static int dir_of(const char *path, char *buf, size_t size)
{
	char *slash;

	if (snprintf(buf, size, "%s", path) >= (int)size)
		return -ENAMETOOLONG;
	slash = strrchr(buf, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* The repository root: $USBRIG_ROOT, or the nearest ancestor of the
 * binary's folder holding harness/host, or the current directory. */
void find_root(const char *bin_dir, char *buf, size_t size)
{
	const char *env = getenv("USBRIG_ROOT");
	char cand[PATH_MAX], probe[PATH_MAX + 32];
	int i;

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return;
	}
	snprintf(cand, sizeof(cand), "%s", bin_dir);
	for (i = 0; i < 4; i++) {
		snprintf(probe, sizeof(probe), "%s/harness/host/vm.h", cand);
		if (!access(probe, R_OK)) {
			snprintf(buf, size, "%s", cand);
			return;
		}
		{
			char *slash = strrchr(cand, '/');

			if (!slash || slash == cand)
				break;
			*slash = '\0';
		}
	}
	snprintf(buf, size, ".");
}

/* ---- loading ---- */

struct list {
	char **v;
	int n;
};

static int list_add(struct list *l, const char *s)
{
	char **nv = realloc(l->v, sizeof(*nv) * (size_t)(l->n + 1));

	if (!nv)
		return -ENOMEM;
	l->v = nv;
	nv[l->n] = strdup(s);
	return nv[l->n] ? (l->n++, 0) : -ENOMEM;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* SCENARIO arguments: files, or folders of *.scenario. */
static int expand_args(char **argv, int argc, struct list *files)
{
	int i;

	for (i = 0; i < argc; i++) {
		struct list in_dir = { 0 };
		struct dirent *de;
		size_t len = strlen(argv[i]);
		DIR *d;
		int k;

		while (len > 1 && argv[i][len - 1] == '/')
			argv[i][--len] = '\0';
		if (!is_dir(argv[i])) {
			if (list_add(files, argv[i]))
				return -ENOMEM;
			continue;
		}
		d = opendir(argv[i]);
		if (!d) {
			fprintf(stderr, "usbrig: %s: %s\n", argv[i],
				strerror(errno));
			return -errno;
		}
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);
			char path[PATH_MAX];

			if (n < 10 || strcmp(de->d_name + n - 9, ".scenario"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
				 de->d_name);
			if (list_add(&in_dir, path))
				return -ENOMEM;
		}
		closedir(d);
		qsort(in_dir.v, (size_t)in_dir.n, sizeof(char *), cmp_str);
		for (k = 0; k < in_dir.n; k++) {
			list_add(files, in_dir.v[k]);
			free(in_dir.v[k]);
		}
		free(in_dir.v);
	}
	return 0;
}

static int cmp_scenario(const void *a, const void *b)
{
	const struct scenario *x = *(struct scenario *const *)a;
	const struct scenario *y = *(struct scenario *const *)b;

	return strcmp(x->name, y->name);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/*
 * Checks across files: unique names, and one gadget file per basename
 * (the guest sees /usbrig/gadgets/<basename>).  Returns the number of
 * errors printed.
 */
static int cross_check(struct scenario **sc, int n)
{
	int errors = 0, i, j, a, b;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			if (!strcmp(sc[i]->name, sc[j]->name)) {
				fprintf(stderr, "%s:1:1: scenario name '%s' "
					"is also the name of %s\n",
					sc[j]->file, sc[j]->name, sc[i]->file);
				errors++;
			}
		}
	for (i = 0; i < n; i++)
		for (a = 0; a < sc[i]->n_gadgets; a++)
			for (j = i; j < n; j++)
				for (b = 0; b < sc[j]->n_gadgets; b++) {
					const struct sc_gadget *x =
						&sc[i]->gadgets[a];
					const struct sc_gadget *y =
						&sc[j]->gadgets[b];
					char rx[PATH_MAX], ry[PATH_MAX];

					if ((j == i && b <= a) ||
					    strcmp(base_name(x->path),
						   base_name(y->path)))
						continue;
					if (!realpath(x->path, rx) ||
					    !realpath(y->path, ry) ||
					    !strcmp(rx, ry))
						continue;
					fprintf(stderr, "%s:%d:1: gadget file "
						"%s has the same name in the "
						"guest as %s (%s:%d): rename "
						"one\n", sc[j]->file, y->line,
						y->path, x->path, sc[i]->file,
						x->line);
					errors++;
				}
	/* `file`: one guest path holds one host file for the whole run */
	for (i = 0; i < n; i++)
		for (a = 0; a < sc[i]->n_files; a++)
			for (j = i; j < n; j++)
				for (b = 0; b < sc[j]->n_files; b++) {
					const struct sc_file *x =
						&sc[i]->files[a];
					const struct sc_file *y =
						&sc[j]->files[b];

					if ((j == i && b <= a) ||
					    strcmp(x->dst, y->dst) ||
					    !strcmp(x->src, y->src))
						continue;
					fprintf(stderr, "%s:%d:1: guest path "
						"%s gets %s here but %s in "
						"%s:%d\n", sc[j]->file,
						y->line, y->dst, y->src,
						x->src, sc[i]->file, x->line);
					errors++;
				}
	return errors;
}

static bool selected(const struct opts *o, const char *name)
{
	int i;

	if (!o->n_filters)
		return true;
	for (i = 0; i < o->n_filters; i++)
		if (!fnmatch(o->filters[i], name, 0))
			return true;
	return false;
}

static int parse_uint_opt(const char *name, const char *s, unsigned int min,
			  unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "usbrig: %s: expected a number in %u..%u, got "
			"'%s'\n", name, min, max, s);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

/* --cmdline ARGS: checked, then added to what the earlier ones gave */
static int add_cmdline(struct opts *o, const char *args)
{
	char why[128];
	int ret = guest_cmdline_add(o->cmdline, args, why, sizeof(why));

	if (ret)
		fprintf(stderr, "usbrig: --cmdline '%s': %s\n", args, why);
	return ret;
}

enum {
	OPT_KERNEL = 256, OPT_KERNEL_TREE, OPT_MODULES, OPT_JOBS, OPT_SHARD, OPT_FILTER,
	OPT_JUNIT, OPT_TRANSCRIPT, OPT_BENCH, OPT_GADGET_ON_HOST,
	OPT_PANIC_ON_OOPS, OPT_TIMEOUT,
	OPT_BOOT_TIMEOUT, OPT_KEEP, OPT_CHECK, OPT_PLAN, OPT_HELP,
	OPT_SAVE_DIR, OPT_VERSION, OPT_BALANCE, OPT_CMDLINE,
};

static const struct option long_opts[] = {
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "kernel-tree", required_argument, NULL, OPT_KERNEL_TREE },
	{ "modules", required_argument, NULL, OPT_MODULES },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "balance", required_argument, NULL, OPT_BALANCE },
	{ "shard", required_argument, NULL, OPT_SHARD },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	{ "transcript", no_argument, NULL, OPT_TRANSCRIPT },
	{ "bench", no_argument, NULL, OPT_BENCH },
	{ "gadget-on-host", no_argument, NULL, OPT_GADGET_ON_HOST },
	{ "panic-on-oops", no_argument, NULL, OPT_PANIC_ON_OOPS },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "boot-timeout", required_argument, NULL, OPT_BOOT_TIMEOUT },
	{ "cmdline", required_argument, NULL, OPT_CMDLINE },
	{ "keep", no_argument, NULL, OPT_KEEP },
	{ "save-dir", required_argument, NULL, OPT_SAVE_DIR },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "plan", no_argument, NULL, OPT_PLAN },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "vj:", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_KERNEL:
		case OPT_KERNEL_TREE:
			if (o->n_kernels == MAX_KERNELS) {
				fprintf(stderr, "usbrig: --kernel %s: at most %d kernels in one run\n",
					optarg, MAX_KERNELS);
				return -EINVAL;
			}
			o->is_tree[o->n_kernels] = c == OPT_KERNEL_TREE;
			o->kernels[o->n_kernels++] = optarg;
			break;
		case OPT_MODULES:
			o->modules_dir = optarg;
			break;
		case 'j':
		case OPT_JOBS:
			if (parse_uint_opt("--jobs", optarg, 1, 64, &o->jobs))
				return -EINVAL;
			break;
		case OPT_SHARD: {
			char *slash = strchr(optarg, '/');

			if (!slash) {
				fprintf(stderr, "usbrig: --shard K/N\n");
				return -EINVAL;
			}
			*slash = '\0';
			if (parse_uint_opt("--shard N", slash + 1, 1, 10000,
					   &o->shard_n) ||
			    parse_uint_opt("--shard K", optarg, 1, o->shard_n,
					   &o->shard_k))
				return -EINVAL;
			break;
		}
		case OPT_FILTER: {
			const char **nf = realloc(o->filters, sizeof(*nf) *
						  (size_t)(o->n_filters + 1));

			if (!nf)
				return -ENOMEM;
			o->filters = nf;
			nf[o->n_filters++] = optarg;
			break;
		}
		case OPT_JUNIT:
			o->junit = optarg;
			break;
		case OPT_BALANCE:
			o->balance = optarg;
			break;
		case OPT_CMDLINE:
			if (add_cmdline(o, optarg))
				return -EINVAL;
			break;
		case OPT_TRANSCRIPT:
			o->transcript = true;
			break;
		case OPT_BENCH:
			o->bench = true;
			break;
		case OPT_GADGET_ON_HOST:
			o->gadget_on_host = true;
			break;
		case OPT_PANIC_ON_OOPS:
			o->panic_on_oops = true;
			break;
		case OPT_TIMEOUT:
			if (parse_uint_opt("--timeout", optarg, 1,
					   SC_TIMEOUT_MAX_S, &o->timeout_s))
				return -EINVAL;
			break;
		case OPT_BOOT_TIMEOUT:
			if (parse_uint_opt("--boot-timeout", optarg, 1, 3600,
					   &o->boot_timeout_s))
				return -EINVAL;
			break;
		case OPT_KEEP:
			o->keep = true;
			break;
		case OPT_SAVE_DIR:
			o->save_dir = optarg;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_PLAN:
			o->plan = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case OPT_HELP:
			fputs(usage, stdout);
			exit(0);
		case OPT_VERSION:
			printf("usbrig %s\n", USBRIG_VERSION);
			exit(0);
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * --balance FILE: each selected scenario's time in FILE into *est (0 when
 * FILE does not name it).  A bad file is an error that says where.
 */
static int read_balance(const char *file, struct scenario **sc, int n,
			double **est)
{
	struct balance_time *t = NULL;
	char err[512];
	size_t len;
	char *text = fs_read_file(file, BALANCE_FILE_MAX, &len);
	int nt = 0, ret;

	if (!text) {
		fprintf(stderr, "usbrig: --balance %s: %s\n", file,
			strerror(errno));
		return -errno;
	}
	ret = balance_parse(file, text, len, &t, &nt, err, sizeof(err));
	free(text);
	if (ret) {
		fprintf(stderr, "%s\n", err);
		return ret;
	}
	*est = calloc((size_t)n + 1, sizeof(**est));
	if (!*est) {
		balance_free(t, nt);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < nt; k++)
			if (!strcmp(t[k].name, sc[i]->name))
				(*est)[i] = t[k].seconds;
	balance_free(t, nt);
	return 0;
}

/* ---- several kernels ---- */

/* A kernel's name in the table and in JUnit: what --kernel said. */
static const char *kernel_label(const struct opts *o,
				const struct guest_kernel *gk, int k)
{
	return o->kernels[k] ? o->kernels[k] : gk[k].kver;
}

/*
 * No scenario of the run began (none skipped): the guest never reached
 * the agent, so nothing about the kernel's behaviour was learnt.
 */
static bool never_began(struct report *r)
{
	int n = report_count(r), tried = 0;

	for (int i = 0; i < n; i++) {
		const struct rp_result *res = report_result(r, i);

		if (res->res == RP_SKIP)
			continue;
		if (res->begun)
			return false;
		tried++;
	}
	return tried > 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .jobs = 1, .boot_timeout_s = 60 };
	char self[PATH_MAX], bin_dir[PATH_MAX], root[PATH_MAX];
	char gadget_bin[PATH_MAX + 32], cache_dir[PATH_MAX + 32];
	char runs_dir[PATH_MAX + 32], save_dir[PATH_MAX + 32];
	struct guest_kernel gk[MAX_KERNELS];
	struct checker ck = { 0 };
	struct list files = { 0 };
	struct scenario **sc = NULL;
	double *est = NULL;
	struct report *r[MAX_KERNELS] = { 0 };
	struct report_opts ro;
	struct run_opts rn;
	int i, k, nk = 0, n = 0, errors = 0, ret = EXIT_USAGE;
	int passed, failed, skipped;
	bool untested = false;
	ssize_t len;

	if (argc > 1 && !strcmp(argv[1], "repro"))
		return repro_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "census"))
		return census_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "fuzz"))
		return fuzz_main(argc - 1, argv + 1);
	if (parse_opts(argc, argv, &o))
		return EXIT_USAGE;
	if (optind == argc) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return EXIT_USAGE;
	self[len] = '\0';
	if (dir_of(self, bin_dir, sizeof(bin_dir)))
		snprintf(bin_dir, sizeof(bin_dir), ".");
	find_root(bin_dir, root, sizeof(root));
	snprintf(gadget_bin, sizeof(gadget_bin), "%s/usbrig-gadget", bin_dir);
	snprintf(cache_dir, sizeof(cache_dir), "%s/cache", bin_dir);
	snprintf(runs_dir, sizeof(runs_dir), "%s/runs", bin_dir);
	snprintf(save_dir, sizeof(save_dir), "%s/saved", bin_dir);
	ck.gadget_bin = gadget_bin;

	/* 1. load everything; report every broken file, then stop */
	if (expand_args(argv + optind, argc - optind, &files))
		goto out;
	sc = calloc((size_t)files.n + 1, sizeof(*sc));
	if (!sc)
		goto out;
	for (i = 0; i < files.n; i++) {
		struct sc_opts so = {
			.root = root,
			.build_dir = bin_dir,
			.default_timeout_s = o.timeout_s,
			.check_gadget = check_gadget_cb,
			.ctx = &ck,
		};
		char err[SC_ERR_MAX];

		if (scenario_load(files.v[i], &so, &sc[n], err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			errors++;
			continue;
		}
		n++;
	}
	errors += cross_check(sc, n);
	if (errors) {
		fprintf(stderr, "usbrig: %d error(s) in the scenarios; nothing "
			"was run\n", errors);
		goto out;
	}

	/* 2. select: sorted by name, --filter, then --shard */
	qsort(sc, (size_t)n, sizeof(*sc), cmp_scenario);
	{
		int k = 0, m = 0;

		for (i = 0; i < n; i++) {
			if (!selected(&o, sc[i]->name) ||
			    (o.shard_n && (m++ % (int)o.shard_n) !=
			     (int)o.shard_k - 1)) {
				scenario_free(sc[i]);
				continue;
			}
			sc[k++] = sc[i];
		}
		n = k;
	}
	if (o.balance && read_balance(o.balance, sc, n, &est))
		goto out;
	if (o.check) {
		for (i = 0; i < n; i++)
			printf("%s %s\n", sc[i]->name, sc[i]->file);
		fprintf(stderr, "usbrig: %d scenario(s) OK\n", n);
		ret = 0;
		goto out;
	}
	if (o.plan) {
		for (i = 0; i < n; i++)
			scenario_write_plan(stdout, sc[i], 0);
		ret = 0;
		goto out;
	}

	/* 3. the guest kernels, all found before anything runs */
	guest_cmdline_warn("usbrig", o.cmdline);
	nk = o.n_kernels ? o.n_kernels : 1;
	if (nk > 1 && o.modules_dir) {
		fprintf(stderr, "usbrig: --modules names one kernel's modules; with several --kernel each brings its own\n");
		goto out;
	}
	for (k = 0; k < nk; k++) {
		const struct guest_opts go = {
			.kernel = o.is_tree[k] ? NULL : o.kernels[k],
			.tree = o.is_tree[k] ? o.kernels[k] : NULL,
			.modules_dir = o.modules_dir,
		};

		if (guest_kernel_resolve("usbrig", &go, root, &gk[k]))
			goto out;
	}
	if (o.transcript)
		o.jobs = 1;

	/* 4. the suite on each */
	ret = 0;
	for (k = 0; k < nk; k++) {
		char kdir[PATH_MAX + 300];

		ro = (struct report_opts){
			.ktap = stdout,
			.progress = stderr,
			.transcript = o.transcript,
			.kernel = nk > 1 ? kernel_label(&o, gk, k) : NULL,
			.verbose = o.verbose,
		};
		/* each kernel's saved files in a folder of its own */
		snprintf(kdir, sizeof(kdir), "%s%s%s",
			 o.save_dir ? o.save_dir : save_dir, nk > 1 ? "/" : "",
			 nk > 1 ? gk[k].kver : "");
		rn = (struct run_opts){
			.kernel = gk[k].bzimage,
			.kver = gk[k].kver,
			.modules_dir = gk[k].mods_root[0] ? gk[k].mods_root : NULL,
			.patched = gk[k].patched,
			.kconfig = gk[k].kconfig[0] ? gk[k].kconfig : NULL,
			.bin_dir = bin_dir,
			.cache_dir = cache_dir,
			.runs_dir = runs_dir,
			.save_dir = kdir,
			.jobs = o.jobs,
			.est_s = est,
			.boot_timeout_s = o.boot_timeout_s,
			.gadget_on_host = o.gadget_on_host,
			.panic_on_oops = o.panic_on_oops,
			.cmdline = o.cmdline[0] ? o.cmdline : NULL,
			.keep = o.keep,
			.bench = o.bench,
			.verbose = o.verbose,
		};
		r[k] = report_new(sc, n, &ro);
		if (!r[k]) {
			ret = 1;
			goto out;
		}
		if (o.verbose || nk > 1)
			fprintf(stderr, "usbrig: %d scenario(s), kernel %s (%s), %u job(s)\n",
				n, gk[k].bzimage, gk[k].kver, o.jobs);
		report_start(r[k]);
		if (nk > 1)
			report_note(r[k], "kernel %d of %d: %s (%s)", k + 1,
				    nk, kernel_label(&o, gk, k), gk[k].kver);
		run_preflight(sc, n, r[k], &rn);
		run_suite(sc, n, r[k], &rn);
		report_finish(r[k]);
		report_counts(r[k], &passed, &failed, &skipped);
		if (never_began(r[k])) {
			fprintf(stderr, "usbrig: kernel %s ran no scenario: cannot test (exit %d)\n",
				kernel_label(&o, gk, k), EXIT_UNTESTED);
			untested = true;
		} else if (failed) {
			ret = 1;
		}
	}
	/* a failure seen on one kernel outweighs another that cannot run */
	if (untested && !ret)
		ret = EXIT_UNTESTED;
	if (nk > 1)
		report_side_by_side(stdout, (const struct report *const *)r,
				    nk);
	if (o.junit) {
		int jr = report_write_junit_all((const struct report *const *)r,
						nk, o.junit);

		if (jr) {
			fprintf(stderr, "usbrig: %s: %s\n", o.junit,
				strerror(-jr));
			ret = 1;
		}
	}
out:
	for (k = 0; k < nk; k++)
		report_free(r[k]);
	for (i = 0; i < n; i++)
		scenario_free(sc[i]);
	free(sc);
	for (i = 0; i < files.n; i++)
		free(files.v[i]);
	free(files.v);
	for (i = 0; i < ck.n; i++)
		free(ck.v[i].path);
	free(ck.v);
	free(o.filters);
	free(est);
	return ret;
}
