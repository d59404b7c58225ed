// SPDX-License-Identifier: GPL-2.0
/*
 * census.c - `usbrig census`: for every module of the guest kernel with
 * USB aliases, what its drivers do with a device they claim, through the
 * id table and through new_id.
 *
 *  1. modules.alias (and modules.builtin.alias) of the guest kernel give
 *     each module's kinds of match (census_alias.c): device id, vendor,
 *     device class, interface class.
 *  2. Per kind, two gadgets (census_gadget.c): the device the alias
 *     matches, and its twin with an id pair no table lists.
 *  3. One scenario per module (OUT/scenarios/census-MOD.scenario), its
 *     steps the same for every module: attach the device and load what
 *     its modaliases name, as udev would (static); unload; attach the
 *     twin, load the module, write new_id on its drivers' bus, remove_id;
 *     re-plug the twin.  The guest side, census-probe.sh, records every
 *     phase in one file that a `save` step brings back.  Every step passes
 *     whatever the kernel does (`status any`, `attach no-wait`).
 *  4. A child `usbrig` runs them (--jobs, the crash watch, re-boots after
 *     a guest dies: the suite's own machinery); census_report.c turns what
 *     came back into the table.
 *
 * Exit: 0 done (and, with --baseline, no outcome changed), 1 outcomes
 * differ from the baseline, 2 bad usage or the census could not run.
 */
#define _GNU_SOURCE
#include "census.h"
#include "census_report.h"
#include "repro.h"
#include "repro_int.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/fsutil.h"
#include "../common/plan.h"
#include "initramfs.h"
#include "kernel.h"
#include "modlist.h"

#define GUEST_PROBE	"/usr/bin/census-probe"
#define MATCH_MAX	32	/* modules one device may load */

/*
 * The census's guests enumerate with usbcore's old scheme first: the
 * address, then the descriptor's first 8 bytes, where the default (the
 * "new" scheme) reads 64 bytes first and resets the port a second time.
 * Under TCG that takes an enumeration from 0.18 s to 0.06 s (from the
 * kernel's "new ... USB device" line to "New USB device found", median
 * of 36), three of them a module (docs/census.md, "Time").  It is
 * usbcore's own choice, made before any driver sees the device, and the
 * kernel falls back to it by itself; a whole census gave the same table
 * with it.  `--cmdline usbcore.old_scheme_first=0` comes after it and
 * restores the default.
 */
#define CENSUS_CMDLINE	"usbcore.old_scheme_first=1"

static const char usage[] =
"usage: usbrig census [options]\n"
"For every module of the guest kernel with USB aliases: attach a device\n"
"its table matches and one it does not, load the module as udev would,\n"
"teach it the second by new_id, and report what its drivers did.\n"
"  --kernel K           bzImage, patched[-VER][-kasan], debian:V\n"
"  --kernel-tree DIR    a built kernel tree (as for usbrig)\n"
"  --modules DIR        modules from DIR/lib/modules/VERSION\n"
"  --jobs N             N guests in parallel (default 1)\n"
"  --shard K/N          only modules K, K+N, ... of the sorted list\n"
"  --filter GLOB        only modules whose name matches (repeatable)\n"
"  --out DIR            where the table, gadgets and scenarios go\n"
"                       (default: build/census/)\n"
"  --baseline FILE      compare with a census.json: exit 1 on any change\n"
"  --reread             run nothing: read what OUT holds again\n"
"  --boot-timeout S     passed to usbrig\n"
"  --cmdline ARGS       passed to usbrig, after the census's own\n"
"                       " CENSUS_CMDLINE "\n"
"  --keep               keep the guests' work folders\n"
"  -v, --verbose\n"
"  -h, --help\n"
"Writes OUT/census.md, OUT/census.json, OUT/census.xml (JUnit).\n";

struct census_opts {
	struct guest_opts guest;	/* the kernel, passed on to usbrig */
	const char *out, *baseline;
	const char **filters;
	int n_filters;
	unsigned int jobs, shard_k, shard_n;
	bool reread;
	int verbose;
};

