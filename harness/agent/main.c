// SPDX-License-Identifier: GPL-2.0
/*
 * usbrig-agent - the guest side of usbrig: run the plan, report results.
 *
 *	usbrig-agent [PLAN]		(default /usbrig/plan)
 *	usbrig-agent --version		prints "usbrig VERSION"
 *
 * Results go to the virtio-serial port named usbrig.0 (the /dev/vportNpM
 * whose /sys/class/virtio-ports/vportNpM/name says so), or to stdout when
 * there is none.  Line formats: docs/harness-design.md.  The agent's own
 * trouble goes to stderr, which /init leaves on the console.
 *
 * Kernel command line: usbrig.remote=ADDR:PORT makes the agent attach
 * gadgets served at ADDR:PORT (--gadget-on-host) instead of starting
 * usbrig-gadget in the guest.
 */
#define _GNU_SOURCE
#include "agent.h"
#include "fsutil.h"
#include "plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define PLAN_MAX	(4 * 1024 * 1024)
#define PORT_NAME	"usbrig.0"
#define PORT_WAIT_MS	5000
#define DESC_MAX	600	/* of a result's description */

static int out_fd = 1;
/* the plan's `kernel patched`: the host booted the kernel of kernel-patch/ */
static bool host_says_patched;

/*
 * A kernel that oopsed is not one to test on: the oops may have died
 * holding locks, and a tainted kernel turns detectors off (the hung-task
 * check returns early once TAINT_DIE is set, kernel/hung_task.c).  So the
 * scenario in which the kernel took one of these taints is the boot's
 * last: the agent ends the plan there, and the host runs the rest in a
 * fresh guest.  Bits of /proc/sys/kernel/tainted (kernel/panic.c):
 * B (5) a bad page, which KASAN's reports also set; D (7) an oops or BUG.
 * W (9), a WARN, leaves the kernel usable and does not end the boot.
 */
#define TAINT_LAST_SCENARIO	((1ul << 5) | (1ul << 7))

static unsigned long taint_at_start;	/* the kernel's when the agent began */
static bool kernel_spoilt;		/* the plan ends after this scenario */

static unsigned long kernel_taint(void)
{
	char buf[32];

	if (fs_read_small("/proc/sys/kernel/tainted", buf, sizeof(buf)) < 0)
		return 0;
	return strtoul(buf, NULL, 10);
}

/* The taints of TAINT_LAST_SCENARIO the kernel took since the agent began,
 * as letters ("D", "BD"), or "" for none. */
static const char *new_taints(char *buf, size_t size)
{
	unsigned long now = kernel_taint() & ~taint_at_start;
	size_t w = 0;

	if ((now & (1ul << 5)) && w + 1 < size)
		buf[w++] = 'B';
	if ((now & (1ul << 7)) && w + 1 < size)
		buf[w++] = 'D';
	buf[w] = '\0';
	return buf;
}

void strfmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

void ag_log(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "usbrig-agent: %s\n", buf);
}

static void out_raw(const char *line)
{
	size_t len = strlen(line);
	char buf[PLAN_LINE_MAX + 1];

	if (len > PLAN_LINE_MAX - 1)
		len = PLAN_LINE_MAX - 1;
	memcpy(buf, line, len);
	buf[len++] = '\n';
	for (size_t off = 0; off < len;) {
		ssize_t n = write(out_fd, buf + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ag_log("results port write: %s", strerror(errno));
			return;
		}
		off += (size_t)n;
	}
}

