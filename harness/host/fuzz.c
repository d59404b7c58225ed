// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz.c - `usbrig fuzz`: hostile devices against the guest kernel.
 *
 *  1. Seeds: the example gadgets (gadgets/examples/NAME.gadget) and census
 *     devices (census_gadget.c) of modules drawn from the kernel's
 *     modules.alias, so that drivers bind what is mutated.
 *  2. Device N: a seed and up to FZ_MUT_MAX mutations (fuzz_mutate.c),
 *     drawn from a PRNG seeded by --seed and N alone, so the same seed
 *     gives the same devices whatever the timing; a mutation the gadget
 *     parser refuses is dropped.  devices.txt lists them.
 *  3. One scenario per device, census-probe.sh's steps (attach, load what
 *     the modaliases name as udev would, detach, unload); a round of
 *     devices is one child `usbrig` run (--jobs guests, --panic-on-oops:
 *     the census's machinery), so many devices share a boot, and the
 *     console's scenario markers say which device a report belongs to.
 *  4. A report with a new signature is a finding: the device is run
 *     alone (with and without its mutations), then its mutations are
 *     minimised by delta debugging (fuzz_ddmin.c), every round's
 *     candidates in one child run, each candidate kept only when the same
 *     signature comes back.  OUT/finding-N/ gets the original and the
 *     minimised gadget, a scenario that expects the report, its excerpt.
 *
 * Exit: 0 ran, no finding; 1 findings; 2 bad usage or it could not run.
 */
#define _GNU_SOURCE
#include "fuzz.h"
#include "fuzz_int.h"
#include "census_int.h"
#include "repro.h"
#include "repro_int.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/fsutil.h"
#include "../common/plan.h"
#include "kernel.h"
#include "modlist.h"

#define GUEST_PROBE	"/usr/bin/census-probe"
#define FZ_CENSUS_SEEDS	24	/* census devices among the seeds */
#define FZ_MODS_MAX	16	/* modules one device's aliases name */
#define FZ_ROUND	12	/* devices per guest and round */
#define FZ_PATH		(PATH_MAX + 256)
/*
 * The planted device's scenarios take the default RNG (drbg) out of the
 * guest before the attach: its Bluetooth interface then makes the crypto
 * self-test WARN, a report that the device's descriptors alone bring
 * about every time (the guests have drbg since INITRAMFS_ONDEMAND_MODULES).
 * A drbg already loaded would stay: the step fails then.  The guest is the
 * plant's own (its round has device 0 alone; the candidates of its
 * minimisation are all planted), so no other device runs without drbg.
 */
#define FZ_PLANT_NO_RNG	"! grep -q '^drbg ' /proc/modules && " \
			"rm -f /lib/modules/*/kernel/crypto/drbg.ko*"

static const char usage[] =
"usage: usbrig fuzz [options]\n"
"Hostile devices against the guest kernel: gadgets mutated from the\n"
"examples and census devices, attached with the guest's drivers loading\n"
"by modalias; a kernel report is minimised to the fewest mutations.\n"
"  --kernel K           bzImage, patched[-VER][-kasan], debian:V\n"
"  --kernel-tree DIR    a built kernel tree (as for usbrig)\n"
"  --modules DIR        modules from DIR/lib/modules/VERSION\n"
"  --duration D         fuzz for D seconds (`90`, `90s`, `10m`; default 300)\n"
"  --seed S             the PRNG's seed (default 1): same seed, same devices\n"
"  --out DIR            summary and findings (default: build/fuzz-kernel/)\n"
"  --jobs N             N guests in parallel (default 1)\n"
"  --devices N          stop after N devices, whatever the duration\n"
"  --plant              device 0 carries a known trigger (docs/fuzzing.md)\n"
"  --dry-run            draw the devices (devices.txt), boot no guest\n"
"  --boot-timeout S     passed to usbrig\n"
"  --cmdline ARGS       passed to usbrig (kernel parameters)\n"
"  --keep               keep the guests' work folders\n"
"  -v, --verbose\n"
"  -h, --help\n"
"Writes OUT/summary.md, OUT/summary.json, OUT/devices.txt, OUT/finding-N/.\n";

struct fz_opts {
	struct guest_opts guest;	/* the kernel, passed on to usbrig */
	const char *out;
	unsigned long long seed;
	unsigned long duration_s, max_devices;
	unsigned int jobs;
	bool plant, dry;
	int verbose;
};

struct fz_seed {
	char name[128];
	char *text;
};

struct fz_dev {
	long id;
	int seed;
	struct fz_mut m[FZ_MUT_MAX + 1];
	int n;
	bool planted;
};

struct fz {
	struct fz_opts o;
	char bin_dir[PATH_MAX], root[PATH_MAX], out[PATH_MAX - 64];
	struct guest_kernel k;
	char probe[FZ_PATH];
	struct census_aliases al;
	struct fz_seed *seeds;
	int n_seeds;
	struct repro *rp;	/* repro_read_gadget()'s workspace */
	FILE *devlog;
	int runs;
	double min_s;		/* spent confirming and minimising */
	struct fz_finding *f;
	int n_f;
};

static void ferr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ferr(const char *fmt, ...)
{
	va_list ap;

	fputs("usbrig fuzz: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- options ---- */

static int parse_duration(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	if (!strcmp(end, "m"))
		v *= 60;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	if (!v || v > 7 * 86400)
		return -ERANGE;
	*out = v;
	return 0;
}

enum { FO_DURATION = 256, FO_SEED, FO_OUT, FO_JOBS, FO_DEVICES, FO_PLANT,
	FO_DRY };

static const struct option long_opts[] = {
	GUEST_LONG_OPTIONS,
	{ "duration", required_argument, NULL, FO_DURATION },
	{ "seed", required_argument, NULL, FO_SEED },
	{ "out", required_argument, NULL, FO_OUT },
	{ "jobs", required_argument, NULL, FO_JOBS },
	{ "devices", required_argument, NULL, FO_DEVICES },
	{ "plant", no_argument, NULL, FO_PLANT },
	{ "dry-run", no_argument, NULL, FO_DRY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct fz_opts *o)
{
	unsigned long v;
	char *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", long_opts, NULL)) != -1) {
		if (guest_opt(c, optarg, &o->guest))
			continue;
		switch (c) {
		case FO_DURATION:
			if (parse_duration(optarg, &o->duration_s)) {
				ferr("--duration: seconds (or 10m, 1h) up to a week, not '%s'",
				     optarg);
				return -EINVAL;
			}
			break;
		case FO_SEED:
			errno = 0;
			o->seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || *optarg == '-') {
				ferr("--seed: a number, not '%s'", optarg);
				return -EINVAL;
			}
			break;
		case FO_OUT:
			o->out = optarg;
			break;
		case FO_JOBS:
		case FO_DEVICES:
			if (plan_parse_uint(optarg, c == FO_JOBS ? 64 : 1000000,
					    &v) || !v) {
				ferr("%s: a number from 1, not '%s'",
				     c == FO_JOBS ? "--jobs" : "--devices",
				     optarg);
				return -EINVAL;
			}
			if (c == FO_JOBS)
				o->jobs = (unsigned int)v;
			else
				o->max_devices = v;
			break;
		case FO_PLANT:
			o->plant = true;
			break;
		case FO_DRY:
			o->dry = true;
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
		ferr("unexpected argument '%s' (usbrig fuzz --help)",
		     argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* ---- the kernel, the seeds ---- */

static int resolve(struct fz *z)
{
	if (guest_kernel_resolve("usbrig fuzz", &z->o.guest, z->root, &z->k))
		return -EINVAL;
	return census_aliases_read(z->k.mods_root, z->k.kver, &z->al);
}

static int add_seed(struct fz *z, const char *name, const char *path)
{
	struct fz_seed *v = realloc(z->seeds, sizeof(*v) *
				    (size_t)(z->n_seeds + 1));

	if (!v)
		return -ENOMEM;
	z->seeds = v;
	v[z->n_seeds].text = fs_read_file(path, FZ_TEXT_MAX, NULL);
	if (!v[z->n_seeds].text)
		return -errno;
	snprintf(v[z->n_seeds].name, sizeof(v[0].name), "%s", name);
	z->n_seeds++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* modules a census seed should not come from: they wait in probe for an
 * answer the device never gives (docs/census.md, "Stuck in probe") */
static const char *const stuck_modules[] = { "port100", "pn533_usb", NULL };

static int make_seeds(struct fz *z)
{
	char dir[FZ_PATH], path[FZ_PATH * 2], name[128];
	char *names[256];
	int n = 0, ret = 0;
	struct fz_rng r;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/gadgets/examples", z->root);
	d = opendir(dir);
	if (!d) {
		ferr("%s: %s", dir, strerror(errno));
		return -errno;
	}
	while ((e = readdir(d)) && n < 256) {
		size_t l = strlen(e->d_name);

		if (l > 7 && !strcmp(e->d_name + l - 7, ".gadget"))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	for (int i = 0; i < n && !ret; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ret = names[i] ? add_seed(z, names[i], path) : -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	/* census devices: modules drawn by stream 0 of the seed */
	fz_rng_seed(&r, z->o.seed, 0);
	for (int i = 0, tries = 0; i < FZ_CENSUS_SEEDS && !ret &&
	     z->al.n_mod && tries < 20 * FZ_CENSUS_SEEDS; tries++) {
		const struct census_module *m =
			&z->al.m[fz_rng_below(&r, (unsigned int)z->al.n_mod)];
		struct census_dev dev;
		bool skip = m->builtin;
		FILE *f;

		for (int s = 0; stuck_modules[s]; s++)
			skip |= !strcmp(stuck_modules[s], m->name);
		for (int k = 0; k < CK_N && !skip; k++) {
			if (!m->has[k] ||
			    census_dev_of(&m->kind[k], CENSUS_PID_BASE + i,
					  &dev) ||
			    !census_alias_matches(&m->kind[k], &dev))
				continue;
			snprintf(name, sizeof(name), "census-%s-%s.gadget",
				 m->name, census_kind_names[k]);
			snprintf(path, sizeof(path), "%s/seeds/%s", z->out,
				 name);
			f = fopen(path, "w");
			if (!f)
				return -errno;
			ret = census_gadget_write(f, &dev, name);
			if (fclose(f) && !ret)
				ret = -EIO;
			if (!ret)
				ret = add_seed(z, name, path);
			i++;
			break;
		}
	}
	return ret;
}

/* ---- one case: a gadget and its scenario ---- */

/* quiet `usbrig-gadget --check`: 0 when the script loads */
static int check_gadget(struct fz *z, const char *path)
{
	char gbin[FZ_PATH], err[FZ_PATH];
	char *const argv[] = { gbin, "--check", (char *)path, NULL };

	snprintf(gbin, sizeof(gbin), "%s/usbrig-gadget", z->bin_dir);
	snprintf(err, sizeof(err), "%s/work/check.err", z->out);
	return fs_run_cmd(argv, err, err) ? -EINVAL : 0;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -EIO : 0;
}

/* the loadable modules the interfaces' modaliases name, as udev loads */
static int modules_of(struct fz *z, char mods[FZ_MODS_MAX][CENSUS_NAME_MAX])
{
	const struct repro_dev *d = &z->rp->dev;
	int n = 0;

	for (int i = 0; i < z->al.n; i++) {
		bool hit = false, dup = false;

		for (int j = 0; j < d->n_intf && !hit; j++)
			hit = !fnmatch(z->al.v[i].pattern, d->alias[j], 0);
		for (int j = 0; j < n && hit && !dup; j++)
			dup = !strcmp(mods[j], z->al.mod[i]);
		if (!hit || dup || n >= FZ_MODS_MAX ||
		    modlist_kind(z->k.mods_root, z->k.kver, z->al.mod[i]) != 1)
			continue;
		snprintf(mods[n++], CENSUS_NAME_MAX, "%s", z->al.mod[i]);
	}
	return n;
}

/*
 * DIR/NAME.gadget (the seed with the mutations use[] selects) and
 * DIR/NAME.scenario.  With expect, the scenario expects that report and
 * names its files relative to itself (a finding's); else by absolute
 * paths.  0, -EINVAL when the gadget does not load, -errno.
 */
static int write_case(struct fz *z, const char *dir, const char *name,
		      const struct fz_dev *dv, const bool *use,
		      const char *title, const char *expect)
{
	char gpath[FZ_PATH * 2], spath[FZ_PATH * 2], cmd[256];
	char mods[FZ_MODS_MAX][CENSUS_NAME_MAX], q[512];
	char *text;
	int ret, n_mods;
	FILE *f;

	ret = fz_mut_apply_all(z->seeds[dv->seed].text, dv->m, dv->n, use,
			       &text);
	if (ret)
		return ret;
	snprintf(gpath, sizeof(gpath), "%s/%s.gadget", dir, name);
	ret = write_file(gpath, text);
	free(text);
	if (ret)
		return ret;
	if (check_gadget(z, gpath))
		return -EINVAL;
	if (snprintf(z->rp->gadget, sizeof(z->rp->gadget), "%s", gpath) >=
	    (int)sizeof(z->rp->gadget))
		return -ENAMETOOLONG;
	memset(&z->rp->dev, 0, sizeof(z->rp->dev));
	if (repro_read_gadget(z->rp))
		return -EINVAL;
	n_mods = modules_of(z, mods);

	snprintf(spath, sizeof(spath), "%s/%s.scenario", dir, name);
	f = fopen(spath, "w");
	if (!f)
		return -errno;
	fprintf(f, "# %s (generated by usbrig fuzz)\nname %s\ntimeout 90\n",
		title, name);
	if (expect)
		fprintf(f, "file ./census-probe.sh %s\n", GUEST_PROBE);
	else
		fprintf(f, "file %s %s\n", z->probe, GUEST_PROBE);
	for (int i = 0; i < n_mods; i++)
		fprintf(f, "requires module %s\n", mods[i]);
	if (expect)
		fprintf(f, "gadget g ./%s.gadget\n", name);
	else
		fprintf(f, "gadget g %s\n", gpath);
	snprintf(cmd, sizeof(cmd), "sh %s begin fuzz", GUEST_PROBE);
	repro_put_run(f, cmd, 10);
	if (dv->planted && plan_quote(q, sizeof(q), FZ_PLANT_NO_RNG) >= 0)
		fprintf(f, "# the plant's report needs a guest without the default RNG (docs/fuzzing.md)\nrun %s within 10s\n",
			q);
	fputs("attach g no-wait within 30s\n", f);
	/* 3 s for a device that may never enumerate, not the census's 10 */
	snprintf(cmd, sizeof(cmd),
		 "CENSUS_WAIT_DEV=30 sh %s static 0 %04x %04x", GUEST_PROBE,
		 z->rp->dev.vid, z->rp->dev.pid);
	repro_put_run(f, cmd, 40);
	fputs("detach g within 20s\n", f);
	snprintf(cmd, sizeof(cmd), "sh %s unload", GUEST_PROBE);
	repro_put_run(f, cmd, 30);
	if (expect && plan_quote(q, sizeof(q), expect) >= 0)
		fprintf(f, "expect kernel-report %s\n", q);
	return fclose(f) ? -EIO : 0;
}

/* ---- a child run ---- */

/* Run the scenarios DIR/names[i].scenario; their reports into *crashes. */
static int run_cases(struct fz *z, const char *dir, char (*names)[64], int n,
		     struct fz_crash **crashes)
{
	char usbrig[FZ_PATH], ktap[FZ_PATH * 2], log[FZ_PATH * 2];
	char save[FZ_PATH * 2], jobs[16];
	char **argv = calloc((size_t)n + 8 + GUEST_CHILD_ARGS, sizeof(*argv));
	char (*paths)[FZ_PATH * 2] = calloc((size_t)n + 1, sizeof(*paths));
	int a = 0, ret;

	*crashes = NULL;
	if (!argv || !paths) {
		free(argv);
		free(paths);
		return -ENOMEM;
	}
	z->runs++;
	snprintf(usbrig, sizeof(usbrig), "%s/usbrig", z->bin_dir);
	snprintf(ktap, sizeof(ktap), "%s/run.ktap", dir);
	snprintf(log, sizeof(log), "%s/run.log", dir);
	snprintf(save, sizeof(save), "%s/saved", dir);
	snprintf(jobs, sizeof(jobs), "%u", z->o.jobs);
	argv[a++] = usbrig;
	guest_child_args(&z->o.guest, argv, &a);
	/* an oops ends the boot there; the next device gets a fresh one */
	argv[a++] = "--panic-on-oops";
	argv[a++] = "--jobs";
	argv[a++] = jobs;
	argv[a++] = "--save-dir";
	argv[a++] = save;
	for (int i = 0; i < n; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%s.scenario", dir,
			 names[i]);
		argv[a++] = paths[i];
	}
	argv[a] = NULL;
	ret = fs_run_cmd(argv, ktap, log);
	free(argv);
	free(paths);
	if (ret < 0)
		return ret;
	if (ret > 1) {	/* 1: a scenario failed, which fuzzing expects */
		ferr("usbrig could not run the scenarios of %s (exit %d): see %s",
		     dir, ret, log);
		return -EIO;
	}
	return fz_read_crashes(ktap, crashes);
}

static const struct fz_crash *crash_of(const struct fz_crash *v, int n,
				       const char *scenario)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].scenario, scenario))
			return &v[i];
	return NULL;
}

/* ---- devices ---- */

static void log_device(struct fz *z, const struct fz_dev *dv)
{
	char d[FZ_LINE_MAX + 64];

	fprintf(z->devlog, "device %ld seed %s%s\n", dv->id,
		z->seeds[dv->seed].name, dv->planted ? " (planted)" : "");
	for (int i = 0; i < dv->n; i++) {
		fz_mut_describe(&dv->m[i], d, sizeof(d));
		fprintf(z->devlog, "  M%d (%s) %s\n", i, dv->m[i].kind, d);
	}
	fflush(z->devlog);
}

/*
 * Device id: its seed and mutations from PRNG stream id + 1, each
 * mutation kept when the script still loads with it.  Writes the case
 * into dir; -EINVAL when not even the seed loads.
 */
static int make_device(struct fz *z, long id, const char *dir,
		       const char *name, struct fz_dev *dv)
{
	struct fz_mut drawn[FZ_MUT_MAX + 1];
	int counts[FZ_BLOCK_N], n, planted_at = -1;
	struct fz_rng r;
	char title[256];

	memset(dv, 0, sizeof(*dv));
	dv->id = id;
	fz_rng_seed(&r, z->o.seed, (uint64_t)id + 1);
	dv->planted = z->o.plant && id == 0;
	if (dv->planted) {
		/* vendor-bulk (pl2303 binds it) with harmless class
		 * descriptors, and the trigger among them */
		for (dv->seed = 0; dv->seed < z->n_seeds; dv->seed++)
			if (!strcmp(z->seeds[dv->seed].name,
				    "vendor-bulk.gadget"))
				break;
		if (dv->seed == z->n_seeds)
			return -ENOENT;
	} else {
		dv->seed = (int)fz_rng_below(&r, (unsigned int)z->n_seeds);
	}
	if (fz_count_blocks(z->seeds[dv->seed].text, counts))
		return -EINVAL;
	if (dv->planted) {
		n = 3;
		for (int i = 0; i < n; i++)
			fz_mut_class_desc(&r, counts, &drawn[i]);
		planted_at = (int)fz_rng_below(&r, (unsigned int)n + 1);
		memmove(&drawn[planted_at + 1], &drawn[planted_at],
			sizeof(drawn[0]) * (size_t)(n - planted_at));
		fz_mut_planted(&drawn[planted_at]);
		n++;
	} else {
		n = fz_mut_draw(&r, counts, drawn, FZ_MUT_MAX);
	}
	/* keep each mutation the parser takes on top of those before it */
	snprintf(title, sizeof(title), "fuzz device %ld", id);
	for (int i = 0; i < n; i++) {
		dv->m[dv->n++] = drawn[i];
		if (write_case(z, dir, name, dv, NULL, title, NULL))
			dv->n--;
	}
	snprintf(title, sizeof(title), "fuzz device %ld (seed %llu): %s, %d mutation(s)",
		 id, z->o.seed, z->seeds[dv->seed].name, dv->n);
	return write_case(z, dir, name, dv, NULL, title, NULL);
}

/* ---- minimising ---- */

struct dd_ctx {
	struct fz *z;
	const struct fz_dev *dv;
	char dir[FZ_PATH];
	const char *sig;
	int round;
};

/* the predicate: each candidate a scenario, one child run for them all */
static int dd_test(void *ctx, const bool *cands, int n_cands, int n,
		   bool *hit)
{
	struct dd_ctx *c = ctx;
	char dir[FZ_PATH * 2];
	char (*names)[64] = calloc((size_t)n_cands + 1, sizeof(*names));
	bool *ok = calloc((size_t)n_cands + 1, sizeof(*ok));
	struct fz_crash *cr = NULL;
	int m = 0, ret;

	if (!names || !ok) {
		free(names);
		free(ok);
		return -ENOMEM;
	}
	snprintf(dir, sizeof(dir), "%s/work/t%02d", c->dir, c->round++);
	ret = fs_mkdir_p(dir, 0755);
	for (int i = 0; i < n_cands && !ret; i++) {
		char nm[64], title[128];

		snprintf(nm, sizeof(nm), "fzc-%ld-%02d-%02d", c->dv->id,
			 c->round - 1, i);
		snprintf(title, sizeof(title), "fuzz candidate %d of round %d",
			 i, c->round - 1);
		ret = write_case(c->z, dir, nm, c->dv, cands + i * n, title,
				 NULL);
		if (ret == -EINVAL) {	/* the parser refuses it: no hit */
			ret = 0;
			continue;
		}
		ok[i] = !ret;
		snprintf(names[m++], 64, "%s", nm);
	}
	if (!ret && m)
		ret = run_cases(c->z, dir, names, m, &cr);
	for (int i = 0, k = 0; i < n_cands && ret >= 0; i++) {
		char nm[64];
		const struct fz_crash *x;

		if (!ok[i])
			continue;
		snprintf(nm, sizeof(nm), "fzc-%ld-%02d-%02d", c->dv->id,
			 c->round - 1, i);
		x = crash_of(cr, ret, nm);
		hit[i] = x && !strcmp(x->sig, c->sig);
		k++;
	}
	if (ret > 0)
		fz_crashes_free(cr, ret);
	free(names);
	free(ok);
	return ret < 0 ? ret : 0;
}

static int copy_probe(struct fz *z, const char *dir)
{
	char to[FZ_PATH * 2];

	snprintf(to, sizeof(to), "%s/census-probe.sh", dir);
	return repro_copy_file(z->probe, to);
}

/* A new signature: confirm it alone, minimise, write OUT/finding-N/. */
static int finding(struct fz *z, const struct fz_dev *dv,
		   const struct fz_crash *cr)
{
	struct fz_finding *nf = realloc(z->f, sizeof(*nf) *
					(size_t)(z->n_f + 1));
	struct dd_ctx c = { .z = z, .dv = dv, .sig = cr->sig };
	bool cand[4 * (FZ_MUT_MAX + 1)], hit[4] = { false };
	bool keep[FZ_MUT_MAX + 1];
	char path[FZ_PATH * 2], name[80], expect[FZ_SIG_MAX], title[512];
	char desc[FZ_LINE_MAX + 32], to[FZ_PATH * 2];
	struct fz_finding *x;
	int ret, k = 0;

	if (!nf)
		return -ENOMEM;
	z->f = nf;
	x = &z->f[z->n_f++];
	memset(x, 0, sizeof(*x));
	snprintf(x->sig, sizeof(x->sig), "%s", cr->sig);
	snprintf(x->first, sizeof(x->first), "%s", cr->first);
	snprintf(x->seed, sizeof(x->seed), "%s", z->seeds[dv->seed].name);
	snprintf(x->dir, sizeof(x->dir), "finding-%d", z->n_f);
	x->device = dv->id;
	x->n_mut = dv->n;
	x->planted = dv->planted;
	snprintf(c.dir, sizeof(c.dir), "%s/%s", z->out, x->dir);
	fs_rm_rf(c.dir);
	ret = fs_mkdir_p(c.dir, 0755);
	if (ret)
		return ret;
	fprintf(stderr, "usbrig fuzz: device %ld: %s\n", dv->id, cr->sig);
	snprintf(path, sizeof(path), "%s/kernel.log", c.dir);
	ret = write_file(path, cr->excerpt ? cr->excerpt : cr->first);
	if (!ret)
		ret = copy_probe(z, c.dir);
	snprintf(name, sizeof(name), "%s-original", x->dir);
	snprintf(title, sizeof(title), "fuzz %s, as found: device %ld (seed %llu), %s with %d mutation(s)",
		 x->dir, dv->id, z->o.seed, x->seed, dv->n);
	fz_sig_expect(cr->sig, cr->first, expect, sizeof(expect));
	if (!ret)
		ret = write_case(z, c.dir, name, dv, NULL, title, expect);
	if (ret)
		return ret;

	/* alone: all of it, none of it, and (ddmin's first round) each
	 * half, in one run */
	for (int i = 0; i < dv->n; i++) {
		cand[i] = true;
		cand[dv->n + i] = false;
		cand[2 * dv->n + i] = i < dv->n / 2;
		cand[3 * dv->n + i] = i >= dv->n / 2;
	}
	ret = dd_test(&c, cand, dv->n > 1 ? 4 : 2, dv->n, hit);
	if (ret)
		return ret;
	x->tests = 1;
	x->confirmed = hit[0] || hit[1];
	if (!x->confirmed) {
		fprintf(stderr, "usbrig fuzz: %s: not reproduced alone\n",
			x->dir);
		return 0;
	}
	for (int i = 0; i < dv->n; i++)
		keep[i] = !hit[1] && (hit[2] ? cand[2 * dv->n + i] :
				      hit[3] ? cand[3 * dv->n + i] : true);
	if (!hit[1] && dv->n > 1) {
		ret = fz_ddmin(dv->n, keep, dd_test, &c);
		if (ret < 0)
			return ret;
		x->tests += ret;
	}
	for (int i = 0; i < dv->n; i++) {
		if (!keep[i])
			continue;
		fz_mut_describe(&dv->m[i], desc, sizeof(desc));
		snprintf(x->muts[k++], sizeof(x->muts[0]), "M%d (%s) %s", i,
			 dv->m[i].kind, desc);
	}
	x->n_min = k;
	snprintf(name, sizeof(name), "%s-minimised", x->dir);
	snprintf(title, sizeof(title), "fuzz %s, minimised to %d of %d mutation(s): %s",
		 x->dir, k, dv->n, x->sig);
	ret = write_case(z, c.dir, name, dv, keep, title, expect);
	if (ret)
		return ret;
	/* the scenario to run: the minimised one */
	snprintf(path, sizeof(path), "%s/%s-minimised.scenario", c.dir,
		 x->dir);
	snprintf(to, sizeof(to), "%s/repro.scenario", c.dir);
	if (rename(path, to))
		return -errno;
	fprintf(stderr, "usbrig fuzz: %s: %d of %d mutation(s) left after %d guest run(s)\n",
		x->dir, k, dv->n, x->tests);
	return 0;
}

/* ---- main ---- */

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static bool known(const struct fz *z, const char *sig)
{
	for (int i = 0; i < z->n_f; i++)
		if (!strcmp(z->f[i].sig, sig))
			return true;
	return false;
}

/* one round: devices [first, first + n), one child run */
static int round_run(struct fz *z, long first, int n, int round)
{
	struct fz_dev *dv = calloc((size_t)n, sizeof(*dv));
	char (*names)[64] = calloc((size_t)n, sizeof(*names));
	char dir[FZ_PATH * 2];
	struct fz_crash *cr = NULL;
	struct timespec t0;
	int m = 0, ret;

	if (!dv || !names) {
		free(dv);
		free(names);
		return -ENOMEM;
	}
	snprintf(dir, sizeof(dir), "%s/work/round-%04d", z->out, round);
	fs_rm_rf(dir);
	ret = fs_mkdir_p(dir, 0755);
	for (int i = 0; i < n && !ret; i++) {
		char nm[64];

		snprintf(nm, sizeof(nm), "fz-%06ld", first + i);
		ret = make_device(z, first + i, dir, nm, &dv[m]);
		if (ret == -EINVAL) {
			ret = 0;
			continue;
		}
		if (!ret) {
			log_device(z, &dv[m]);
			snprintf(names[m++], 64, "%s", nm);
		}
	}
	if (!ret && m && !z->o.dry)
		ret = run_cases(z, dir, names, m, &cr);
	for (int i = 0, nc = ret; i < nc && ret >= 0; i++) {
		long id = strtol(cr[i].scenario + 3, NULL, 10);
		int j;

		for (j = 0; j < m && dv[j].id != id; j++)
			;
		if (j == m || known(z, cr[i].sig)) {
			if (j < m)
				fprintf(z->devlog, "device %ld: %s (known)\n",
					id, cr[i].sig);
			continue;
		}
		fprintf(z->devlog, "device %ld: %s\n", id, cr[i].sig);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (finding(z, &dv[j], &cr[i]) < 0)
			ferr("device %ld: minimising failed", id);
		z->min_s += since(&t0);
	}
	if (ret > 0)
		fz_crashes_free(cr, ret);
	free(dv);
	free(names);
	return ret < 0 ? ret : m;
}

static int setup(struct fz *z)
{
	char path[FZ_PATH * 2], self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (len <= 0)
		return -EINVAL;
	self[len] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(z->bin_dir, sizeof(z->bin_dir), "%s", slash ? self : ".");
	find_root(z->bin_dir, z->root, sizeof(z->root));
	if (z->o.out)
		snprintf(z->out, sizeof(z->out), "%s", z->o.out);
	else
		if (snprintf(z->out, sizeof(z->out), "%s/fuzz-kernel",
			     z->bin_dir) >= (int)sizeof(z->out))
			return -ENAMETOOLONG;
	if (resolve(z)) {
		ferr("%s: no modules.alias (--kernel, --modules?)", z->k.kver);
		return -ENOENT;
	}
	/* what an earlier run left: findings, work, seeds */
	fs_rm_rf(z->out);
	snprintf(path, sizeof(path), "%s/seeds", z->out);
	if (fs_mkdir_p(path, 0755))
		return -errno;
	snprintf(path, sizeof(path), "%s/work", z->out);
	if (fs_mkdir_p(path, 0755))
		return -errno;
	snprintf(z->probe, sizeof(z->probe), "%s/census-probe.sh", z->out);
	if (write_file(z->probe, census_probe_sh) || chmod(z->probe, 0755))
		return -EIO;
	z->rp = calloc(1, sizeof(*z->rp));
	if (!z->rp)
		return -ENOMEM;
	snprintf(z->rp->bin_dir, sizeof(z->rp->bin_dir), "%s", z->bin_dir);
	snprintf(z->rp->work, sizeof(z->rp->work), "%s/work", z->out);
	snprintf(path, sizeof(path), "%s/devices.txt", z->out);
	z->devlog = fopen(path, "w");
	if (!z->devlog)
		return -errno;
	return make_seeds(z);
}

int fuzz_main(int argc, char **argv)
{
	struct fz z = { .o = { .seed = 1, .duration_s = 300, .jobs = 1 } };
	struct fz_summary s = { 0 };
	struct timespec t0;
	double fuzz_s = 0;
	long devices = 0;
	int ret = FUZZ_EXIT_ERROR, round = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (parse_args(argc, argv, &z.o))
		return FUZZ_EXIT_ERROR;
	if (setup(&z)) {
		ferr("%s: cannot set up: %s", z.out, strerror(errno));
		goto out;
	}
	fprintf(stderr, "usbrig fuzz: seed %llu, %d seed gadget(s), %lu s, %u job(s); devices in %s/devices.txt\n",
		z.o.seed, z.n_seeds, z.o.duration_s, z.o.jobs, z.out);
	while (since(&t0) < (double)z.o.duration_s &&
	       (!z.o.max_devices || (unsigned long)devices < z.o.max_devices)) {
		int n = FZ_ROUND * (int)z.o.jobs, r;
		double min0 = z.min_s;
		struct timespec t1;

		/* the plant takes drbg out of its guest: a guest of its own */
		if (z.o.plant && !devices)
			n = 1;
		if (z.o.max_devices &&
		    (unsigned long)(devices + n) > z.o.max_devices)
			n = (int)(z.o.max_devices - (unsigned long)devices);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		r = round_run(&z, devices, n, round++);
		if (r < 0) {
			ferr("round %d: %s", round - 1, strerror(-r));
			goto out;
		}
		devices += n;
		/* the time spent fuzzing, not minimising */
		fuzz_s += since(&t1) - (z.min_s - min0);
		fprintf(stderr, "usbrig fuzz: %ld device(s), %d finding(s), %.0f s\n",
			devices, z.n_f, since(&t0));
	}
	s = (struct fz_summary){
		.seed = z.o.seed, .kernel = z.k.kver, .devices = devices,
		.runs = z.runs, .seconds = since(&t0), .fuzz_seconds = fuzz_s,
		.f = z.f, .n = z.n_f,
	};
	if (fz_write_summary(z.out, &s)) {
		ferr("%s: cannot write the summary", z.out);
		goto out;
	}
	printf("usbrig fuzz: %ld device(s) in %.0f s (%.1f per minute), %d finding(s); %s/summary.md\n",
	       devices, s.seconds, fuzz_s > 0 ? 60.0 * (double)devices / fuzz_s
	       : 0.0, z.n_f, z.out);
	ret = z.n_f ? FUZZ_EXIT_FINDINGS : FUZZ_EXIT_OK;
out:
	if (z.devlog)
		fclose(z.devlog);
	for (int i = 0; i < z.n_seeds; i++)
		free(z.seeds[i].text);
	free(z.seeds);
	free(z.rp);
	free(z.f);
	census_aliases_free(&z.al);
	return ret;
}
