/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plan_words.h - the words of the plan, one list for both ends.
 *
 * The host writes these words into `step` lines (harness/host/
 * scenario_plan.c) and the agent reads them back (harness/agent/steps.c),
 * so each list lives here once, as the kernel's usbip_network.h is the one
 * list of op codes for usbipd and vhci.  docs/harness-design.md ("Step
 * kinds") says what each word asks for.  Each enum indexes its table:
 * plan_kind_names[PLAN_WRITE] is "write".
 */
#ifndef USBRIG_PLAN_WORDS_H
#define USBRIG_PLAN_WORDS_H

#include <stddef.h>

/* What a step does (the KIND of `step LINE KIND ARGS...`). */
enum plan_kind {
	PLAN_ATTACH,
	PLAN_DETACH,
	PLAN_MODPROBE,
	PLAN_RMMOD,
	PLAN_WRITE,
	PLAN_READ,
	PLAN_EXPECT_BOUND,
	PLAN_EXPECT_UNBOUND,
	PLAN_EXPECT_PROBE_ERROR,
	PLAN_EXPECT_NODE,
	PLAN_EXPECT_NO_NODE,
	PLAN_EXPECT_KMSG,
	PLAN_EXPECT_PROBE,	/* the usb_core trace events (patched kernel) */
	PLAN_EXPECT_DYNID,	/* the same */
	PLAN_RUN,
	PLAN_SAVE,		/* a guest file to the host (run.c writes it) */
	PLAN_SAY,		/* a scenario's `say`: host only (the
				 * transcript), never in a plan */
	PLAN_EXPECT_REPORT,	/* `expect kernel-report`: host only (judged
				 * from the console's reports, report.c),
				 * never in a plan */
};
#define PLAN_N_KINDS	(PLAN_EXPECT_REPORT + 1)

/* Does a step of this kind go into the plan (to the agent)? */
#define PLAN_KIND_IN_PLAN(kind) \
	((kind) != PLAN_SAY && (kind) != PLAN_EXPECT_REPORT)

/* attach MODE */
enum plan_attach_mode { PLAN_VERIFY, PLAN_NO_VERIFY, PLAN_NO_WAIT };
#define PLAN_N_ATTACH_MODES	(PLAN_NO_WAIT + 1)
/* read MATCH */
enum plan_match { PLAN_EQUALS, PLAN_CONTAINS, PLAN_NOT_CONTAINS };
#define PLAN_N_MATCHES		(PLAN_NOT_CONTAINS + 1)
/* expect-bound / expect-unbound MODE */
enum plan_window { PLAN_WITHIN, PLAN_FOR };
#define PLAN_N_WINDOWS		(PLAN_FOR + 1)
/* expect-probe MATCHED: which id the probe matched (the trace event's id=) */
enum plan_matched { PLAN_MATCHED_ANY, PLAN_MATCHED_DYNAMIC,
		    PLAN_MATCHED_STATIC, PLAN_MATCHED_NONE };
#define PLAN_N_MATCHED		(PLAN_MATCHED_NONE + 1)
/* expect-dynid add | remove */
enum plan_dynid { PLAN_DYNID_ADD, PLAN_DYNID_REMOVE };
#define PLAN_N_DYNIDS		(PLAN_DYNID_REMOVE + 1)

extern const char *const plan_kind_names[PLAN_N_KINDS];
extern const char *const plan_attach_modes[PLAN_N_ATTACH_MODES];
extern const char *const plan_match_names[PLAN_N_MATCHES];
extern const char *const plan_window_names[PLAN_N_WINDOWS];
extern const char *const plan_matched_names[PLAN_N_MATCHED];	/* "-" any */
extern const char *const plan_dynid_names[PLAN_N_DYNIDS];

/* The index of word in words[n], or -1. */
int plan_word_index(const char *const *words, size_t n, const char *word);

/* The plan word of a kind ("expect-bound"); "?" out of range. */
const char *plan_kind_name(enum plan_kind kind);

/*
 * -EPROBE_DEFER is kernel-internal (include/linux/errno.h): only `expect
 * probe-error` and `expect probe` take it; a bind write reports EAGAIN.
 */
#define PLAN_EPROBE_DEFER	517

/*
 * The errno names a scenario and a plan may use (symbolic, never
 * numbers): "EINVAL" <-> EINVAL, "EPROBE_DEFER" <-> PLAN_EPROBE_DEFER.
 * 0 / NULL when not in the list.
 */
int plan_errno_value(const char *name);
const char *plan_errno_name(int err);

#endif /* USBRIG_PLAN_WORDS_H */