void out_line(const char *fmt, ...)
{
	char buf[PLAN_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out_raw(buf);
}

/* Quote s into dst, cutting s (keeping its head) until it fits. */
static void quote_fit(char *dst, size_t size, const char *s)
{
	char tmp[AG_TEXT_MAX];
	size_t len;

	if (plan_quote(dst, size, s) >= 0)
		return;
	strfmt(tmp, sizeof(tmp), "%s", s);
	len = strlen(tmp);
	while (len > 0) {
		len = len > 64 ? len - 64 : 0;
		strfmt(tmp + len, sizeof(tmp) - len, "...");
		if (plan_quote(dst, size, tmp) >= 0)
			return;
	}
	strfmt(dst, size, "\"\"");
}

void out_result(const char *kind, int line, const char *desc,
		const char *saw, const char *extra)
{
	char qd[DESC_MAX * 4 + 8], qs[PLAN_LINE_MAX];
	size_t room;

	quote_fit(qd, sizeof(qd) > DESC_MAX ? DESC_MAX : sizeof(qd), desc);
	if (!saw) {
		out_line("%s %d %s%s%s", kind, line, qd, extra ? " " : "",
			 extra ? extra : "");
		return;
	}
	room = PLAN_LINE_MAX - strlen(qd) - 32;
	quote_fit(qs, room, saw);
	out_line("%s %d %s %s", kind, line, qd, qs);
}

void out_diag(const char *fmt, ...)
{
	char buf[AG_TEXT_MAX], q[PLAN_LINE_MAX - 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	quote_fit(q, sizeof(q), buf);
	out_line("diag %s", q);
}

/* The /dev node of the virtio port named PORT_NAME, waiting for the
 * port to show up (virtio_console adds ports from a work item). */
static int open_port(void)
{
	uint64_t deadline = now_us() + PORT_WAIT_MS * 1000ull;

	for (;;) {
		DIR *d = opendir("/sys/class/virtio-ports");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char path[300], name[64] = "";
			int fd;
			ssize_t n;

			if (e->d_name[0] == '.')
				continue;
			strfmt(path, sizeof(path),
				 "/sys/class/virtio-ports/%s/name", e->d_name);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			n = read(fd, name, sizeof(name) - 1);
			close(fd);
			if (n <= 0)
				continue;
			name[n] = '\0';
			name[strcspn(name, "\n")] = '\0';
			if (strcmp(name, PORT_NAME))
				continue;
			strfmt(path, sizeof(path), "/dev/%s", e->d_name);
			fd = open(path, O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				closedir(d);
				return fd;
			}
		}
		if (d)
			closedir(d);
		if (now_us() >= deadline)
			return -1;
		ev_pump(10);
	}
}

static void cmdline_opts(void)
{
	static char remote[64];
	char buf[4096];
	char *tok, *save = NULL;
	ssize_t n;
	int fd = open("/proc/cmdline", O_RDONLY);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save)) {
		if (!strncmp(tok, "usbrig.remote=", 14)) {
			char *colon;

			strfmt(remote, sizeof(remote), "%s", tok + 14);
			colon = strrchr(remote, ':');
			if (colon) {
				unsigned long port = 0;

				*colon = '\0';
				if (plan_parse_uint(colon + 1, 65535, &port) ||
				    !port)
					ag_log("usbrig.remote: bad port '%s'",
					       colon + 1);
				remote_port = (int)port;
			}
			remote_host = remote;
		}
	}
}

static void write_sys(const char *path, const char *val)
{
	int ret = fs_write_small(path, val, 0);

	if (ret)
		ag_log("%s: %s", path, strerror(-ret));
}

/*
 * A console marker (plan.h) into /dev/kmsg, opened for each: the kernel
 * rate-limits the writes of one open file (10 in 5 s), and a marker must
 * not be the one it drops.
 */
static void kmsg_mark(const char *what, const char *name)
{
	char buf[AG_NAME_MAX + 64];

	strfmt(buf, sizeof(buf), PLAN_MARK_LEVEL "%s%s", what, name);
	write_sys("/dev/kmsg", buf);
}

/* ---- the plan ---- */

/* Split a copy of line (plan_split decodes in place, and a scenario's
 * lines are read more than once). */
static int split_copy(const char *line, char *copy, struct plan_tok *t)
{
	strfmt(copy, PLAN_LINE_MAX + 1, "%s", line);
	return plan_split(copy, t, PLAN_TOKENS_MAX, 0, NULL);
}

