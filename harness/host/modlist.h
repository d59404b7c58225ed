/* SPDX-License-Identifier: GPL-2.0 */
/*
 * modlist.h - the guest kernel's module lists: ROOT/lib/modules/KVER/
 * modules.dep, modules.builtin, modules.alias (ROOT "" for the host's own
 * /lib/modules).  Used by `usbrig repro` and `usbrig census`.
 */
#ifndef USBRIG_MODLIST_H
#define USBRIG_MODLIST_H

#include <stdio.h>

/* Open ROOT/lib/modules/KVER/LIST, or NULL (errno set). */
FILE *modlist_open(const char *root, const char *kver, const char *list);

/* A module name as the kernel keeps it: '-' becomes '_'. */
void modlist_norm(char *name);

/*
 * Is module `name` loadable (1: in modules.dep), built in (2), or unknown
 * (0)?  -ENOENT when modules.dep cannot be read.
 */
int modlist_kind(const char *root, const char *kver, const char *name);

#endif /* USBRIG_MODLIST_H */
