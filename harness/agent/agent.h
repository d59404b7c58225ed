/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent.h - the guest agent: runs the plan's steps, reports results.
 *
 * Single-threaded.  Every wait in the agent is a loop of "check the
 * condition, then ev_pump() for a short while", and ev_pump() keeps the
 * uevent socket and /dev/kmsg drained into in-memory lists stamped with
 * CLOCK_MONOTONIC, so no event is lost between steps and conditions can
 * look back to the start of the scenario.
 */
#ifndef USBRIG_AGENT_H
#define USBRIG_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AG_GADGETS_MAX	120	/* vhci: 8 controllers x 15 ports */
#define AG_ID_MAX	32
#define AG_NAME_MAX	64
#define AG_TEXT_MAX	4096	/* a "what the agent saw" text */
#define AG_OUT_MAX	65536	/* captured command output kept */

/* snprintf that may cut: every caller wants a bounded, maybe truncated,
 * NUL-terminated text, never the length. */
void strfmt(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- time ---- */
uint64_t now_us(void);		/* CLOCK_MONOTONIC */

/* ---- results (main.c) ---- */
void out_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `kind LINE "desc" ["saw"] [extra]`: kind ok|fail|skip; saw may be NULL */
void out_result(const char *kind, int line, const char *desc,
		const char *saw, const char *extra);
void out_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* console only (the agent's own trouble), prefixed "usbrig-agent: " */
void ag_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- events.c: uevents and kernel log ---- */
struct uevent {
	uint64_t t_us;		/* when it was received (monotonic) */
	uint64_t seqnum;
	char action[16];
	char name[64];		/* last component of DEVPATH */
	char subsystem[32];
	char devtype[32];
	char driver[64];
	char devpath[256];
};

struct kmsg_rec {
	uint64_t t_us;		/* the kernel's timestamp (monotonic) */
	uint64_t seq;
	char *text;		/* the message, continuation lines joined */
};

struct events {
	int uev_fd;
	int kmsg_fd;
	struct uevent *uev;
	size_t n_uev, cap_uev;
	struct kmsg_rec *kmsg;
	size_t n_kmsg, cap_kmsg;
	size_t uev_mark, kmsg_mark;	/* first entries of this scenario */
	unsigned long uev_dropped;
	uint64_t uev_seqnum;	/* the highest SEQNUM received, ever */
};

extern struct events ev;

int ev_init(void);
/* Drain both sources, waiting at most timeout_ms for the first record. */
void ev_pump(int timeout_ms);
/* Forget entries older than this scenario; later lookups start here. */
void ev_mark_scenario(void);
/* Describe the uevents of this scenario about `name` (for fail texts). */
void ev_describe(const char *name, char *buf, size_t size);
/* The last kmsg lines of this scenario that contain `needle` (or all). */
void ev_kmsg_tail(const char *needle, size_t max_lines, char *buf,
		  size_t size);

/* ---- trace.c: the usb_core trace events (patched kernel) ---- */
enum tr_event { TR_PROBE, TR_UNBIND, TR_DYNID_ADD, TR_DYNID_REMOVE };

struct tr_rec {
	uint64_t t_us;		/* the event's time (trace clock mono) */
	enum tr_event event;
	char intf[32];		/* probe, unbind: "3-1:1.0" */
	char driver[64];
	char id[8];		/* probe: dynamic, static or none */
	unsigned int match_flags, vid, pid, cls;	/* of that id */
	int ret;		/* probe: what the driver core got back */
	long long usecs;	/* probe: how long it took */
	unsigned long long driver_info;	/* dynid */
	char *text;		/* "usb_probe_interface: intf=..." */
};

struct trace {
	bool on;		/* the four events enabled, trace_pipe open */
	int fd;			/* trace_pipe, -1 when off */
	char why[256];		/* when off: why */
	struct tr_rec *rec;	/* this scenario's records, in order */
	size_t n, cap;
	unsigned long dropped;
	char part[1024];	/* a line not complete yet */
	size_t part_len;
};

extern struct trace tr;

/* Mount tracefs if needed, enable the usb_core events.  0 (tr.on), or -1
 * with tr.why filled: the kernel has no such events (stock kernel). */
int trace_init(void);
/* Read what trace_pipe has (ev_pump calls it). */
void trace_drain(void);
/* Forget records older than this scenario (ev_mark_scenario calls it). */
void trace_mark_scenario(void);
/* The last records about intf and/or driver (NULL: any), for fail texts. */
void trace_describe(const char *intf, const char *driver, char *buf,
		    size_t size);
const char *tr_event_name(enum tr_event e);

/* ---- settle.c: the kernel is done matching an interface ---- */
/*
 * true when nothing the kernel still has to do can bind interface intf
 * of usb_device dev (settle.c says why): why gets the evidence
 * ("seqnum=N"); false when that cannot be shown yet, why gets what is
 * missing.  Reads sysfs; pump events before calling it again.
 */
bool settle_done(const char *dev, const char *intf, char *why, size_t size);

/* ---- proc.c: child processes ---- */
struct proc_res {
	int status;		/* exit status, 128+sig, or -1: timeout */
	char *out;		/* stdout+stderr (tail kept), NUL-terminated */
	size_t len;
};

/* Run argv (argv[0] looked up in PATH) with stdout+stderr captured,
 * killing its process group at deadline_us.  Events are pumped while
 * waiting.  Returns 0 (see res) or -errno (could not start). */
int proc_run(char *const argv[], uint64_t deadline_us, struct proc_res *res);
void proc_res_free(struct proc_res *res);
/* The last max_lines lines of text, for fail messages. */
const char *tail_lines(const char *text, size_t max_lines);

/* ---- devcpu.c: the device's own vCPU ---- */
/* Pick it: the last online CPU, or -1 (one CPU: nothing is pinned); the
 * agent, and what it starts, then keeps to the other CPUs. */
int devcpu_init(void);
/* Pin pid (0: the caller) to it at SCHED_FIFO.  0 or -errno. */
int devcpu_claim(pid_t pid);
/* Claim every vhci_rx / vhci_tx thread.  0 or the first -errno. */
int devcpu_claim_vhci(void);
void devcpu_describe(char *buf, size_t size);

/* ---- usb.c: gadget server, vhci ports, devices ---- */
struct gadget {
	char id[AG_ID_MAX];
	char script[512];
	char busid[16];		/* remote busid, "1-N" */
	int port;		/* vhci port, -1 when not attached */
	char dev[32];		/* local name ("3-1"), "" until enumerated */
};

struct scenario_ctx {
	char name[AG_NAME_MAX];
	uint64_t start_us, deadline_us;
	struct gadget g[AG_GADGETS_MAX];
	int n_gadgets;
	pid_t server;		/* usbrig-gadget, 0 when none */
	int server_port;	/* TCP port it listens on */
	int server_status;	/* its wait status once it died */
	bool server_dead;
	char server_log[64];
	uint64_t last_write_us;	/* 0: no write yet */
	uint64_t last_attach_us;	/* 0: no attach yet */
	char **mods_before;	/* /proc/modules at scenario start */
	size_t n_mods_before;
};

extern struct scenario_ctx *cur;	/* the running scenario or NULL */
extern const char *remote_host;		/* where gadgets are served */
extern int remote_port;			/* its TCP port, 0: the server's */

int usb_server_start(struct scenario_ctx *s, char *saw, size_t size);
/* Reap the server without blocking; true if it died (sets server_dead). */
bool usb_server_check(struct scenario_ctx *s);
void usb_cleanup(struct scenario_ctx *s);
/* mode: enum plan_attach_mode (plan_words.h) */
int usb_attach(struct scenario_ctx *s, struct gadget *g, int mode,
	       uint64_t deadline_us, char *saw, size_t size);
int usb_detach(struct scenario_ctx *s, struct gadget *g,
	       uint64_t deadline_us, char *saw, size_t size);
/* g's device name ("3-1") once it has an address on its vhci port, ""
 * before (an `attach no-wait` leaves it to the steps that need it). */
const char *usb_gadget_dev(struct gadget *g);
/* "3-1:1.0" for interface intf of the active configuration. */
int usb_intf_name(struct gadget *g, int intf, char *buf, size_t size);
/* The driver the sysfs link of device/interface `name` points to ("" none). */
void usb_driver_of(const char *name, char *buf, size_t size);
void modules_snapshot(char ***names, size_t *n);
void modules_free(char **names, size_t n);

/* ---- verify.c ---- */
/* Compare the device's descriptors with `usbrig-gadget --dump`. 0 or -1
 * with saw filled. */
int verify_descriptors(const struct gadget *g, uint64_t deadline_us,
		       char *saw, size_t size);

/* ---- steps.c ---- */
struct plan_tok;
/* Run one step (KIND and the n words after it); prints exactly one
 * result line.  Returns 0 on ok, -1 when the step failed (the caller
 * skips the rest of the scenario), STEP_KEPT when it was an rmmod of a
 * built-in driver, skipped (PLAN_WHY_BUILTIN). */
#define STEP_KEPT	1
int step_run(int line, const char *kind, const struct plan_tok *a, int n);

#endif /* USBRIG_AGENT_H */