/* The LINE of a step line (for skip/fail results), 0 when unreadable. */
static int step_line_no(const struct plan_tok *t, int n)
{
	unsigned long v;

	if (n >= 2 && !plan_parse_uint(t[1].s, 1000000, &v))
		return (int)v;
	return 0;
}

static const char *server_exit(const struct scenario_ctx *s, char *buf,
			       size_t size)
{
	char log[1024] = "";
	int fd = open(s->server_log, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, log, sizeof(log) - 1) : 0;

	if (fd >= 0)
		close(fd);
	log[n > 0 ? n : 0] = '\0';
	strfmt(buf, size, "the gadget server died (%s %d): %s",
		 WIFEXITED(s->server_status) ? "status" : "signal",
		 WIFEXITED(s->server_status) ? WEXITSTATUS(s->server_status) :
		 WTERMSIG(s->server_status), tail_lines(log, 4));
	return buf;
}

/* A busid as the host's server gives them: "1-N", N a USB address. */
static bool busid_ok(const char *s)
{
	unsigned long n;

	return !strncmp(s, "1-", 2) && !plan_parse_uint(s + 2, 127, &n) &&
	       n > 0;
}

/*
 * Are the steps of lines[from .. to) teardown only (detach, rmmod)?  After
 * an rmmod that kept a built-in driver, such a scenario has checked all it
 * checks; anything else may depend on the module being gone.
 */
static bool teardown_after(char **lines, int from, int to)
{
	struct plan_tok t[PLAN_TOKENS_MAX];
	char copy[PLAN_LINE_MAX + 1];
	int i, n;

	for (i = from; i < to; i++) {
		n = split_copy(lines[i], copy, t);
		if (n < 3 || strcmp(t[0].s, "step"))
			continue;
		if (strcmp(t[2].s, "detach") && strcmp(t[2].s, "rmmod"))
			return false;
	}
	return true;
}

/*
 * Run one scenario: lines[0] is its `scenario` line, lines[n-1] its `end`.
 * Steps after a failure are skipped; cleanup always runs.  `require
 * patched` skips every step, with the reason, on a kernel without the
 * usb_core trace events, or fails the scenario when the host booted the
 * patched kernel (then the events missing is a bug, not a reason).
 */
