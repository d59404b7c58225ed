/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scenario.h - scenario files: parser, model and plan writer.
 *
 * docs/scenario-format.md is the reference of the language and
 * docs/harness-design.md ("Step kinds") the plan the agent runs.  The
 * parser does no I/O of its own beyond reading the file in
 * scenario_load(): gadget files are checked through a callback, so the
 * unit tests can stub it.  Every error is one message,
 * "file:line:col: what is wrong".
 */
#ifndef USBRIG_SCENARIO_H
#define USBRIG_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../common/plan_words.h"

#define SC_ID_MAX		32	/* gadget id, NUL included */
#define SC_NAME_MAX		64	/* scenario name, NUL included */
#define SC_GADGETS_MAX		120	/* per scenario: vhci's 8 x 15 ports */
#define SC_FILES_MAX		16	/* `file` statements per scenario */
#define SC_STEPS_MAX		16384	/* per scenario */
#define SC_FILE_MAX		(256 * 1024)
#define SC_STRING_MAX		2048	/* one decoded string */
#define SC_TIMEOUT_DEFAULT_S	60
#define SC_TIMEOUT_MAX_S	3600
#define SC_STEP_TIMEOUT_MAX_MS	(600 * 1000)
#define SC_ERR_MAX		1024	/* a message, NUL included */

/* One statement that does something.  Which members mean something
 * depends on kind; unused pointers are NULL, unused ints 0. */
struct sc_step {
	enum plan_kind kind;
	int key;		/* the plan's and the results' key: the line,
				 * but for the 2nd and later steps of a
				 * statement done for each of its copies
				 * (numbers past the file's last line) */
	int line;
	int col;		/* of the main argument, for later checks */
	int gadget;		/* index in scenario.gadgets, or -1 */
	int intf;		/* bInterfaceNumber */
	int mode;		/* plan_attach_mode, plan_match,
				 * plan_window, plan_matched (probe) or
				 * plan_dynid */
	int err;		/* write: 0 (ok) or the errno; probe-error */
	int status;		/* run: the exit status, -1 any; probe: the
				 * errno it returns, 0 none, -1 any */
	unsigned int vid, pid;	/* dynid */
	unsigned int timeout_ms;
	int timeout_col;	/* 0 when the timeout is the default */
	char *path;		/* write, read, node: path; modprobe: module;
				 * run: the command; save: the guest file */
	char *text;		/* write: value; read, kmsg: text; run:
				 * output (NULL: any); say: the text; save:
				 * the host path as written */
	char *driver;		/* bound, probe-error, probe, dynid */
	char *src;		/* the statement as written, for reports */
};

struct sc_gadget {
	char id[SC_ID_MAX];
	char *path;		/* host path, resolved */
	int line;
	/* `gadget ID FILE copies N`: copy k is ID_k, group is ID */
	char group[SC_ID_MAX];
	int copies;
};

/* `file SRC DEST`: a host file copied into the guest's initramfs. */
struct sc_file {
	char *src;		/* host path, resolved */
	char *dst;		/* absolute guest path */
	bool missing;		/* a ${build}/ product not built yet: the
				 * scenario is skipped, not failed */
	int line;
};

enum sc_req_kind { SC_REQ_MODULE, SC_REQ_PATCHED, SC_REQ_CONFIG,
		   SC_REQ_TOOL, SC_REQ_GADGET_IN_GUEST, SC_REQ_KERNEL_VERSION };

struct sc_require {
	enum sc_req_kind kind;
	char *arg;		/* module name, "CONFIG_X", tool name,
				 * "OP VERSION" (">= 6.12"), or NULL */
	int line;
	int col;
};

/*
 * Does kernel release kver ("6.1.0-57-amd64", as uname -r says) satisfy
 * "OP VERSION" (OP one of < <= = >= >)?  The release's leading numbers
 * are compared with VERSION's, as many as VERSION has: with "6.12",
 * 6.12.118+deb12 is = 6.12 and 6.1.0-57 is < 6.12.  (Debian's 6.1.0-57
 * says 6.1.0 whatever stable release it carries.)  false when kver does
 * not begin with a number.
 */
bool sc_kernel_matches(const char *kver, const char *op_version);

struct scenario {
	char *file;
	char *name;
	char *summary;		/* the leading comment block, or NULL */
	unsigned int timeout_s;
	char *skip;		/* `skip "reason"`, or NULL */
	struct sc_gadget gadgets[SC_GADGETS_MAX];
	int n_gadgets;
	struct sc_file files[SC_FILES_MAX];
	int n_files;
	struct sc_step *steps;
	int n_steps, cap_steps;
	struct sc_require *reqs;
	int n_reqs;
};

struct sc_opts {
	/* Base of relative gadget paths that do not start with "./" or
	 * "../" (those are relative to the scenario's directory).  NULL:
	 * the current directory. */
	const char *root;
	/* What `${build}` at the start of a `file` source means: the folder
	 * of the build products (the usbrig binary's).  NULL: root/build. */
	const char *build_dir;
	/* Budget of scenarios without a `timeout` statement; 0: the
	 * default, SC_TIMEOUT_DEFAULT_S. */
	unsigned int default_timeout_s;
	/* Check one gadget file: 0, or nonzero with msg filled (one line,
	 * no trailing newline).  NULL: only check that it is readable. */
	int (*check_gadget)(void *ctx, const char *path, char *msg,
			    size_t len);
	void *ctx;
};

/*
 * Parse text (len bytes, need not be NUL-terminated) of the scenario
 * file `file`.  Returns 0 and *out, or -EINVAL with err filled ("file:
 * line:col: message"), or -ENOMEM.
 */
int scenario_parse(const char *file, const char *text, size_t len,
		   const struct sc_opts *o, struct scenario **out,
		   char *err, size_t errlen);

/* Read and parse a file; I/O errors are reported in err as "file: ...". */
int scenario_load(const char *file, const struct sc_opts *o,
		  struct scenario **out, char *err, size_t errlen);

void scenario_free(struct scenario *s);

/*
 * Write the scenario's plan (the `scenario` line, `gadget` lines, one
 * `step` line per step but the host's own, `say` and `expect
 * kernel-report` (PLAN_KIND_IN_PLAN), and `end`).  Gadget files appear as
 * /usbrig/gadgets/<basename>.  remote_first > 0: the gadgets are served
 * from the host as busids 1-remote_first, 1-(remote_first + 1), ... in
 * scenario order, and each `gadget` line says its busid.  Returns 0 or
 * -errno.
 */
int scenario_write_plan(FILE *f, const struct scenario *s, int remote_first);

/* Format one step line (no newline) into buf; length or -ENOSPC. */
int scenario_format_step(char *buf, size_t size, const struct scenario *s,
			 const struct sc_step *st);

/* The step whose key is `key`, or NULL. */
const struct sc_step *scenario_step_at(const struct scenario *s, int key);

/*
 * Guest tools `requires tool NAME` puts in the initramfs (with their
 * libraries and data; harness/host/initramfs.c stages them).  NULL-ended.
 */
extern const char *const sc_tools[];

/*
 * Where a `save` step's file goes on the host: HOSTPATH as written when
 * absolute, else save_dir/<scenario name>/HOSTPATH.  Length or -ENOSPC.
 */
int scenario_save_path(char *buf, size_t size, const char *save_dir,
		       const struct scenario *s, const struct sc_step *st);

#endif /* USBRIG_SCENARIO_H */
