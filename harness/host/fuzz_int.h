/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_int.h - `usbrig fuzz`: hostile devices against the guest kernel.
 *
 *   fuzz_mutate.c  the PRNG, the mutations of a gadget script (each one
 *                  statement set or added in one block of the script,
 *                  so a minimised gadget reads as the seed plus a few
 *                  commented lines), their application to the text
 *   fuzz_ddmin.c   delta debugging over a list of mutations, with a
 *                  predicate that tests many candidates at once (one
 *                  guest run)
 *   fuzz_report.c  the child run's KTAP -> a kernel report per scenario,
 *                  its signature; the summary (Markdown, JSON)
 *   fuzz.c         the command: seeds, devices, scenarios, the runs
 *
 * docs/fuzzing.md, "Hostile devices against the guest kernel", is the
 * user's guide.
 */
#ifndef USBRIG_FUZZ_INT_H
#define USBRIG_FUZZ_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FZ_MUT_MAX	8	/* mutations of one device */
#define FZ_LINE_MAX	256	/* the statement(s) a mutation writes */
#define FZ_TEXT_MAX	(256u << 10)	/* a seed script, mutated or not */
#define FZ_SIG_MAX	256

/* ---- fuzz_mutate.c ---- */

/* splitmix64: the one source of randomness; same seed, same run. */
struct fz_rng {
	uint64_t s;
};

void fz_rng_seed(struct fz_rng *r, uint64_t seed, uint64_t stream);
uint64_t fz_rng_next(struct fz_rng *r);
/* 0 .. n-1 (n > 0) */
unsigned int fz_rng_below(struct fz_rng *r, unsigned int n);

/* The blocks of a gadget script a mutation may land in. */
enum fz_block { FZ_DEVICE, FZ_CONFIG, FZ_INTERFACE, FZ_ENDPOINT, FZ_BLOCK_N };

extern const char *const fz_block_names[FZ_BLOCK_N];

/*
 * One mutation: in the index-th block of its kind (document order, 0
 * based), remove every statement of the block (not of blocks inside it)
 * whose keyword is one of kws (blank-separated; "" for none: a statement
 * that may repeat, such as raw or control), then add line as the block's
 * first statement, after a comment that says what it is.
 */
struct fz_mut {
	enum fz_block block;
	int index;
	char kind[16];		/* count, length, total, type, class, ... */
	char kws[64];
	char line[FZ_LINE_MAX];
};

/* How many blocks of each kind the script has; -EINVAL when it does not
 * lex (an unterminated string or block). */
int fz_count_blocks(const char *text, int counts[FZ_BLOCK_N]);

/*
 * Apply m to text: a new malloc'd text in *out.  0, -ENOENT when the
 * block does not exist, -EINVAL when text does not lex, -E2BIG past
 * FZ_TEXT_MAX, -ENOMEM.
 */
int fz_mut_apply(const char *text, const struct fz_mut *m, int tag,
		 char **out);

/* Apply the mutations of v whose use[i] is true (use NULL: all), in
 * order; tags are their indices in v. */
int fz_mut_apply_all(const char *text, const struct fz_mut *v, int n,
		     const bool *use, char **out);

/*
 * Draw up to max mutations for a script whose block counts are counts
 * from r.  Returns how many (>= 1).  The caller checks each against the
 * gadget parser and drops those it refuses.
 */
int fz_mut_draw(struct fz_rng *r, const int counts[FZ_BLOCK_N],
		struct fz_mut *v, int max);

/* "interface 1: bNumEndpoints 31" */
void fz_mut_describe(const struct fz_mut *m, char *buf, size_t size);

/* A class-specific descriptor (CDC, HID, UAC, UVC) with bent fields as
 * raw bytes after a random interface: what the planted device carries
 * besides its trigger.  0, or -ENOENT when there is no interface. */
int fz_mut_class_desc(struct fz_rng *r, const int counts[FZ_BLOCK_N],
		      struct fz_mut *m);

/* The planted known trigger: interface 0 becomes a Bluetooth HCI
 * interface (e0/01/01), whose driver loads ecdh_generic; docs/fuzzing.md */
void fz_mut_planted(struct fz_mut *m);

/* ---- fuzz_ddmin.c ---- */

/*
 * The predicate: which of n_cands candidate sets of n elements
 * (cands[c * n + i]: element i is in candidate c) still show the failure:
 * hit[c].  0, or -errno (the minimisation stops with that error).
 */
typedef int (*fz_test_fn)(void *ctx, const bool *cands, int n_cands, int n,
			  bool *hit);

/*
 * Delta debugging (Zeller and Hildebrandt, "Simplifying and Isolating
 * Failure-Inducing Input", 2002): keep[0..n-1] is the set that fails on
 * entry, a 1-minimal failing subset on return (removing any one element
 * makes it pass).  Each round's subsets and complements go to test in
 * one call.  Returns the number of calls made, or -errno.
 */
int fz_ddmin(int n, bool *keep, fz_test_fn test, void *ctx);

/* ---- fuzz_report.c ---- */

struct fz_crash {
	char scenario[80];
	char first[512];	/* the report's first line, time stamp off */
	char sig[FZ_SIG_MAX];
	char *excerpt;		/* malloc'd: the console lines the KTAP has */
};

/*
 * The kernel reports of a child run's KTAP, one per scenario that has
 * one (its first): *out malloc'd, the count returned, or -errno.
 */
int fz_read_crashes(const char *ktap, struct fz_crash **out);
void fz_crashes_free(struct fz_crash *v, int n);

/*
 * A report's signature: its first line without time stamp, CPU, PID,
 * offsets and addresses, plus the function of its RIP when the excerpt
 * has one: "WARNING: at crypto/testmgr.c:5907 alg_test.cold".
 */
void fz_signature(const char *first, const char *excerpt, char *sig,
		  size_t size);

/* The text an `expect kernel-report` line waits for: the longest run of
 * the signature's words (before any " @ ") that the first line has. */
void fz_sig_expect(const char *sig, const char *first, char *buf,
		   size_t size);

struct fz_finding {
	char sig[FZ_SIG_MAX];
	char first[512];
	char seed[128];		/* the seed gadget's name */
	char dir[64];		/* finding-N */
	long device;		/* the device's number in the run */
	int n_mut, n_min;	/* mutations applied, left after minimising */
	bool confirmed;		/* reproduced alone */
	bool planted;
	int tests;		/* guest runs the minimisation took */
	char muts[FZ_MUT_MAX + 1][FZ_LINE_MAX + 64];	/* the minimised ones */
};

struct fz_summary {
	unsigned long long seed;
	const char *kernel;
	long devices;
	int runs;
	double seconds, fuzz_seconds;
	struct fz_finding *f;
	int n;
};

/* DIR/summary.md and DIR/summary.json; 0 or -errno. */
int fz_write_summary(const char *dir, const struct fz_summary *s);

#endif /* USBRIG_FUZZ_INT_H */