static void run_scenario(char **lines, int nl)
{
	struct plan_tok t[PLAN_TOKENS_MAX];
	char copy[PLAN_LINE_MAX + 1];
	struct scenario_ctx *s;
	char saw[AG_TEXT_MAX], skip_why[AG_TEXT_MAX] = "";
	char bad_busid[AG_ID_MAX + 32] = "", tainted[8];
	bool failed = false, need_patched = false, oopsed = false;
	unsigned long to = 60000;
	int n, i, rc;

	s = calloc(1, sizeof(*s));
	if (!s) {
		ag_log("out of memory");
		return;
	}
	n = split_copy(lines[0], copy, t);
	strfmt(s->name, sizeof(s->name), "%s", n >= 2 ? t[1].s : "unnamed");
	if (n >= 4)
		plan_parse_uint(t[3].s, 86400000, &to);
	/* before the mark below, which forgets it: no expectation sees it */
	kmsg_mark(PLAN_MARK_BEGIN, s->name);
	ev_mark_scenario();
	s->start_us = now_us();
	s->deadline_us = s->start_us + to * 1000ull;
	modules_snapshot(&s->mods_before, &s->n_mods_before);
	cur = s;
	out_line("begin %s", s->name);

	for (i = 1; i < nl - 1; i++) {
		n = split_copy(lines[i], copy, t);
		/* `gadget ID "SCRIPT" [BUSID]`: BUSID when the host serves
		 * it, else our own server's 1-1, 1-2, ... */
		if ((n == 3 || n == 4) && !strcmp(t[0].s, "gadget") &&
		    s->n_gadgets < AG_GADGETS_MAX) {
			struct gadget *g = &s->g[s->n_gadgets];

			strfmt(g->id, sizeof(g->id), "%s", t[1].s);
			strfmt(g->script, sizeof(g->script), "%s", t[2].s);
			s->n_gadgets++;
			if (n == 4) {
				strfmt(g->busid, sizeof(g->busid), "%s",
				       t[3].s);
				if (!busid_ok(t[3].s))
					strfmt(bad_busid, sizeof(bad_busid),
					       "gadget %s: bad busid '%.16s'",
					       g->id, t[3].s);
			} else
				strfmt(g->busid, sizeof(g->busid), "1-%d",
				       s->n_gadgets);
			g->port = -1;
		} else if (n == 2 && !strcmp(t[0].s, "require") &&
			   !strcmp(t[1].s, "patched")) {
			need_patched = true;
		}
	}

	saw[0] = '\0';
	if (bad_busid[0]) {
		strfmt(saw, sizeof(saw), "the plan: %s", bad_busid);
		failed = true;
	}
	if (!failed && need_patched && !tr.on) {
		if (host_says_patched) {
			strfmt(saw, sizeof(saw), "the host booted the patched kernel (--kernel patched), but %s",
			       tr.why);
			failed = true;
		} else {
			strfmt(skip_why, sizeof(skip_why), "needs the patched kernel (--kernel patched): %s",
			       tr.why);
		}
	}
	if (!failed && !skip_why[0] && s->n_gadgets &&
	    !strcmp(remote_host, "127.0.0.1") &&
	    usb_server_start(s, saw, sizeof(saw)))
		failed = true;

	for (i = 1; i < nl - 1; i++) {
		int line;

		n = split_copy(lines[i], copy, t);
		if (n < 1 || strcmp(t[0].s, "step"))
			continue;
		line = step_line_no(t, n);
		if (n < 3) {
			out_result("fail", line, "step", "bad plan line", NULL);
			failed = true;
			continue;
		}
		if (failed && saw[0]) {
			/* the scenario broke before this step could run */
			out_result("fail", line, t[2].s, saw, NULL);
			saw[0] = '\0';
			continue;
		}
		if (failed) {
			out_result("skip", line, t[2].s,
				   "an earlier step failed", NULL);
			continue;
		}
		if (skip_why[0]) {
			out_result("skip", line, t[2].s, skip_why, NULL);
			continue;
		}
		if (now_us() >= s->deadline_us) {
			out_result("fail", line, t[2].s, "scenario timeout",
				   NULL);
			failed = true;
			continue;
		}
		if (s->server_dead) {
			out_result("fail", line, t[2].s,
				   server_exit(s, saw, sizeof(saw)), NULL);
			saw[0] = '\0';
			failed = true;
			continue;
		}
		rc = step_run(line, t[2].s, t + 3, n - 3);
		if (rc < 0)
			failed = true;
		else if (rc == STEP_KEPT && !teardown_after(lines, i + 1, nl - 1))
			strfmt(skip_why, sizeof(skip_why), "%s, and the steps "
			       "after it may need it removed (line %d)",
			       PLAN_WHY_BUILTIN, line);
		if (!oopsed && strchr(new_taints(tainted, sizeof(tainted)),
				      'D')) {
			/* a task died in the kernel, most likely holding a
			 * device's lock: a step that needs the device, the
			 * cleanup's detach, would wait for ever */
			oopsed = true;
			strfmt(skip_why, sizeof(skip_why), "the kernel oopsed "
			       "(taint D): nothing more runs on it");
		}
	}
	ev_pump(0);
	if (!failed && s->server_dead) {
		/* died after its last step: the scenario still fails, on
		 * LINE 0 (no step of its own) */
		out_result("fail", 0, "gadget server",
			   server_exit(s, saw, sizeof(saw)), NULL);
	}
	if (oopsed)
		out_diag("cleanup skipped: the kernel oopsed, and the guest is stopped after this scenario");
	else
		usb_cleanup(s);
	if (new_taints(tainted, sizeof(tainted))[0]) {
		out_diag("the kernel is tainted %s (%s) since this scenario began: the scenarios after it run in a fresh guest",
			 tainted, strchr(tainted, 'D') ? "an oops" :
			 "a bad page or a KASAN report");
		kernel_spoilt = true;
	}
	/* every kernel line of the scenario, cleanup included, is before it
	 * in the console */
	kmsg_mark(PLAN_MARK_END, s->name);
	out_line("end %s", s->name);
	modules_free(s->mods_before, s->n_mods_before);
	cur = NULL;
	free(s);
}

