// SPDX-License-Identifier: GPL-2.0
/*
 * run.c - orchestration: which scenarios go into which boot, and what a
 * boot that ends early means for them.
 *
 * The boot child speaks to the parent in lines:
 *	A <agent line>			a result line, verbatim
 *	C "what" "excerpt" "scenario"	vm_cb.crash ("" scenario: none)
 *	M begin|end NAME AT TO		vm_cb.mark
 *	E <enum vm_end>			vm_run() returned
 * A `save` step's file comes as `data` lines before its result
 * (harness/common/plan.h); the parent gathers them per job and writes the
 * file when the result's bytes= and crc32= agree with what came.
 *
 * A kernel report belongs to the scenario the console's markers say it
 * came in (console.h), whatever the agent's channel, which is ahead of
 * the console, has reached.  So a scenario's result is final only when
 * both are done with it: the agent's `end`, and the console's end marker
 * of it or a later marker (every report of it has come before), or the
 * end of the boot.  A report from before any marker (the boot's) fails
 * the boot's first scenario.
 */
#define _GNU_SOURCE
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/plan.h"
#include "../common/fsutil.h"
#include "balance.h"
#include "initramfs.h"
#include "modlist.h"
#include "server.h"		/* SERVER_MAX_GADGETS */
#include "vm.h"

#define RUN_LINE_MAX		(256 * 1024)	/* a crash excerpt may be long */
#define CONSOLE_EXCERPT_MAX	(12 * 1024)
#define CONSOLE_CONTEXT		4096	/* bytes before a failed scenario */
#define GRACE_SCENARIO_S	20	/* the agent enforces budgets first */
#define GRACE_BOOT_S		120	/* vm.c enforces boot_timeout first;
					 * this also covers the initramfs */
#define GRACE_IDLE_S		30
#define GRACE_SPOILT_S		10	/* for the console to catch up */

/*
 * A scenario of the running boot, as the agent and the console tell it.
 * Offsets are in the boot's console.log, -1 unknown.
 */
struct boot_sc {
	int idx;		/* report index */
	bool agent_done;	/* its `end` came (or the agent went on) */
	long agent_off;		/* console.log's size at its `begin` */
	long con_from;		/* its begin marker's line */
	long con_to;		/* after its end marker's line (or where the
				 * next scenario's begin marker is) */
};

/* The `data` lines of the running `save` step of a job. */
struct save_buf {
	int line;		/* its step's key (the plan's number), 0 none */
	unsigned char *buf;
	size_t len, cap;
	char bad[256];		/* why the chunks cannot be trusted, or "" */
};

struct job {
	int id;
	int *idx;		/* report indexes, in run order */
	int n;
	pid_t pid;		/* the boot child, 0 when none */
	int fd;			/* its pipe, -1 when none */
	int boot;		/* boots so far */
	char dir[PATH_MAX];	/* this boot's work dir */
	char *buf;		/* partial input */
	size_t len;
	int cur;		/* running scenario (report index) or -1 */
	int last;		/* last ended, still open, or -1 */
	int n_begun;		/* scenarios begun in this boot */
	int vm_end;		/* from the E line, -1 none */
	char killed[256];	/* why the host killed the boot, or "" */
	char *pending_crash_what;	/* crash before any begin */
	char *pending_crash_excerpt;
	long console_off;	/* console.log size at the running begin */
	struct boot_sc *bs;	/* this boot's scenarios, in plan order */
	int n_bs;
	int con_closed;		/* bs[0 .. con_closed - 1]: the console has
				 * told all of theirs */
	double t_spawn, t_line, t_begin;
	unsigned int idle_s;
	bool boot_failed;	/* some scenario of this boot failed */
	char spoilt[256];	/* the agent's `spoilt`: why the boot stops */
	int spoilt_idx;		/* the scenario it came after */
	double t_spoilt;
	struct save_buf save;
	int dead_boots;		/* boots in a row where nothing began */
};

/* A growing list of measurements (bench). */
struct samples {
	long *v;
	int n, cap;
};

static void samples_add(struct samples *sm, long x)
{
	if (sm->n == sm->cap) {
		int cap = sm->cap ? sm->cap * 2 : 64;
		long *n = realloc(sm->v, sizeof(*n) * (size_t)cap);

		if (!n)
			return;
		sm->v = n;
		sm->cap = cap;
	}
	sm->v[sm->n++] = x;
}

struct run {
	struct scenario *const *sc;
	int n;
	struct report *r;
	const struct run_opts *o;
	struct job *jobs;
	unsigned int n_jobs;
	char run_dir[PATH_MAX];
	struct timespec t0;
	/* bench */
	double first_begin;	/* of the first boot, since t0 */
	double busy;		/* sum over boots of last end - first begin */
	int n_ended;
	int n_boots_ended;
	struct samples lat;	/* new_id (bind) write -> bind, us */
	struct samples attach_lat;	/* attach -> bind, us */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double now_s(const struct run *ru)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - ru->t0.tv_sec) +
	       (double)(t.tv_nsec - ru->t0.tv_nsec) / 1e9;
}

/* ---- preflight -------------------------------------------------------- */

/* Is module `name` in the guest kernel's modules.dep or modules.builtin?
 * Negative when the lists cannot be read (then nothing is skipped for it). */
static int module_known(const struct run_opts *o, const char *name)
{
	return modlist_kind(o->modules_dir ? o->modules_dir : "", o->kver,
			    name);
}

/* Is option (CONFIG_X) =y or =m in the kernel's .config?  -1 when that
 * cannot be told (no config found: then nothing is skipped for it). */
static int config_set(const struct run_opts *o, const char *option)
{
	char line[1024];
	size_t n = strlen(option);
	FILE *f;
	int ret = 0;

	if (!o->kconfig)
		return -1;
	f = fopen(o->kconfig, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, option, n) && line[n] == '=' &&
		    (line[n + 1] == 'y' || line[n + 1] == 'm')) {
			ret = 1;
			break;
		}
	fclose(f);
	return ret;
}

static bool needs_patched(const struct scenario *s)
{
	int j;

	for (j = 0; j < s->n_reqs; j++)
		if (s->reqs[j].kind == SC_REQ_PATCHED)
			return true;
	return false;
}

/*
 * `requires kernel patched` is decided in the guest, where the agent sees
 * whether the kernel has the usb_core trace events (docs/harness-design.md,
 * "The patched kernel"); here it only words the reason when a module such
 * a scenario loads (usb_bindtest) is missing, which says the same earlier.
 */
