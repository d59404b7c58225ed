// SPDX-License-Identifier: GPL-2.0
/*
 * plan_words.c - the words of the plan (see plan_words.h).
 */
#include "plan_words.h"

#include <errno.h>
#include <string.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

const char *const plan_kind_names[PLAN_N_KINDS] = {
	[PLAN_ATTACH] = "attach",
	[PLAN_DETACH] = "detach",
	[PLAN_MODPROBE] = "modprobe",
	[PLAN_RMMOD] = "rmmod",
	[PLAN_WRITE] = "write",
	[PLAN_READ] = "read",
	[PLAN_EXPECT_BOUND] = "expect-bound",
	[PLAN_EXPECT_UNBOUND] = "expect-unbound",
	[PLAN_EXPECT_PROBE_ERROR] = "expect-probe-error",
	[PLAN_EXPECT_NODE] = "expect-node",
	[PLAN_EXPECT_NO_NODE] = "expect-no-node",
	[PLAN_EXPECT_KMSG] = "expect-kmsg",
	[PLAN_EXPECT_PROBE] = "expect-probe",
	[PLAN_EXPECT_DYNID] = "expect-dynid",
	[PLAN_RUN] = "run",
	[PLAN_SAVE] = "save",
	[PLAN_SAY] = "say",
	[PLAN_EXPECT_REPORT] = "expect-kernel-report",
};

const char *const plan_attach_modes[PLAN_N_ATTACH_MODES] = {
	[PLAN_VERIFY] = "verify",
	[PLAN_NO_VERIFY] = "no-verify",
	[PLAN_NO_WAIT] = "no-wait",
};

const char *const plan_match_names[PLAN_N_MATCHES] = {
	[PLAN_EQUALS] = "equals",
	[PLAN_CONTAINS] = "contains",
	[PLAN_NOT_CONTAINS] = "not-contains",
};

const char *const plan_window_names[PLAN_N_WINDOWS] = {
	[PLAN_WITHIN] = "within",
	[PLAN_FOR] = "for",
};

const char *const plan_matched_names[PLAN_N_MATCHED] = {
	[PLAN_MATCHED_ANY] = "-",
	[PLAN_MATCHED_DYNAMIC] = "dynamic",
	[PLAN_MATCHED_STATIC] = "static",
	[PLAN_MATCHED_NONE] = "none",
};

const char *const plan_dynid_names[PLAN_N_DYNIDS] = {
	[PLAN_DYNID_ADD] = "add",
	[PLAN_DYNID_REMOVE] = "remove",
};

int plan_word_index(const char *const *words, size_t n, const char *word)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(words[i], word))
			return (int)i;
	return -1;
}

const char *plan_kind_name(enum plan_kind kind)
{
	if ((unsigned int)kind >= PLAN_N_KINDS)
		return "?";
	return plan_kind_names[kind];
}

static const struct {
	const char *name;
	int value;
} plan_errnos[] = {
	{ "EPERM", EPERM },		{ "ENOENT", ENOENT },
	{ "ESRCH", ESRCH },		{ "EINTR", EINTR },
	{ "EIO", EIO },			{ "ENXIO", ENXIO },
	{ "E2BIG", E2BIG },		{ "ENOEXEC", ENOEXEC },
	{ "EBADF", EBADF },		{ "EAGAIN", EAGAIN },
	{ "ENOMEM", ENOMEM },		{ "EACCES", EACCES },
	{ "EFAULT", EFAULT },		{ "EBUSY", EBUSY },
	{ "EEXIST", EEXIST },		{ "EXDEV", EXDEV },
	{ "ENODEV", ENODEV },		{ "ENOTDIR", ENOTDIR },
	{ "EISDIR", EISDIR },		{ "EINVAL", EINVAL },
	{ "ENFILE", ENFILE },		{ "EMFILE", EMFILE },
	{ "ENOTTY", ENOTTY },		{ "EFBIG", EFBIG },
	{ "ENOSPC", ENOSPC },		{ "ESPIPE", ESPIPE },
	{ "EROFS", EROFS },		{ "EPIPE", EPIPE },
	{ "EDOM", EDOM },		{ "ERANGE", ERANGE },
	{ "ENOSYS", ENOSYS },		{ "ENODATA", ENODATA },
	{ "ETIME", ETIME },		{ "EPROTO", EPROTO },
	{ "EOVERFLOW", EOVERFLOW },	{ "EILSEQ", EILSEQ },
	{ "EOPNOTSUPP", EOPNOTSUPP },	{ "ECONNRESET", ECONNRESET },
	{ "ESHUTDOWN", ESHUTDOWN },	{ "ETIMEDOUT", ETIMEDOUT },
	{ "EALREADY", EALREADY },	{ "EINPROGRESS", EINPROGRESS },
	{ "EREMOTEIO", EREMOTEIO },	{ "EPROBE_DEFER", PLAN_EPROBE_DEFER },
};

int plan_errno_value(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(plan_errnos); i++)
		if (!strcmp(plan_errnos[i].name, name))
			return plan_errnos[i].value;
	return 0;
}

const char *plan_errno_name(int err)
{
	for (size_t i = 0; i < ARRAY_SIZE(plan_errnos); i++)
		if (plan_errnos[i].value == err)
			return plan_errnos[i].name;
	return NULL;
}