static void cerr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cerr(const char *fmt, ...)
{
	va_list ap;

	fputs("usbrig census: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int parse_uint(const char *what, const char *s, unsigned long max,
		      unsigned int *out)
{
	unsigned long v;

	if (plan_parse_uint(s, max, &v) || !v) {
		cerr("%s: expected a number from 1 to %lu, not '%s'", what,
		     max, s);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

enum { CO_JOBS = 256, CO_SHARD, CO_FILTER, CO_OUT, CO_BASELINE,
	CO_REREAD };

static const struct option long_opts[] = {
	GUEST_LONG_OPTIONS,
	{ "jobs", required_argument, NULL, CO_JOBS },
	{ "shard", required_argument, NULL, CO_SHARD },
	{ "filter", required_argument, NULL, CO_FILTER },
	{ "out", required_argument, NULL, CO_OUT },
	{ "baseline", required_argument, NULL, CO_BASELINE },
	{ "reread", no_argument, NULL, CO_REREAD },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct census_opts *o)
{
	const char **nf;
	char *slash;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", long_opts, NULL)) != -1) {
		if (guest_opt(c, optarg, &o->guest))
			continue;
		switch (c) {
		case CO_JOBS:
			if (parse_uint("--jobs", optarg, 64, &o->jobs))
				return -EINVAL;
			break;
		case CO_SHARD:
			slash = strchr(optarg, '/');
			if (!slash) {
				cerr("--shard K/N, not '%s'", optarg);
				return -EINVAL;
			}
			*slash = '\0';
			if (parse_uint("--shard N", slash + 1, 10000,
				       &o->shard_n) ||
			    parse_uint("--shard K", optarg, o->shard_n,
				       &o->shard_k))
				return -EINVAL;
			break;
		case CO_FILTER:
			nf = realloc(o->filters, sizeof(*nf) *
				     (size_t)(o->n_filters + 1));
			if (!nf)
				return -ENOMEM;
			o->filters = nf;
			o->filters[o->n_filters++] = optarg;
			break;
		case CO_OUT:
			o->out = optarg;
			break;
		case CO_BASELINE:
			o->baseline = optarg;
			break;
		case CO_REREAD:
			o->reread = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		cerr("unexpected argument '%s' (usbrig census --help)",
		     argv[optind]);
		return -EINVAL;
	}
	if (o->baseline && access(o->baseline, R_OK)) {
		cerr("--baseline %s: %s", o->baseline, strerror(errno));
		return -EINVAL;
	}
	return 0;
}

static bool selected(const struct census_opts *o, const char *name)
{
	if (!o->n_filters)
		return true;
	for (int i = 0; i < o->n_filters; i++)
		if (!fnmatch(o->filters[i], name, 0))
			return true;
	return false;
}

/* ---- generating ---- */

struct gen {
	const struct census_opts *o;
	const struct census_aliases *al;
	char root[PATH_MAX];
	struct guest_kernel k;
	int slow;		/* every time limit times this: 3 on a KASAN
				 * kernel, some 4 times slower under TCG */
	char out[PATH_MAX + 16], probe[PATH_MAX + 48];
	char balance[PATH_MAX + 48];	/* usbrig --balance's file, or "" */
	int next_pid;
};

/* Is CONFIG_KASAN=y in the kernel's .config ("" when it has none)? */
static bool kconfig_kasan(const char *path)
{
	char line[256];
	bool on = false;
	FILE *f = *path ? fopen(path, "r") : NULL;

	while (f && !on && fgets(line, sizeof(line), f))
		on = !strcmp(line, "CONFIG_KASAN=y\n");
	if (f)
		fclose(f);
	return on;
}

/* An id pair for a twin that no alias names by vendor and product. */
static int twin_pid(struct gen *g)
{
	for (; g->next_pid <= 0xffff; g->next_pid++) {
		bool listed = false;

		for (int i = 0; i < g->al->n && !listed; i++)
			listed = g->al->v[i].vid == CENSUS_VID &&
				 g->al->v[i].pid == g->next_pid;
		if (!listed)
			return g->next_pid++;
	}
	return -1;
}

static int write_gadget(const char *path, const struct census_dev *d,
			const char *title)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = census_gadget_write(f, d, title);
	if (fclose(f) && !ret)
		ret = -EIO;
	return ret;
}

/*
 * A phase starts with its mark in the kernel log (census_report.c gives
 * every later line to it), written by the agent itself before the
 * phase's device is attached: the drivers already in the kernel (usbcore's
 * hub, a module still loaded for the re-plug) probe the device during the
 * attach, and a mark written afterwards, by census-probe, came before or
 * after their probe errors depending on the guest's speed (the usbcore
 * vendor row's re-plug: probe-error ENODEV or clean, run to run).
 */
static void put_phase(FILE *f, const char *phase, int k)
{
	fprintf(f, "write /dev/kmsg \"usbrig-census: %s %d\" expect ok\n",
		phase, k);
}

/*
 * The scenario of module m: its gadgets written beside it, `requires
 * module` for every module the devices' modaliases name (so the guest
 * has them to load), the phases of each kind in turn.
 */
static int gen_module(struct gen *g, const struct census_module *m,
		      struct census_plan *plan)
{
	char path[PATH_MAX * 2], cmd[256], title[128];
	struct census_name mods[MATCH_MAX], any;
	bool early;
	int n_mods = 0, n_kinds = 0, ret, k, last = -1;
	const int sl = g->slow;
	FILE *f;

	memset(plan, 0, sizeof(*plan));
	snprintf(plan->module, sizeof(plan->module), "%s", m->name);
	plan->builtin = m->builtin;
	plan->n_alias = m->n_alias;
	for (k = 0; k < CK_N; k++) {
		struct census_kind_plan *kp = &plan->kind[k];
		struct census_dev *s = &kp->dev, *t = &kp->twin;
		int pid;

		if (!m->has[k])
			continue;
		kp->planned = true;
		n_kinds++;
		snprintf(kp->alias, sizeof(kp->alias), "%s",
			 m->kind[k].pattern);
		pid = twin_pid(g);
		if (pid < 0)
			return -ENOSPC;
		/* census ids where the alias leaves them open; the twin's
		 * are census ids */
		if (census_dev_of(&m->kind[k], pid, s) ||
		    census_twin_of(&m->kind[k], pid, t) ||
		    !census_alias_matches(&m->kind[k], s)) {
			snprintf(kp->unshaped, sizeof(kp->unshaped),
				 "no census device matches %s",
				 m->kind[k].pattern);
			continue;
		}
		kp->twin_matches = census_module_matches(g->al, m->name, t);
		kp->newid_class = m->kind[k].ic;
		n_mods += census_matching(g->al, s, mods + n_mods,
					  MATCH_MAX - n_mods);
		for (int side = 0; side < 2; side++) {
			snprintf(title, sizeof(title), "census %s %s %s",
				 m->name, census_kind_names[k],
				 side ? "new_id twin" : "device");
			snprintf(path, sizeof(path), "%s/gadgets/%s-%s-%s.gadget",
				 g->out, m->name, census_kind_names[k],
				 side ? "twin" : "device");
			ret = write_gadget(path, side ? t : s, title);
			if (ret)
				return ret;
		}
	}

	snprintf(path, sizeof(path), "%s/scenarios/census-%s.scenario",
		 g->out, m->name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "# census of module %s (generated by usbrig census)\n"
		"name census-%s\ntimeout %d\nfile %s %s\nrequires module %s\n",
		m->name, m->name, (30 + 45 * n_kinds) * sl, g->probe, GUEST_PROBE,
		m->name);
	for (int i = 0; i < n_mods; i++) {
		bool dup = !strcmp(mods[i].s, m->name);

		for (int j = 0; j < i && !dup; j++)
			dup = !strcmp(mods[i].s, mods[j].s);
		if (!dup && modlist_kind(g->k.mods_root, g->k.kver, mods[i].s) == 1)
			fprintf(f, "requires module %s\n", mods[i].s);
	}
	for (k = 0; k < CK_N; k++) {
		const struct census_kind_plan *kp = &plan->kind[k];

		if (!kp->planned || kp->unshaped[0])
			continue;
		fprintf(f, "gadget d%d %s/gadgets/%s-%s-device.gadget\n", k,
			g->out, m->name, census_kind_names[k]);
		fprintf(f, "gadget t%d %s/gadgets/%s-%s-twin.gadget\n", k,
			g->out, m->name, census_kind_names[k]);
	}
	for (k = 0; k < CK_N; k++)
		if (plan->kind[k].planned && !plan->kind[k].unshaped[0])
			last = k;
	snprintf(cmd, sizeof(cmd), "sh %s begin %s", GUEST_PROBE, m->name);
	repro_put_run(f, cmd, 10 * sl);
	for (k = 0; k < CK_N; k++) {
		const struct census_kind_plan *kp = &plan->kind[k];
		const struct census_dev *s = &kp->dev, *t = &kp->twin;
		char cls[16] = "";

		if (!kp->planned || kp->unshaped[0])
			continue;
		if (kp->newid_class >= 0)
			snprintf(cls, sizeof(cls), " %02x", kp->newid_class);
		fputc('\n', f);
		put_phase(f, "static", k);
		fprintf(f, "attach d%d no-wait within %ds\n", k, 30 * sl);
		/* no alias of any module matches the twin */
		early = !census_matching(g->al, t, &any, 1);
		if (early)
			fprintf(f, "# no table lists the twin: it enumerates now, "
				"on the next port, while the device is probed\n"
				"attach t%d no-wait within %ds\n", k, 30 * sl);
		snprintf(cmd, sizeof(cmd), "sh %s static %d %04x %04x",
			 GUEST_PROBE, k, s->vid, s->pid);
		repro_put_run(f, cmd, 40 * sl);
		fprintf(f, "detach d%d within %ds\n", k, 20 * sl);
		snprintf(cmd, sizeof(cmd), "sh %s unload", GUEST_PROBE);
		repro_put_run(f, cmd, 30 * sl);
		put_phase(f, "newid", k);
		if (!early)
			fprintf(f, "attach t%d no-wait within %ds\n", k,
				30 * sl);
		snprintf(cmd, sizeof(cmd), "sh %s newid %d %04x %04x %s%s",
			 GUEST_PROBE, k, t->vid, t->pid, m->name, cls);
		repro_put_run(f, cmd, 40 * sl);
		fprintf(f, "detach t%d within %ds\n", k, 20 * sl);
		put_phase(f, "replug", k);
		fprintf(f, "attach t%d no-wait within %ds\n", k, 30 * sl);
		snprintf(cmd, sizeof(cmd), "sh %s replug %d %04x %04x",
			 GUEST_PROBE, k, t->vid, t->pid);
		repro_put_run(f, cmd, 30 * sl);
		fprintf(f, "detach t%d within %ds\n", k, 20 * sl);
		if (k == last)
			continue;	/* `end` unloads */
		snprintf(cmd, sizeof(cmd), "sh %s unload", GUEST_PROBE);
		repro_put_run(f, cmd, 30 * sl);
	}
	snprintf(cmd, sizeof(cmd), "sh %s end", GUEST_PROBE);
	repro_put_run(f, cmd, 20 * sl);
	fprintf(f, "save /tmp/census/report.txt report.txt\n");
	snprintf(cmd, sizeof(cmd), "sh %s reset", GUEST_PROBE);
	repro_put_run(f, cmd, 10 * sl);
	if (fclose(f))
		return -EIO;
	return 0;
}

/* OUT and its folders, emptied of an earlier census's (only what a census
 * writes: OUT may hold other things).  The run makes saved/ itself. */
static int make_dirs(struct gen *g)
{
	static const char *const made[] = { "gadgets", "scenarios", NULL };
	static const char *const old[] = { "census.md", "census.json",
					   "census.xml", "run.ktap", "run.log",
					   "run.xml", "retry.ktap", "retry.log",
					   "retry.xml", "balance.txt", NULL };
	char path[PATH_MAX * 2];
	FILE *f;
	int ret;

	for (int i = 0; old[i] && !g->o->reread; i++) {
		snprintf(path, sizeof(path), "%s/%s", g->out, old[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/saved", g->out);
	if (!g->o->reread)
		fs_rm_rf(path);
	for (int i = 0; made[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", g->out, made[i]);
		fs_rm_rf(path);
		ret = fs_mkdir_p(path, 0755);
		if (ret)
			return ret;
	}
	snprintf(g->probe, sizeof(g->probe), "%s/census-probe.sh", g->out);
	f = fopen(g->probe, "w");
	if (!f)
		return -errno;
	fputs(census_probe_sh, f);
	if (fclose(f) || chmod(g->probe, 0755))
		return -EIO;
	return 0;
}

/*
 * OUT/balance.txt: the modules' times in the last census in OUT (read
 * before make_dirs() empties it), else in the baseline, so that the child
 * usbrig shares the modules among its jobs by them (--balance): in the
 * order of names, a job that drew the slow modules (probes waiting on
 * timeouts, reboots after an oops) ran alone at the end.
 */
static char *last_times(const struct gen *g)
{
	char path[PATH_MAX * 2];
	char *t;

	snprintf(path, sizeof(path), "%s/census.json", g->out);
	t = census_times(path);
	if (!t && g->o->baseline)
		t = census_times(g->o->baseline);
	return t;
}

static void write_times(struct gen *g, const char *times)
{
	FILE *f;

	g->balance[0] = '\0';
	if (!times || !*times)
		return;
	snprintf(g->balance, sizeof(g->balance), "%s/balance.txt", g->out);
	f = fopen(g->balance, "w");
	if (!f || fputs(times, f) < 0 || fclose(f)) {
		cerr("%s: %s (the jobs get the modules in turn)", g->balance,
		     strerror(errno ? errno : EIO));
		g->balance[0] = '\0';
	}
}

/* ---- running ---- */

/* Run plans in a child `usbrig`, its account in OUT/TAG.{xml,ktap,log}. */
static int run_child(const struct gen *g, const char *bin_dir,
		     const struct census_plan *plans, int n, const char *tag)
{
	char usbrig[PATH_MAX + 16], save[PATH_MAX * 2], junit[PATH_MAX * 2];
	char ktap[PATH_MAX * 2], log[PATH_MAX * 2], jobs[16];
	char **argv = calloc((size_t)n + GUEST_CHILD_ARGS + 16, sizeof(*argv));
	char (*paths)[PATH_MAX * 2] = calloc((size_t)n, sizeof(*paths));
	int a = 0, ret;

	if (!argv || !paths) {
		free(argv);
		free(paths);
		return -ENOMEM;
	}
	snprintf(usbrig, sizeof(usbrig), "%s/usbrig", bin_dir);
	snprintf(save, sizeof(save), "%s/saved", g->out);
	snprintf(junit, sizeof(junit), "%s/%s.xml", g->out, tag);
	snprintf(ktap, sizeof(ktap), "%s/%s.ktap", g->out, tag);
	snprintf(log, sizeof(log), "%s/%s.log", g->out, tag);
	snprintf(jobs, sizeof(jobs), "%u", g->o->jobs ? g->o->jobs : 1);
	argv[a++] = usbrig;
	guest_child_args(&g->o->guest, argv, &a);
	if (g->slow > 1 && !g->o->guest.boot_timeout) {
		/* a KASAN kernel boots some 3 times slower too */
		argv[a++] = "--boot-timeout";
		argv[a++] = "180";
	}
	/* a driver that oopses leaves the guest stuck on its locks: end
	 * the boot there, the next one goes on with the next module */
	argv[a++] = "--panic-on-oops";
	argv[a++] = "--jobs";
	argv[a++] = jobs;
	argv[a++] = "--save-dir";
	argv[a++] = save;
	argv[a++] = "--junit";
	argv[a++] = junit;
	if (g->balance[0]) {
		argv[a++] = "--balance";
		argv[a++] = (char *)g->balance;
	}
	for (int i = 0; i < n; i++) {
		snprintf(paths[i], sizeof(paths[i]),
			 "%s/scenarios/census-%s.scenario", g->out,
			 plans[i].module);
		argv[a++] = paths[i];
	}
	argv[a] = NULL;
	fprintf(stderr, "usbrig census: %d module(s), %s job(s); progress in %s\n",
		n, jobs, log);
	ret = fs_run_cmd(argv, ktap, log);
	free(argv);
	free(paths);
	return ret;
}

/*
 * The modules whose device never enumerated (a `nodev` record) run once
 * more, in fresh guests: in a long boot a device can fail to show up for
 * an earlier module's sake (a probe that waits for good holds the hub's
 * locks), and census-probe's `reset` ends such a boot.  What the second
 * run records replaces the first's; a device that does not enumerate in a
 * fresh guest either stays `no-device`.
 */
static int retry_nodev(const struct gen *g, const char *bin_dir,
		       const struct census_plan *plans, int n)
{
	struct census_plan *again = calloc((size_t)n, sizeof(*again));
	char path[PATH_MAX * 2], *text;
	int m = 0, ret = 0;

	if (!again)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/saved/census-%s/report.txt",
			 g->out, plans[i].module);
		text = fs_read_file(path, 1 << 20, NULL);
		if (text && (!strncmp(text, "nodev ", 6) ||
			     strstr(text, "\nnodev "))) {
			again[m++] = plans[i];
		}
		free(text);
	}
	if (m) {
		fprintf(stderr, "usbrig census: %d module(s) had no device; "
			"running them again in fresh guests\n", m);
		ret = run_child(g, bin_dir, again, m, "retry");
	}
	free(again);
	return ret;
}

/* ---- main ---- */

int census_main(int argc, char **argv)
{
	struct census_opts o = { .jobs = 1 };
	struct census_aliases al;
	struct census_plan *plans = NULL;
	struct gen g = { .o = &o, .al = &al, .next_pid = CENSUS_PID_BASE };
	char self[PATH_MAX], bin_dir[PATH_MAX];
	struct timespec t0, t1;
	int ret = CENSUS_EXIT_ERROR, n = 0, m, ci = 0;
	char *times;
	ssize_t len;
	char *slash;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* the census's own parameters first: the user's come after them */
	snprintf(o.guest.cmdline, sizeof(o.guest.cmdline), "%s",
		 CENSUS_CMDLINE);
	if (parse_args(argc, argv, &o))
		goto out_opts;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		goto out_opts;
	self[len] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(bin_dir, sizeof(bin_dir), "%s", slash ? self : ".");
	find_root(bin_dir, g.root, sizeof(g.root));
	snprintf(g.out, sizeof(g.out), "%s", o.out ? o.out : "");
	if (!o.out)
		snprintf(g.out, sizeof(g.out), "%s/census", bin_dir);
	if (guest_kernel_resolve("usbrig census", &o.guest, g.root, &g.k))
		goto out_opts;
	g.slow = kconfig_kasan(g.k.kconfig) ? 3 : 1;
	ret = census_aliases_read(g.k.mods_root, g.k.kver, &al);
	if (ret) {
		cerr("%s/lib/modules/%s/modules.alias: %s (--modules DIR?)",
		     g.k.mods_root, g.k.kver, strerror(-ret));
		ret = CENSUS_EXIT_ERROR;
		goto out_opts;
	}
	ret = CENSUS_EXIT_ERROR;
	plans = calloc((size_t)al.n_mod + 1, sizeof(*plans));
	times = o.reread ? NULL : last_times(&g);
	if (!plans || make_dirs(&g)) {
		cerr("%s: %s", g.out, strerror(errno));
		free(times);
		goto out;
	}
	write_times(&g, times);
	free(times);
	for (m = 0; m < al.n_mod; m++) {
		int r;

		if (!selected(&o, al.m[m].name))
			continue;
		if (o.shard_n && ci++ % (int)o.shard_n != (int)o.shard_k - 1)
			continue;
		r = gen_module(&g, &al.m[m], &plans[n]);
		if (r) {
			cerr("%s: %s", al.m[m].name, strerror(-r));
			goto out;
		}
		n++;
	}
	if (!n) {
		cerr("no module of %s matches (%d with usb aliases)", g.k.kver,
		     al.n_mod);
		goto out;
	}
	if (!o.reread) {
		int r = run_child(&g, bin_dir, plans, n, "run");

		if (r >= 0)
			r = retry_nodev(&g, bin_dir, plans, n);
		if (r < 0) {
			cerr("cannot run usbrig: %s", strerror(-r));
			goto out;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ret = census_report(g.out, g.k.kver, plans, n,
			    (double)(t1.tv_sec - t0.tv_sec) +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
			    o.jobs, o.baseline);
out:
	free(plans);
	census_aliases_free(&al);
out_opts:
	free(o.filters);
	return ret;
}
