/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report.h - what happened to each scenario, and how it is told: KTAP on
 * stdout, a progress line per scenario on stderr, JUnit XML, a readable
 * transcript, and the closing line "N passed, N failed, N skipped".
 *
 * run.c fills one struct rp_result per scenario from the agent's result
 * lines (docs/harness-design.md) and the host's own observations, then
 * calls report_done().  KTAP is printed in scenario order: a result that
 * finishes early waits for the ones before it.
 */
#ifndef USBRIG_REPORT_H
#define USBRIG_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "scenario.h"

enum rp_res { RP_PASS, RP_FAIL, RP_SKIP, RP_NONE };

/* The result of one step (one plan line), as the agent reported it. */
struct rp_sub {
	int key;		/* the step's key (sc_step.key) */
	int line;		/* its line in the scenario file */
	enum rp_res res;	/* RP_NONE: no result line came */
	char *desc;		/* the agent's description */
	char *saw;		/* fail: what the agent saw; skip: reason */
	char *kv;		/* "key=value ..." measurements, or NULL */
	char **diags;		/* diag lines that came before the result */
	int n_diags;
	double at;		/* seconds since the scenario began; -1:
				 * judged at its end (expect kernel-report) */
};

struct rp_result {
	const struct scenario *sc;
	int index;		/* 1-based KTAP number */
	enum rp_res res;	/* set by report_done() */
	char *skip;		/* skipped before running: the reason */
	char *error;		/* scenario-level failure (hang, crash...) */
	char *crash_what;	/* the console line that matched */
	char *crash_excerpt;
	char *console;		/* this scenario's part of the console */
	char *console_path;
	struct rp_sub *subs;	/* one per plan step, in file order */
	int n_subs;
	char **diags;		/* diag lines after the last result */
	int n_diags;
	bool begun, ended;
	double t_begin;		/* seconds since the run began */
	double t_end;
	bool done;
	int tr_next;		/* transcript: next step index to print */
	int tr_seq;		/* transcript: its place in the telling */
	FILE *tr_f;		/* transcript: held while another is told */
	char *tr_buf;
	size_t tr_len;
};

struct report_opts {
	FILE *ktap;		/* stdout; NULL: none */
	FILE *progress;		/* stderr; NULL: none */
	bool transcript;	/* a readable transcript instead of KTAP */
	const char *kernel;	/* one of several kernels: its name, for
				 * JUnit; NULL: the only one */
	int verbose;
};

struct report;

/* The results of scenarios sc[0..n-1], numbered 1..n. */
struct report *report_new(struct scenario *const *sc, int n,
			  const struct report_opts *o);
void report_free(struct report *r);

struct rp_result *report_result(struct report *r, int idx);
int report_count(const struct report *r);

/* Print the KTAP header. */
void report_start(struct report *r);

/* ---- filling a result (run.c) ---- */

/* `begin` came: for the transcript, and to time the scenario. */
void rp_begin(struct report *r, struct rp_result *res, double now);
/* A result line for the step of key (sc_step.key): RP_PASS, RP_FAIL or
 * RP_SKIP. */
void rp_step(struct report *r, struct rp_result *res, int key,
	     enum rp_res what, const char *desc, const char *saw,
	     const char *kv, double now);
void rp_diag(struct report *r, struct rp_result *res, const char *text);
/* A scenario-level failure; the first one wins. */
void rp_error(struct rp_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A kernel report during the scenario (its first console line, and an
 * excerpt): it fails the scenario (the first one is kept), unless an
 * `expect kernel-report` step's text is in what: then that step passes.
 * true when a step expected it. */
bool rp_crash(struct rp_result *res, const char *what, const char *excerpt);
void rp_console(struct rp_result *res, const char *path,
		const char *excerpt);
/* Skipped without running. */
void rp_skip(struct rp_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The result is complete: decide pass/fail/skip, print what can be
 * printed in order, and the progress line. */
void report_done(struct report *r, struct rp_result *res, double now);

/* Print anything still pending (as failed if never done), then
 * "N passed, N failed, N skipped" as the last line of the KTAP stream. */
void report_finish(struct report *r);

/* A top-level "# text" line in the KTAP stream (before the closing line). */
void report_note(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void report_counts(const struct report *r, int *passed, int *failed,
		   int *skipped);

/*
 * After the per-kernel KTAP of a run on several kernels (r[k], the same
 * scenarios each, labelled by their opts.kernel): every scenario's outcome
 * per kernel as "# " lines, then the number whose outcome differs (a skip
 * is no difference: the scenario says which kernels it is for), and the
 * totals of all the runs as the last line, as a one-kernel run's.
 */
void report_side_by_side(FILE *f, const struct report *const *r, int nk);

/* Write JUnit XML of all results. 0 or -errno. */
int report_write_junit(const struct report *r, const char *path);
/* The same for one run per kernel: a testsuite each, the kernel (the
 * report's opts.kernel) in the suite's, the cases' class and names. */
int report_write_junit_all(const struct report *const *r, int n,
			   const char *path);

#endif /* USBRIG_REPORT_H */