void run_preflight(struct scenario *const *sc, int n, struct report *r,
		   const struct run_opts *o)
{
	int i, j;

	for (i = 0; i < n; i++) {
		const struct scenario *s = sc[i];
		struct rp_result *res = report_result(r, i);
		const char *why = needs_patched(s) ?
			"needs the patched kernel (--kernel patched): " : "";

		if (s->skip) {
			rp_skip(res, "%s", s->skip);
			continue;
		}
		for (j = 0; j < s->n_reqs && !res->skip; j++) {
			const struct sc_require *q = &s->reqs[j];

			if (q->kind == SC_REQ_MODULE &&
			    module_known(o, q->arg) == 0)
				rp_skip(res, "%smodule %s is not available "
					"for %s", why, q->arg, o->kver);
			if (q->kind == SC_REQ_TOOL &&
			    !initramfs_tool_path(q->arg))
				rp_skip(res, "%s:%d: the host has no %s to "
					"put in the guest (apt-get install %s)",
					s->file, q->line, q->arg,
					!strcmp(q->arg, "lsusb") ? "usbutils" :
					q->arg);
			if (q->kind == SC_REQ_GADGET_IN_GUEST &&
			    o->gadget_on_host)
				rp_skip(res, "%s:%d: its gadgets must be served in the guest (requires gadget in-guest), and --gadget-on-host serves them from the host",
					s->file, q->line);
			if (q->kind == SC_REQ_KERNEL_VERSION &&
			    !sc_kernel_matches(o->kver, q->arg))
				rp_skip(res, "%s:%d: needs kernel %s (this is %s)",
					s->file, q->line, q->arg, o->kver);
			if (q->kind == SC_REQ_CONFIG &&
			    config_set(o, q->arg) == 0)
				rp_skip(res, "%s:%d: %s is not set in %s "
					"(the config of %s)", s->file, q->line,
					q->arg, o->kconfig, o->kver);
		}
		for (j = 0; j < s->n_files && !res->skip; j++)
			if (s->files[j].missing)
				rp_skip(res, "%s:%d: %s is not built (the "
					"Makefile's check-vm builds it)",
					s->file, s->files[j].line,
					s->files[j].src);
		for (j = 0; j < s->n_steps && !res->skip; j++) {
			const struct sc_step *st = &s->steps[j];

			if (st->kind == PLAN_MODPROBE &&
			    module_known(o, st->path) == 0)
				rp_skip(res, "%s%s:%d: module %s is not "
					"available for %s", why, s->file,
					st->line, st->path, o->kver);
		}
	}
}

/* ---- the boot child ----------------------------------------------------- */

static int child_fd = -1;