static void run_plan(char *plan)
{
	char **lines = NULL;
	int nl = 0, cap = 0;
	char *p = plan, *nlc;
	char tainted[8];
	bool in = false;

	for (; *p; p = nlc ? nlc + 1 : p + strlen(p)) {
		char *line = p;
		char copy[PLAN_LINE_MAX + 1];
		struct plan_tok t[PLAN_TOKENS_MAX];
		int n;

		nlc = strchr(p, '\n');
		if (nlc)
			*nlc = '\0';
		if (strlen(line) > PLAN_LINE_MAX) {
			out_diag("plan line too long, ignored");
			continue;
		}
		strcpy(copy, line);
		n = plan_split(copy, t, PLAN_TOKENS_MAX, 0, NULL);
		if (n <= 0)
			continue;
		if (!in && n == 2 && !strcmp(t[0].s, "kernel") &&
		    !strcmp(t[1].s, "patched")) {
			host_says_patched = true;
			continue;
		}
		if (!strcmp(t[0].s, "scenario")) {
			if (in)
				out_diag("plan: scenario without end before %s",
					 n > 1 ? t[1].s : "?");
			in = true;
			nl = 0;
		} else if (!in) {
			out_diag("plan: line outside a scenario: %.200s", line);
			continue;
		}
		if (nl == cap) {
			char **nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(lines, (size_t)cap * sizeof(*lines));
			if (!nv) {
				ag_log("out of memory");
				break;
			}
			lines = nv;
		}
		lines[nl++] = line;	/* into plan: lives as long as we do */
		if (!strcmp(t[0].s, "end")) {
			run_scenario(lines, nl);
			in = false;
			nl = 0;
			if (kernel_spoilt) {
				/* after the scenario's `end`: the host stops
				 * the guest, whose poweroff may hang on a lock
				 * the oops left held */
				out_line("spoilt %s",
					 new_taints(tainted, sizeof(tainted)));
				break;
			}
		}
	}
	if (in)
		out_diag("plan: last scenario has no end line");
	free(lines);
}

int main(int argc, char **argv)
{
	const char *plan_path = argc > 1 ? argv[1] : "/usbrig/plan";
	struct utsname u;
	char devcpu[64];
	char *plan;
	uint64_t t0 = now_us();

	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("usbrig-agent %s\n", USBRIG_VERSION);
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	write_sys("/sys/module/kernel/parameters/initcall_debug", "1");
	taint_at_start = kernel_taint();
	ev_init();
	trace_init();
	cmdline_opts();
	devcpu_init();
	devcpu_describe(devcpu, sizeof(devcpu));
	out_fd = open_port();
	if (out_fd < 0) {
		ag_log("no virtio port named %s: results go to stdout",
		       PORT_NAME);
		out_fd = 1;
	}
	uname(&u);
	out_diag("agent up: kernel %s, %.3f s since boot, port wait %llu ms, gadgets at %s, device side on %s, usb_core trace events %s%s",
		 u.release, (double)t0 / 1e6,
		 (unsigned long long)(now_us() - t0) / 1000, remote_host,
		 devcpu,
		 tr.on ? "on" : "off: ", tr.on ? "" : tr.why);

	plan = fs_read_file(plan_path, PLAN_MAX, NULL);
	if (!plan) {
		out_diag("cannot read the plan %s: %s", plan_path,
			 strerror(errno));
	} else {
		run_plan(plan);
		free(plan);
	}
	out_diag("agent done after %.3f s", (double)(now_us() - t0) / 1e6);
	sync();
	if (out_fd != 1)
		close(out_fd);
	return 0;
}