static void child_write(const char *s, size_t len)
{
	while (len) {
		ssize_t w = write(child_fd, s, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;	/* the parent is gone: nothing to do */
		s += w;
		len -= (size_t)w;
	}
}

static void child_line_cb(void *ctx, const char *line)
{
	(void)ctx;
	/* one line per record: a stray newline would split it */
	if (strchr(line, '\n'))
		return;
	child_write("A ", 2);
	child_write(line, strlen(line));
	child_write("\n", 1);
}

static void child_quoted(const char *s)
{
	size_t need = plan_quote_len(s);
	char *q = malloc(need);

	if (!q)
		return;
	if (plan_quote(q, need, s) >= 0)
		child_write(q, strlen(q));
	free(q);
}

static void child_crash_cb(void *ctx, const char *what, const char *excerpt,
			   const char *scenario)
{
	(void)ctx;
	child_write("C ", 2);
	child_quoted(what ? what : "");
	child_write(" ", 1);
	child_quoted(excerpt ? excerpt : "");
	child_write(" ", 1);
	child_quoted(scenario ? scenario : "");
	child_write("\n", 1);
}

static void child_mark_cb(void *ctx, bool end, const char *scenario,
			  long long at, long long to)
{
	char buf[160];

	(void)ctx;
	/* a name the console shows may be anything: only a plain word
	 * goes on (a scenario's name is one) */
	if (!*scenario || scenario[strcspn(scenario, " \t\"\\")] ||
	    strlen(scenario) >= SC_NAME_MAX)
		return;
	snprintf(buf, sizeof(buf), "M %s %s %lld %lld\n",
		 end ? "end" : "begin", scenario, at, to);
	child_write(buf, strlen(buf));
}

static void __attribute__((noreturn))
boot_child(const struct vm_opts *vo, int fd)
{
	struct vm_cb cb = {
		.line = child_line_cb,
		.crash = child_crash_cb,
		.mark = child_mark_cb,
	};
	char end[32];
	enum vm_end e;

	setpgid(0, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/* stdout is the KTAP stream: nothing of the boot may reach it */
	dup2(STDERR_FILENO, STDOUT_FILENO);
	child_fd = fd;
	e = vm_run(vo, &cb);
	snprintf(end, sizeof(end), "E %d\n", (int)e);
	child_write(end, strlen(end));
	_exit(0);
}

/* ---- spawning a boot ------------------------------------------------------ */

int run_dir_path(char *dst, size_t size, const char *runs_dir,
		 const struct tm *tm, int pid)
{
	int n = snprintf(dst, size, "%s/%04d%02d%02d-%02d%02d%02d-%d",
			 runs_dir, tm->tm_year + 1900, tm->tm_mon + 1,
			 tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec,
			 pid);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int run_boot_dir_path(char *dst, size_t size, const char *run_dir, int job,
		      int boot)
{
	int n = snprintf(dst, size, "%s/job%d-boot%d", run_dir, job, boot);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static bool in_list(const char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* Scenarios of job j not done yet, in order (report indexes). */
static int remaining(struct run *ru, struct job *j, int *out)
{
	int i, k = 0;

	for (i = 0; i < j->n; i++)
		if (!report_result(ru->r, j->idx[i])->done)
			out[k++] = j->idx[i];
	return k;
}

static void fail_now(struct run *ru, struct job *j, int idx,
		     const char *why);

static int spawn_boot(struct run *ru, struct job *j)
{
	const struct run_opts *o = ru->o;
	const char **gadgets = NULL, **modules = NULL, **tools = NULL;
	const char **served = NULL;
	struct initramfs_file *files = NULL;
	size_t n_g = 0, n_m = 0, n_f = 0, n_t = 0, n_s = 0, cap_m = 1;
	char plan[PATH_MAX + 96];
	unsigned int max_t = 0;
	struct vm_opts vo;
	int *rem, n_rem, i, k, ret, fds[2];
	FILE *f;
	pid_t pid;

	rem = calloc((size_t)j->n + 1, sizeof(*rem));
	if (!rem)
		return -ENOMEM;
	n_rem = remaining(ru, j, rem);
	/* --gadget-on-host: one server serves the boot's gadgets, each a
	 * device of its own; what does not fit waits for the next boot */
	if (o->gadget_on_host) {
		int served_n = 0;

		for (i = 0; i < n_rem; i++) {
			served_n += ru->sc[rem[i]]->n_gadgets;
			if (i && served_n > SERVER_MAX_GADGETS)
				break;
		}
		n_rem = i;
	}
	if (!n_rem) {
		free(rem);
		return 0;
	}
	j->boot++;
	ret = run_boot_dir_path(j->dir, sizeof(j->dir), ru->run_dir, j->id,
				j->boot);
	if (!ret)
		ret = fs_mkdir_p(j->dir, 0755);
	if (ret)
		goto err_all;
	snprintf(plan, sizeof(plan), "%s/plan", j->dir);
	f = fopen(plan, "w");
	if (!f) {
		ret = -errno;
		goto err_all;
	}
	gadgets = calloc((size_t)n_rem * SC_GADGETS_MAX + 1, sizeof(*gadgets));
	served = calloc((size_t)n_rem * SC_GADGETS_MAX + 1, sizeof(*served));
	for (i = 0; i < n_rem; i++)
		cap_m += (size_t)ru->sc[rem[i]]->n_steps +
			 (size_t)ru->sc[rem[i]]->n_reqs;
	modules = calloc(cap_m, sizeof(*modules));
	files = calloc((size_t)n_rem * SC_FILES_MAX + 1, sizeof(*files));
	tools = calloc((size_t)n_rem * 4 + 1, sizeof(*tools));
	if (!gadgets || !served || !modules || !files || !tools) {
		fclose(f);
		ret = -ENOMEM;
		goto err_all;
	}
	/* the agent then fails, not skips, `requires kernel patched`
	 * scenarios on a kernel without the usb_core trace events */
	if (o->patched)
		fprintf(f, "kernel patched\n");
	for (i = 0; i < n_rem; i++) {
		const struct scenario *s = ru->sc[rem[i]];

		/* --gadget-on-host: each scenario's gadgets are devices of
		 * their own on the host's server, in plan order */
		ret = scenario_write_plan(f, s, o->gadget_on_host ?
					  (int)n_s + 1 : 0);
		if (ret) {
			fclose(f);
			goto err_all;
		}
		for (k = 0; o->gadget_on_host && k < s->n_gadgets; k++)
			served[n_s++] = s->gadgets[k].path;
		if (s->timeout_s > max_t)
			max_t = s->timeout_s;
		for (k = 0; k < s->n_gadgets; k++)
			if (!in_list(gadgets, n_g, s->gadgets[k].path))
				gadgets[n_g++] = s->gadgets[k].path;
		/* one guest path, one file: main.c's cross-check made sure
		 * that scenarios naming the same path mean the same file */
		for (k = 0; k < s->n_files; k++) {
			size_t m;

			for (m = 0; m < n_f; m++)
				if (!strcmp(files[m].dst, s->files[k].dst))
					break;
			if (m == n_f)
				files[n_f++] = (struct initramfs_file){
					.src = s->files[k].src,
					.dst = s->files[k].dst,
				};
		}
		for (k = 0; k < s->n_reqs; k++)
			if (s->reqs[k].kind == SC_REQ_TOOL &&
			    n_t < (size_t)n_rem * 4 &&
			    !in_list(tools, n_t, s->reqs[k].arg))
				tools[n_t++] = s->reqs[k].arg;
		for (k = 0; k < s->n_steps; k++)
			if (s->steps[k].kind == PLAN_MODPROBE &&
			    !in_list(modules, n_m, s->steps[k].path))
				modules[n_m++] = s->steps[k].path;
		/* a required module is in the guest even when only a
		 * command loads it (modprobe by modalias, as udev would) */
		for (k = 0; k < s->n_reqs; k++)
			if (s->reqs[k].kind == SC_REQ_MODULE &&
			    n_m < cap_m &&
			    !in_list(modules, n_m, s->reqs[k].arg))
				modules[n_m++] = s->reqs[k].arg;
	}
	if (fclose(f)) {
		ret = -EIO;
		goto err_all;
	}
	vo = (struct vm_opts){
		.kernel = o->kernel,
		.modules_dir = o->modules_dir,
		.plan_path = plan,
		.gadgets = gadgets,
		.n_gadgets = n_g,
		.served = served,
		.n_served = n_s,
		.files = files,
		.n_files = n_f,
		.modules = modules,
		.n_modules = n_m,
		.tools = tools,
		.n_tools = n_t,
		.bin_dir = o->bin_dir,
		.cache_dir = o->cache_dir,
		.work_dir = j->dir,
		.boot_timeout_s = o->boot_timeout_s,
		.idle_timeout_s = max_t + GRACE_IDLE_S,
		.gadget_on_host = o->gadget_on_host,
		.panic_on_oops = o->panic_on_oops,
		.cmdline = o->cmdline,
		.verbose = o->verbose,
	};
	if (pipe2(fds, O_CLOEXEC)) {
		ret = -errno;
		goto err_all;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		goto err_all;
	}
	if (pid == 0) {
		close(fds[0]);
		boot_child(&vo, fds[1]);
	}
	/* both sides, so the kill below never races the child's setpgid */
	setpgid(pid, pid);
	close(fds[1]);
	j->pid = pid;
	j->fd = fds[0];
	j->len = 0;
	j->cur = -1;
	j->last = -1;
	j->n_begun = 0;
	j->vm_end = -1;
	j->killed[0] = '\0';
	/* without it (no memory) results are final at the agent's `end` */
	free(j->bs);
	j->bs = calloc((size_t)n_rem, sizeof(*j->bs));
	j->n_bs = j->bs ? n_rem : 0;
	j->con_closed = 0;
	for (i = 0; i < j->n_bs; i++) {
		j->bs[i].idx = rem[i];
		j->bs[i].agent_off = -1;
		j->bs[i].con_from = -1;
		j->bs[i].con_to = -1;
	}
	j->t_spawn = now_s(ru);
	j->t_line = j->t_spawn;
	j->idle_s = max_t + GRACE_IDLE_S;
	j->boot_failed = false;
	j->spoilt[0] = '\0';
	if (o->verbose)
		fprintf(stderr, "usbrig: job %d boot %d: %d scenario(s), %s\n",
			j->id, j->boot, n_rem, j->dir);
	free(gadgets);
	free(served);
	free(modules);
	free(files);
	free(tools);
	free(rem);
	return 0;
err_all:
	/* nothing can run in this job: say why, for each scenario */
	for (i = 0; i < n_rem; i++) {
		char why[PATH_MAX + 128];

		snprintf(why, sizeof(why), "could not prepare the boot in %s: "
			 "%s", j->dir, strerror(-ret));
		fail_now(ru, j, rem[i], why);
	}
	free(gadgets);
	free(served);
	free(modules);
	free(files);
	free(tools);
	free(rem);
	return ret;
}

/* ---- results ---------------------------------------------------------------- */

static const char *console_path(const struct job *j, char *buf, size_t size)
{
	snprintf(buf, size, "%s/console.log", j->dir);
	return buf;
}

static long console_size(const struct job *j)
{
	char path[PATH_MAX + 96];
	struct stat st;

	if (stat(console_path(j, path, sizeof(path)), &st))
		return 0;
	return (long)st.st_size;
}

/* The console from offset `from` to `to` (-1: its end), at most the
 * last CONSOLE_EXCERPT_MAX bytes of that. */
static char *console_part(const struct job *j, long from, long to)
{
	char path[PATH_MAX + 96];
	long size = console_size(j);
	char *buf;
	FILE *f;
	size_t n;

	if (to < 0 || to > size)
		to = size;
	if (from < 0 || from > to)
		from = 0;
	if (to - from > CONSOLE_EXCERPT_MAX)
		from = to - CONSOLE_EXCERPT_MAX;
	buf = malloc((size_t)(to - from) + 1);
	if (!buf)
		return NULL;
	f = fopen(console_path(j, path, sizeof(path)), "r");
	if (!f || fseek(f, from, SEEK_SET)) {
		if (f)
			fclose(f);
		if (vm_console_excerpt(j->dir, buf, (size_t)(to - from) + 1) < 0)
			buf[0] = '\0';
		return buf;
	}
	n = fread(buf, 1, (size_t)(to - from), f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void attach_console(struct job *j, struct rp_result *res, long from,
			   long to)
{
	char path[PATH_MAX + 96];
	char *part = console_part(j, from, to);

	rp_console(res, console_path(j, path, sizeof(path)),
		   part ? part : "");
	free(part);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/*
 * Does the latency of this expect-bound measure a new_id (or bind) write?
 * Only when the last step before it that acts (not an expectation or a
 * read) is a write to a new_id or bind file: after an attach it measures
 * enumeration too, after a remove_id a probe that was already running.
 */
static bool write_latency(const struct scenario *s, int key)
{
	int i;

	for (i = 0; i < s->n_steps && s->steps[i].key != key; i++)
		;
	while (--i >= 0) {
		switch (s->steps[i].kind) {
		case PLAN_EXPECT_BOUND:
		case PLAN_EXPECT_UNBOUND:
		case PLAN_EXPECT_PROBE_ERROR:
		case PLAN_EXPECT_NODE:
		case PLAN_EXPECT_NO_NODE:
		case PLAN_EXPECT_KMSG:
		case PLAN_EXPECT_PROBE:
		case PLAN_EXPECT_DYNID:
		case PLAN_READ:
		case PLAN_SAY:
		case PLAN_EXPECT_REPORT:
			continue;
		default:
			return s->steps[i].kind == PLAN_WRITE &&
			       (ends_with(s->steps[i].path, "/new_id") ||
				ends_with(s->steps[i].path, "/bind"));
		}
	}
	return false;
}

/* Finish a result and keep the figures bench needs. */
static void finish(struct run *ru, struct job *j, int idx)
{
	struct rp_result *res = report_result(ru->r, idx);
	int i;

	if (res->done)
		return;
	report_done(ru->r, res, now_s(ru));
	if (res->res == RP_FAIL)
		j->boot_failed = true;
	for (i = 0; i < res->n_subs; i++) {
		const char *kv = res->subs[i].kv;
		const char *p = kv ? strstr(kv, "latency_us=") : NULL;
		const char *a = kv ? strstr(kv, "attach_us=") : NULL;

		if (res->subs[i].res != RP_PASS)
			continue;
		if (p && write_latency(res->sc, res->subs[i].key))
			samples_add(&ru->lat, strtol(p + 11, NULL, 10));
		/* the agent's: the bind came after an attach, no write since */
		if (a)
			samples_add(&ru->attach_lat, strtol(a + 10, NULL, 10));
	}
}

static void fail_now(struct run *ru, struct job *j, int idx,
		     const char *why)
{
	struct rp_result *res = report_result(ru->r, idx);

	if (res->done)
		return;
	rp_error(res, "%s", why);
	finish(ru, j, idx);
}

static int find_in_job(struct run *ru, struct job *j, const char *name)
{
	int i;

	for (i = 0; i < j->n; i++) {
		const struct rp_result *res = report_result(ru->r, j->idx[i]);

		if (!res->done && !res->begun &&
		    !strcmp(ru->sc[j->idx[i]]->name, name))
			return j->idx[i];
	}
	return -1;
}

/* ---- the console's word on a result ------------------------------------ */

static struct boot_sc *boot_sc_of(struct job *j, int idx)
{
	int p;

	for (p = 0; p < j->n_bs; p++)
		if (j->bs[p].idx == idx)
			return &j->bs[p];
	return NULL;
}

static struct boot_sc *boot_sc_named(struct run *ru, struct job *j,
				     const char *name)
{
	int p;

	for (p = 0; p < j->n_bs; p++)
		if (!strcmp(ru->sc[j->bs[p].idx]->name, name))
			return &j->bs[p];
	return NULL;
}

static void kill_boot(struct run *ru, struct job *j, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The agent said `spoilt` (its kernel oopsed): it runs nothing more, and
 * the guest is stopped here, not left to power off, which may hang on a
 * lock the oops left held; what is left goes to the next boot.  Once the
 * console has passed the end marker of the scenario it came after (every
 * report of that scenario is in, console.h), or GRACE_SPOILT_S later.
 */
static void stop_if_spoilt(struct run *ru, struct job *j)
{
	struct boot_sc *b;

	if (!j->spoilt[0] || !j->pid)
		return;
	b = boot_sc_of(j, j->spoilt_idx);
	if (b && (int)(b - j->bs) >= j->con_closed &&
	    now_s(ru) - j->t_spoilt < GRACE_SPOILT_S)
		return;
	kill_boot(ru, j, "%s", j->spoilt);
}

/* Its result is final: with its part of the console, from its begin
 * marker to its end (or to the next begin marker), or else from where
 * the console was at its `begin`. */
static void settle_one(struct run *ru, struct job *j, struct boot_sc *b)
{
	struct rp_result *res = report_result(ru->r, b->idx);

	if (res->done)
		return;
	if (b->con_from >= 0)
		attach_console(j, res, b->con_from, b->con_to);
	else
		attach_console(j, res, b->agent_off, -1);
	finish(ru, j, b->idx);
}

/* Make final what both the agent and the console are done with. */
static void settle(struct run *ru, struct job *j)
{
	int p;

	for (p = 0; p < j->con_closed && p < j->n_bs; p++)
		if (j->bs[p].agent_done)
			settle_one(ru, j, &j->bs[p]);
}

/* The agent is done with scenario idx (it may wait for the console). */
static void agent_done(struct run *ru, struct job *j, int idx)
{
	struct boot_sc *b = boot_sc_of(j, idx);

	if (!b) {	/* no record of the boot: as final as it gets */
		attach_console(j, report_result(ru->r, idx), j->console_off,
			       -1);
		finish(ru, j, idx);
		return;
	}
	b->agent_done = true;
	settle(ru, j);
}

/* M begin|end NAME AT TO: a marker in the console, after every report
 * before it (console.h). */
static void on_mark(struct run *ru, struct job *j, char *line)
{
	struct plan_tok t[4];
	struct boot_sc *b;
	long long at, to;
	int n = plan_split(line, t, 4, 0, NULL), p, closed;
	bool end;

	if (n != 4)
		return;
	end = !strcmp(t[0].s, "end");
	b = boot_sc_named(ru, j, t[1].s);
	at = strtoll(t[2].s, NULL, 10);
	to = strtoll(t[3].s, NULL, 10);
	if (!b || (!end && strcmp(t[0].s, "begin"))) {
		if (ru->o->verbose)
			fprintf(stderr, "usbrig: job %d: console marker of "
				"no scenario of this boot: %s %s\n", j->id,
				t[0].s, t[1].s);
		return;
	}
	p = (int)(b - j->bs);
	if (end) {
		b->con_to = (long)to;
		closed = p + 1;
	} else {
		b->con_from = (long)at;
		/* earlier ones whose end marker did not show end here too */
		for (int q = 0; q < p; q++)
			if (j->bs[q].con_to < 0)
				j->bs[q].con_to = (long)at;
		closed = p;
	}
	if (closed > j->con_closed)
		j->con_closed = closed;
	settle(ru, j);
	stop_if_spoilt(ru, j);
}

/* ---- save -------------------------------------------------------------- */

static void save_reset(struct save_buf *sv)
{
	free(sv->buf);
	memset(sv, 0, sizeof(*sv));
}

/* data LINE OFFSET BASE64 */
static void on_data(struct job *j, const struct plan_tok *t, int n)
{
	struct save_buf *sv = &j->save;
	unsigned long line, off;
	long k;

	if (n != 4 || plan_parse_uint(t[1].s, INT_MAX, &line) ||
	    plan_parse_uint(t[2].s, PLAN_SAVE_MAX, &off)) {
		snprintf(sv->bad, sizeof(sv->bad), "a malformed data line");
		return;
	}
	if (sv->line != (int)line) {
		save_reset(sv);
		sv->line = (int)line;
	}
	if (sv->bad[0])
		return;
	if (off != sv->len) {
		snprintf(sv->bad, sizeof(sv->bad), "data at offset %lu where "
			 "%zu was due (a line lost?)", off, sv->len);
		return;
	}
	if (sv->len + PLAN_DATA_CHUNK > sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 65536;
		unsigned char *nb;

		if (cap > PLAN_SAVE_MAX + PLAN_DATA_CHUNK)
			cap = PLAN_SAVE_MAX + PLAN_DATA_CHUNK;
		nb = sv->len + PLAN_DATA_CHUNK > cap ? NULL :
		     realloc(sv->buf, cap);
		if (!nb) {
			snprintf(sv->bad, sizeof(sv->bad), "more than %u MiB, "
				 "or out of memory", PLAN_SAVE_MAX >> 20);
			return;
		}
		sv->buf = nb;
		sv->cap = cap;
	}
	k = plan_b64_decode(sv->buf + sv->len, PLAN_DATA_CHUNK, t[3].s);
	if (k <= 0) {
		snprintf(sv->bad, sizeof(sv->bad), "bad base64 at offset %lu",
			 off);
		return;
	}
	sv->len += (size_t)k;
}

static int write_file(const char *path, const void *buf, size_t len)
{
	char tmp[PATH_MAX + 32], dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, ret = 0;

	if (slash && slash > path) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		ret = fs_mkdir_p(dir, 0755);
		if (ret)
			return ret;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = fs_write_all(fd, buf, len);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* A number after "key=" in the key=value words kv, or -1. */
static long long kv_num(const char *kv, const char *key, int base)
{
	const char *p = kv;
	size_t n = strlen(key);

	while ((p = strstr(p, key))) {
		if ((p == kv || p[-1] == ' ') && p[n] == '=')
			return strtoll(p + n + 1, NULL, base);
		p += n;
	}
	return -1;
}

/*
 * The result of a `save` step: write its file when the agent says ok and
 * the data agrees, else turn the result into a failure (saw filled).  A
 * failed or skipped save removes what an earlier run left at the path, so
 * that nothing stale passes for this run's file.
 */
static enum rp_res on_save_result(struct run *ru, struct job *j,
				  struct rp_result *res,
				  const struct sc_step *st, enum rp_res what,
				  const char *kv, char *saw, size_t size)
{
	struct save_buf *sv = &j->save;
	char path[PATH_MAX];
	long long bytes = kv_num(kv, "bytes", 10);
	long long crc = kv_num(kv, "crc32", 16);
	size_t len = sv->line == st->key ? sv->len : 0;
	int ret;

	if (scenario_save_path(path, sizeof(path), ru->o->save_dir, res->sc,
			       st) < 0) {
		snprintf(saw, size, "the host path is too long");
		what = RP_FAIL;
		goto out;
	}
	if (what != RP_PASS) {
		unlink(path);
		goto out;
	}
	what = RP_FAIL;
	if (sv->line == st->key && sv->bad[0]) {
		snprintf(saw, size, "the file's data lines: %s", sv->bad);
	} else if (bytes < 0 || crc < 0) {
		snprintf(saw, size, "the result has no bytes= and crc32=");
	} else if ((size_t)bytes != len) {
		snprintf(saw, size, "%lld bytes sent, %zu arrived", bytes, len);
	} else if ((unsigned int)crc != plan_crc32(0, sv->buf, len)) {
		snprintf(saw, size, "CRC mismatch: sent %08llx, arrived %08x",
			 crc, plan_crc32(0, sv->buf, len));
	} else {
		ret = write_file(path, sv->buf, len);
		if (ret)
			snprintf(saw, size, "cannot write %s: %s", path,
				 strerror(-ret));
		else
			what = RP_PASS;
	}
	if (what == RP_PASS) {
		char d[PATH_MAX + 64];

		snprintf(d, sizeof(d), "saved %zu bytes to %s", len, path);
		rp_diag(ru->r, res, d);
	} else {
		unlink(path);
	}
out:
	save_reset(sv);
	return what;
}

/* key=value words after the fixed fields, joined by spaces */
static void join_kv(const struct plan_tok *t, int from, int n, char *buf,
		    size_t size)
{
	size_t w = 0;
	int i;

	buf[0] = '\0';
	for (i = from; i < n && w + 1 < size; i++) {
		if (t[i].quoted || !strchr(t[i].s, '='))
			continue;
		w += (size_t)snprintf(buf + w, size - w, "%s%s", w ? " " : "",
				      t[i].s);
		if (w >= size)
			w = size - 1;
	}
}

static void on_agent_line(struct run *ru, struct job *j, char *line)
{
	struct plan_tok t[PLAN_TOKENS_MAX];
	struct rp_result *res;
	char copy[PLAN_LINE_MAX + 1];
	double now = now_s(ru);
	int n;

	if (ru->o->verbose > 1)
		fprintf(stderr, "usbrig: job %d: %s\n", j->id, line);
	snprintf(copy, sizeof(copy), "%s", line);
	n = plan_split(copy, t, PLAN_TOKENS_MAX, 0, NULL);
	if (n <= 0)
		goto unknown;
	res = j->cur >= 0 ? report_result(ru->r, j->cur) : NULL;
	if (!strcmp(t[0].s, "begin") && n >= 2) {
		int idx = find_in_job(ru, j, t[1].s);
		struct boot_sc *b;

		/* the last one ended waits for the console (settle) */
		j->last = -1;
		if (j->cur >= 0) {
			/* a begin without the previous end */
			int was = j->cur;

			rp_error(res, "the agent began %s before ending this "
				 "one", t[1].s);
			j->cur = -1;
			agent_done(ru, j, was);
		}
		if (idx < 0)
			goto unknown;
		j->cur = idx;
		j->n_begun++;
		save_reset(&j->save);
		j->console_off = console_size(j);
		b = boot_sc_of(j, idx);
		if (b)
			b->agent_off = j->console_off;
		j->t_begin = now;
		res = report_result(ru->r, idx);
		rp_begin(ru->r, res, now);
		if (ru->first_begin == 0)
			ru->first_begin = now;
		if (j->pending_crash_what) {
			rp_crash(res, j->pending_crash_what,
				 j->pending_crash_excerpt);
			free(j->pending_crash_what);
			free(j->pending_crash_excerpt);
			j->pending_crash_what = NULL;
			j->pending_crash_excerpt = NULL;
		}
		return;
	}
	if (!res && !strcmp(t[0].s, "spoilt") && n >= 2 && j->last >= 0) {
		snprintf(j->spoilt, sizeof(j->spoilt), "the kernel took taint "
			 "%s in %s; the scenarios after it run in a fresh "
			 "guest", t[1].s, ru->sc[j->last]->name);
		j->spoilt_idx = j->last;
		j->t_spoilt = now;
		stop_if_spoilt(ru, j);
		return;
	}
	if (!res) {
		/* diag between scenarios: the last one's cleanup (unless its
		 * result is out already) */
		if (!strcmp(t[0].s, "diag") && n >= 2 && j->last >= 0 &&
		    !report_result(ru->r, j->last)->done) {
			rp_diag(ru->r, report_result(ru->r, j->last), t[1].s);
			return;
		}
		/* before the first scenario: about the boot */
		if (!strcmp(t[0].s, "diag") && n >= 2) {
			if (ru->o->verbose)
				fprintf(stderr, "usbrig: job %d: agent: %s\n",
					j->id, t[1].s);
			return;
		}
		goto unknown;
	}
	if ((!strcmp(t[0].s, "ok") || !strcmp(t[0].s, "fail") ||
	     !strcmp(t[0].s, "skip")) && n >= 3) {
		unsigned long ln;
		char kv[512];
		enum rp_res what = t[0].s[0] == 'o' ? RP_PASS :
				   t[0].s[0] == 'f' ? RP_FAIL : RP_SKIP;
		const char *saw = NULL;

		const struct sc_step *st;
		char why[PATH_MAX + 512];

		if (plan_parse_uint(t[1].s, INT_MAX, &ln))
			goto unknown;
		if (what != RP_PASS && n >= 4)
			saw = t[3].s;
		join_kv(t, what == RP_PASS ? 3 : 4, n, kv, sizeof(kv));
		st = scenario_step_at(res->sc, (int)ln);
		if (st && st->kind == PLAN_SAVE) {
			enum rp_res w = on_save_result(ru, j, res, st, what,
						       kv, why, sizeof(why));

			if (w != what)
				saw = why;
			what = w;
		}
		rp_step(ru->r, res, (int)ln, what, t[2].s, saw, kv, now);
		return;
	}
	if (!strcmp(t[0].s, "diag") && n >= 2) {
		rp_diag(ru->r, res, t[1].s);
		return;
	}
	if (!strcmp(t[0].s, "data")) {
		on_data(j, t, n);
		return;
	}
	if (!strcmp(t[0].s, "end") && n >= 2 &&
	    !strcmp(t[1].s, res->sc->name)) {
		res->ended = true;
		res->t_end = now;
		ru->n_ended++;
		j->last = j->cur;
		j->cur = -1;
		agent_done(ru, j, j->last);
		return;
	}
unknown:
	if (ru->o->verbose)
		fprintf(stderr, "usbrig: job %d: unexpected line: %s\n", j->id,
			line);
}

/* Did the report kill the agent?  From its first line "what" on in the
 * excerpt: a die() of the kernel's (its header "Oops: 0000 [#1]",
 * "general protection fault, ...: 0000 [#1]", "invalid opcode: 0000
 * [#1]": the task is killed; a WARNING or a KASAN report goes on) in a
 * task named usbrig-agent. */
static bool agent_killed(const char *what, const char *excerpt)
{
	const char *p = strstr(excerpt, what);

	return p && strstr(p, " [#") && strstr(p, " Comm: usbrig-agent ");
}

/*
 * C "what" "excerpt" "scenario": a report fails the scenario the console
 * puts it in (unless it expects it: rp_crash).  One from before any
 * marker ("" scenario: the boot's) fails the boot's first scenario.
 * Without a record of the boot, or with a name of no scenario of it, the
 * running scenario, else the one ended last, else the next one to begin.
 */
static void on_crash(struct run *ru, struct job *j, char *line)
{
	struct plan_tok t[3];
	int n = plan_split(line, t, 3, 0, NULL);
	struct boot_sc *b = n < 3 ? NULL : t[2].s[0] ?
			    boot_sc_named(ru, j, t[2].s) :
			    j->n_bs ? &j->bs[0] : NULL;
	int idx = b ? b->idx : j->cur >= 0 ? j->cur : j->last;
	struct rp_result *res = idx >= 0 ? report_result(ru->r, idx) : NULL;

	if (n < 2)
		return;
	if (res && res->done) {
		/* cannot be: its result waited for the console */
		fprintf(stderr, "usbrig: job %d: kernel crash report after "
			"the result of %s was out: %s\n", j->id, res->sc->name,
			t[0].s);
		return;
	}
	if (!res) {
		fprintf(stderr, "usbrig: job %d: kernel crash report before "
			"the first scenario: %s\n", j->id, t[0].s);
		if (!j->pending_crash_what) {
			j->pending_crash_what = strdup(t[0].s);
			j->pending_crash_excerpt = strdup(t[1].s);
		}
		return;
	}
	fprintf(stderr, "usbrig: job %d: kernel crash report in %s%s: %s\n",
		j->id, res->sc->name,
		rp_crash(res, t[0].s, t[1].s) ? " (expected)" : "", t[0].s);
	/* an oops in the agent's own system call (a step's write) killed
	 * it: nothing more comes from this boot, no use waiting for the
	 * scenario's timeout */
	if (res->begun && !res->ended && agent_killed(t[0].s, t[1].s))
		kill_boot(ru, j, "the kernel's report killed usbrig-agent, "
			  "in a step's system call");
}

static void on_line(struct run *ru, struct job *j, char *line)
{
	j->t_line = now_s(ru);
	if (!strncmp(line, "A ", 2))
		on_agent_line(ru, j, line + 2);
	else if (!strncmp(line, "C ", 2))
		on_crash(ru, j, line + 2);
	else if (!strncmp(line, "M ", 2))
		on_mark(ru, j, line + 2);
	else if (!strncmp(line, "E ", 2))
		j->vm_end = atoi(line + 2);
}

static const char *vm_end_text(int e)
{
	switch (e) {
	case VM_END_POWEROFF:
		return "the guest powered off";
	case VM_END_TIMEOUT:
		return "the guest hung: boot or idle timeout, QEMU killed";
	case VM_END_CRASH:
		return "the guest crashed";
	case VM_END_ERROR:
		return "the guest could not be built or started";
	}
	return "the boot process died";
}

/* The boot child is gone: settle what it left open, then boot again. */
static void end_boot(struct run *ru, struct job *j, int status)
{
	int *rem = calloc((size_t)j->n + 1, sizeof(*rem));
	char why[1024];
	int i, n_rem;

	if (j->killed[0])
		snprintf(why, sizeof(why), "%s", j->killed);
	else if (j->vm_end < 0)
		snprintf(why, sizeof(why), "the boot process ended without a "
			 "verdict (wait status 0x%x)", status);
	else
		snprintf(why, sizeof(why), "%s", vm_end_text(j->vm_end));
	/* the console has told all it will: what the agent ended is final */
	for (i = 0; i < j->n_bs; i++)
		if (j->bs[i].agent_done)
			settle_one(ru, j, &j->bs[i]);
	j->last = -1;
	if (j->cur >= 0) {
		struct rp_result *res = report_result(ru->r, j->cur);

		rp_error(res, "%s while this scenario ran", why);
		/* with what led up to it: a hang may print nothing itself */
		attach_console(j, res, j->console_off - CONSOLE_CONTEXT, -1);
		finish(ru, j, j->cur);
		j->cur = -1;
	}
	n_rem = rem ? remaining(ru, j, rem) : 0;
	j->dead_boots = j->n_begun ? 0 : j->dead_boots + 1;
	/*
	 * What is left gets another boot, unless booting again would surely
	 * do the same: the guest cannot be built or started (all fail), or
	 * no scenario began (the guest never reached the agent, or the agent
	 * did not run them): the first one carries the console and fails,
	 * and after two such boots in a row all do.  Every boot thus settles
	 * at least one scenario.
	 */
	if (n_rem && (j->vm_end == VM_END_ERROR || !j->n_begun)) {
		bool all = j->vm_end == VM_END_ERROR || j->dead_boots >= 2;

		for (i = 0; i < n_rem && (all || i == 0); i++) {
			struct rp_result *res = report_result(ru->r, rem[i]);

			rp_error(res, "did not run: %s before it began", why);
			attach_console(j, res, 0, -1);
			if (j->pending_crash_what)
				rp_crash(res, j->pending_crash_what,
					 j->pending_crash_excerpt);
			finish(ru, j, rem[i]);
		}
	}
	free(j->pending_crash_what);
	free(j->pending_crash_excerpt);
	j->pending_crash_what = NULL;
	j->pending_crash_excerpt = NULL;
	if (!j->boot_failed && !ru->o->keep) {
		char plan[PATH_MAX + 96];

		/* keep the dir of a boot with a failure: reports cite it */
		snprintf(plan, sizeof(plan), "%s", j->dir);
		fs_rm_rf(plan);
	}
	free(rem);
	save_reset(&j->save);
	j->pid = 0;
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	if (!interrupted)
		spawn_boot(ru, j);
}

static void kill_boot(struct run *ru, struct job *j, const char *fmt, ...)
{
	va_list ap;

	if (j->killed[0] || !j->pid)
		return;
	va_start(ap, fmt);
	vsnprintf(j->killed, sizeof(j->killed), fmt, ap);
	va_end(ap);
	fprintf(stderr, "usbrig: job %d: %s: killing the boot\n", j->id,
		j->killed);
	/* the child's own process group: vm_run() and the QEMU it started */
	kill(-j->pid, SIGKILL);
	kill(j->pid, SIGKILL);
	(void)ru;
}

static void check_deadlines(struct run *ru, struct job *j)
{
	double now = now_s(ru);

	if (!j->pid)
		return;
	if (j->cur >= 0) {
		const struct scenario *s = ru->sc[j->cur];

		if (now - j->t_begin > s->timeout_s + GRACE_SCENARIO_S)
			kill_boot(ru, j, "scenario %s ran over its timeout of "
				  "%us", s->name, s->timeout_s);
	} else if (!j->n_begun &&
		   now - j->t_spawn > ru->o->boot_timeout_s + GRACE_BOOT_S) {
		kill_boot(ru, j, "no scenario began within %us of the boot",
			  ru->o->boot_timeout_s + GRACE_BOOT_S);
	}
	if (j->n_begun && now - j->t_line > j->idle_s + GRACE_IDLE_S)
		kill_boot(ru, j, "the guest was silent for %.0fs",
			  now - j->t_line);
	stop_if_spoilt(ru, j);
}

/* Read what the child wrote; split lines.  false at EOF. */
static bool read_job(struct run *ru, struct job *j)
{
	char tmp[65536];
	ssize_t r = read(j->fd, tmp, sizeof(tmp));
	size_t i, start = 0;
	char *nb;

	if (r < 0 && errno == EINTR)
		return true;
	if (r <= 0)
		return false;
	nb = realloc(j->buf, j->len + (size_t)r + 1);
	if (!nb)
		return false;
	j->buf = nb;
	memcpy(j->buf + j->len, tmp, (size_t)r);
	j->len += (size_t)r;
	for (i = 0; i < j->len; i++) {
		if (j->buf[i] != '\n')
			continue;
		j->buf[i] = '\0';
		on_line(ru, j, j->buf + start);
		start = i + 1;
	}
	memmove(j->buf, j->buf + start, j->len - start);
	j->len -= start;
	if (j->len > RUN_LINE_MAX)	/* a line with no end: drop it */
		j->len = 0;
	return true;
}

/* ---- bench ------------------------------------------------------------------ */

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* One `bench: NAME latency median ... p95 ... max ... (n=N)` line. */
static void bench_latency(struct report *r, const char *name,
			  struct samples *sm)
{
	if (!sm->n) {
		report_note(r, "bench: %s latency: no results", name);
		return;
	}
	qsort(sm->v, (size_t)sm->n, sizeof(*sm->v), cmp_long);
	report_note(r, "bench: %s latency median %.2fms p95 %.2fms max %.2fms (n=%d)",
		    name, sm->v[(sm->n - 1) / 2] / 1000.0,
		    sm->v[(sm->n * 95 + 99) / 100 - 1] / 1000.0,
		    sm->v[sm->n - 1] / 1000.0, sm->n);
}

static void bench_report(struct run *ru, double wall)
{
	struct report *r = ru->r;
	struct samples ms = { 0 };
	double busy = 0;
	int i, n_timed = 0, slowest = -1;

	for (i = 0; i < ru->n; i++) {
		const struct rp_result *res = report_result(r, i);
		double t;

		if (!res->begun || !res->ended)
			continue;
		t = res->t_end - res->t_begin;
		busy += t;
		n_timed++;
		samples_add(&ms, (long)(t * 1000 + 0.5));
		if (slowest < 0 || t > report_result(r, slowest)->t_end -
		    report_result(r, slowest)->t_begin)
			slowest = i;
	}
	report_note(r, "bench: wall %.1fs for %d scenario(s), %u job(s)",
		    wall, ru->n, ru->n_jobs);
	if (ru->first_begin > 0)
		report_note(r, "bench: start to first scenario %.1fs "
			    "(initramfs + boot + agent)", ru->first_begin);
	if (n_timed)
		report_note(r, "bench: per scenario %.2fs (mean of begin..end "
			    "over %d)", busy / n_timed, n_timed);
	if (ms.n) {
		qsort(ms.v, (size_t)ms.n, sizeof(*ms.v), cmp_long);
		report_note(r, "bench: per scenario median %.2fs max %.2fs (%s)",
			    ms.v[(ms.n - 1) / 2] / 1000.0,
			    ms.v[ms.n - 1] / 1000.0, ru->sc[slowest]->name);
	}
	free(ms.v);
	if (n_timed > 1 && ru->n_jobs == 1)
		report_note(r, "bench: marginal per scenario %.2fs ((wall - "
			    "start to first) / %d)",
			    (wall - ru->first_begin) / n_timed, n_timed);
	bench_latency(r, "new_id->bind", &ru->lat);
	bench_latency(r, "attach->bind", &ru->attach_lat);
}

/* ---- the loop -------------------------------------------------------------- */

/*
 * Each job's list of the scenarios not done yet, in the sorted order:
 * round robin, or by the times of --balance (balance.h).  0 or -ENOMEM.
 */
static int assign_jobs(struct run *ru)
{
	int *todo = calloc((size_t)ru->n + 1, sizeof(*todo));
	int *job = calloc((size_t)ru->n + 1, sizeof(*job));
	double *est = calloc((size_t)ru->n + 1, sizeof(*est));
	int k, n = 0, ret = 0;

	if (!todo || !job || !est) {
		ret = -ENOMEM;
		goto out;
	}
	for (k = 0; k < ru->n; k++) {
		if (report_result(ru->r, k)->done)
			continue;
		est[n] = ru->o->est_s ? ru->o->est_s[k] : 0;
		todo[n++] = k;
	}
	balance_assign(est, n, ru->n_jobs, job);
	for (k = 0; k < n; k++) {
		struct job *j = &ru->jobs[job[k]];

		if (j->idx)
			j->idx[j->n++] = todo[k];
	}
out:
	free(todo);
	free(job);
	free(est);
	return ret;
}

int run_suite(struct scenario *const *sc, int n, struct report *r,
	      const struct run_opts *o)
{
	struct run ru = { .sc = sc, .n = n, .r = r, .o = o };
	struct sigaction sa = { .sa_handler = on_signal };
	struct pollfd *pfd;
	struct job **pj;
	unsigned int i;
	int k, todo = 0, ret = 0;
	time_t tt = time(NULL);
	struct tm tm;

	clock_gettime(CLOCK_MONOTONIC, &ru.t0);
	localtime_r(&tt, &tm);
	ret = run_dir_path(ru.run_dir, sizeof(ru.run_dir), o->runs_dir, &tm,
			   (int)getpid());
	if (ret)	/* then no boot dir fits either: each boot says so */
		fprintf(stderr, "usbrig: %s: a run's folder there would be "
			"%s\n", o->runs_dir, strerror(-ret));
	ru.n_jobs = o->jobs ? o->jobs : 1;
	for (k = 0; k < n; k++)
		if (!report_result(r, k)->skip && !sc[k]->skip)
			todo++;
		else
			report_done(r, report_result(r, k), 0);
	if ((int)ru.n_jobs > todo)
		ru.n_jobs = todo ? (unsigned int)todo : 1;
	ru.jobs = calloc(ru.n_jobs, sizeof(*ru.jobs));
	pfd = calloc(ru.n_jobs, sizeof(*pfd));
	pj = calloc(ru.n_jobs, sizeof(*pj));
	if (!ru.jobs || !pfd || !pj) {
		free(ru.jobs);
		free(pfd);
		free(pj);
		return -ENOMEM;
	}
	for (i = 0; i < ru.n_jobs; i++) {
		ru.jobs[i].id = (int)i + 1;
		ru.jobs[i].fd = -1;
		ru.jobs[i].cur = ru.jobs[i].last = -1;
		ru.jobs[i].idx = calloc((size_t)n + 1, sizeof(int));
	}
	if (assign_jobs(&ru)) {
		for (i = 0; i < ru.n_jobs; i++)
			free(ru.jobs[i].idx);
		free(ru.jobs);
		free(pfd);
		free(pj);
		return -ENOMEM;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (todo && !ret) {
		ret = fs_mkdir_p(ru.run_dir, 0755);
		if (ret)
			fprintf(stderr, "usbrig: %s: %s\n", ru.run_dir,
				strerror(-ret));
	}
	ret = 0;
	for (i = 0; i < ru.n_jobs; i++)
		spawn_boot(&ru, &ru.jobs[i]);
	for (;;) {
		nfds_t np = 0, q;

		for (i = 0; i < ru.n_jobs; i++) {
			if (ru.jobs[i].fd < 0)
				continue;
			pfd[np].fd = ru.jobs[i].fd;
			pfd[np].events = POLLIN;
			pj[np++] = &ru.jobs[i];
		}
		if (!np)
			break;
		if (interrupted) {
			for (q = 0; q < np; q++)
				kill_boot(&ru, pj[q], "interrupted");
		}
		if (poll(pfd, np, 1000) < 0 && errno != EINTR)
			break;
		for (q = 0; q < np; q++) {
			struct job *j = pj[q];
			int status = 0;

			if (pfd[q].revents && !read_job(&ru, j)) {
				waitpid(j->pid, &status, 0);
				end_boot(&ru, j, status);
				continue;
			}
			check_deadlines(&ru, j);
		}
	}
	if (interrupted) {
		ret = -EINTR;
		for (k = 0; k < n; k++)
			if (!report_result(r, k)->done) {
				rp_error(report_result(r, k), "interrupted");
				report_done(r, report_result(r, k), now_s(&ru));
			}
	}
	if (o->bench)
		bench_report(&ru, now_s(&ru));
	if (!o->keep)
		rmdir(ru.run_dir);	/* only when every boot was removed */
	for (i = 0; i < ru.n_jobs; i++) {
		free(ru.jobs[i].idx);
		free(ru.jobs[i].buf);
		free(ru.jobs[i].bs);
	}
	free(ru.jobs);
	free(pfd);
	free(pj);
	free(ru.lat.v);
	free(ru.attach_lat.v);
	return ret;
}
