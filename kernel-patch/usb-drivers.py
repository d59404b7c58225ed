#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# kernel-patch/usb-drivers.py - write usb-drivers.config: the Kconfig
# settings that build, as modules, every driver of a Debian kernel that has
# USB aliases, on top of guest.config (tinyconfig + the guest's needs).
#
# The KASAN flavour includes it, so `usbrig census --kernel patched-kasan`
# probes the same drivers the stock kernel ships.  Run again when Debian's
# kernel or the source changes:
#
#   kernel-patch/usb-drivers.py --src build/kernel/src \
#       --base build/kernel/obj-default/.config \
#       --debian /boot/config-6.1.0-57-amd64 \
#       --modules /lib/modules/6.1.0-57-amd64 > kernel-patch/usb-drivers.config
#
# 1. The modules: every module modules.alias gives a `usb:` alias to, and
#    its .ko path from modules.dep.
# 2. The symbol: the obj-$(CONFIG_X) line of the .ko's directory Makefile.
# 3. The value: Debian's.  A symbol is set after the symbols its
#    dependencies name (Debian's values again, recursively), and so are the
#    options of its Kconfig file that depend on it (the sub-options that add
#    ids or features to the same driver).
# 4. The output: every user-settable symbol whose value differs from the
#    base, in Kconfig order.  Modules that could not be reached are listed
#    in comments with the reason, and the exit status is 1 when any is.
#
# Needs python3-kconfiglib (Debian).  Kconfiglib 14 predates the `modules`
# keyword of kernel/module/Kconfig, read here as the older `option modules`.

import argparse
import io
import os
import re
import sys

import kconfiglib


class Kconf(kconfiglib.Kconfig):
    def _open(self, filename, mode):
        f = super()._open(filename, mode)
        if filename.endswith("kernel/module/Kconfig"):
            text = f.read()
            f.close()
            return io.StringIO(re.sub(r"^(\s*)modules\s*$",
                                      r"\1option modules", text,
                                      flags=re.M))
        return f


def usb_modules(moddir):
    """{module name: .ko path relative to kernel/} for usb: aliases."""
    names = set()
    with open(os.path.join(moddir, "modules.alias")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "alias" and \
               parts[1].startswith("usb:"):
                names.add(parts[2])
    paths = {}
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            ko = line.split(":", 1)[0]
            base = os.path.basename(ko)
            base = re.sub(r"\.ko(\.[a-z]+)?$", "", base)
            name = base.replace("-", "_")
            if name in names:
                paths[name] = ko[len("kernel/"):] if ko.startswith(
                    "kernel/") else ko
    return names, paths


def makefile_lines(path):
    """The Makefile's lines with continuations joined."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return []
    return text.replace("\\\n", " ").splitlines()


def symbol_of(src, ko):
    """The CONFIG_ symbol of obj-$(CONFIG_X) += <ko's object>."""
    d, base = os.path.split(ko)
    obj = re.sub(r"\.ko(\.[a-z]+)?$", ".o", base)
    rel = obj
    while True:
        pat = re.compile(r"^\s*obj-\$\(CONFIG_([A-Za-z0-9_]+)\)\s*[+:]?=(.*)$")
        for line in makefile_lines(os.path.join(src, d, "Makefile")):
            m = pat.match(line)
            if m and rel in m.group(2).split():
                return m.group(1)
        if not d:
            return None
        d, last = os.path.split(d)
        rel = last + "/" + rel


def debian_values(path):
    vals = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^CONFIG_([A-Za-z0-9_]+)=(.*)$", line)
            if m:
                vals[m.group(1)] = m.group(2)
    return vals


TRI = {"n": 0, "m": 1, "y": 2}


def main():
    ap = argparse.ArgumentParser(
        description="write usb-drivers.config (see the head of this file)")
    ap.add_argument("--src", required=True, help="kernel source tree")
    ap.add_argument("--base", required=True,
                    help=".config of the default flavour")
    ap.add_argument("--debian", required=True, help="Debian's config")
    ap.add_argument("--modules", required=True,
                    help="/lib/modules/KVER of Debian's kernel")
    a = ap.parse_args()

    src = os.path.abspath(a.src)
    os.environ.setdefault("srctree", src)
    os.environ.setdefault("ARCH", "x86")
    os.environ.setdefault("SRCARCH", "x86")
    os.environ.setdefault("CC", "gcc")
    os.environ.setdefault("LD", "ld")
    os.environ.setdefault("HOSTCC", "gcc")
    cwd = os.getcwd()
    os.chdir(src)
    kconf = Kconf("Kconfig", warn=False)
    os.chdir(cwd)
    kconf.load_config(a.base)
    base = {s.name: s.str_value for s in kconf.unique_defined_syms}
    deb = debian_values(a.debian)

    names, paths = usb_modules(a.modules)
    targets, missing = {}, {}
    for name in sorted(names):
        if name not in paths:
            missing[name] = "built in, or not in modules.dep"
            continue
        sym = symbol_of(src, paths[name])
        if not sym or sym not in kconf.syms:
            missing[name] = "no obj-$(CONFIG_...) line for " + paths[name]
            continue
        targets[name] = sym

    by_file = {}
    for other in kconf.unique_defined_syms:
        if other.name in deb and deb[other.name] in TRI and \
           other.type in (kconfiglib.BOOL, kconfiglib.TRISTATE):
            for n in other.nodes:
                by_file.setdefault(n.filename, []).append(other)

    busy = set()

    def want(sym, value):
        """Raise sym to Debian's value after its dependencies."""
        if sym.name in busy or sym.tri_value >= TRI[value]:
            return
        busy.add(sym.name)
        for dep in kconfiglib.expr_items(sym.direct_dep):
            if isinstance(dep, kconfiglib.Symbol) and dep.name in deb and \
               deb[dep.name] in TRI:
                want(dep, deb[dep.name])
        if sym.visibility:
            sym.set_value(min(TRI[value], sym.visibility)
                          if sym.type == kconfiglib.TRISTATE else value)
        busy.discard(sym.name)

    # Twice: a symbol set late can make an earlier one's sub-options
    # visible.
    for _ in range(2):
        for name, symname in sorted(targets.items()):
            sym = kconf.syms[symname]
            want(sym, deb.get(symname, "m"))
            for node in sym.nodes:
                for other in by_file.get(node.filename, []):
                    if sym in kconfiglib.expr_items(other.direct_dep):
                        want(other, deb[other.name])

    out = sys.stdout
    out.write("# USB drivers of Debian's %s as modules, on top of "
              "guest.config.\n" % os.path.basename(a.debian))
    out.write("# Written by kernel-patch/usb-drivers.py (see there); "
              "%d modules.\n" % len(targets))
    changed = 0
    for sym in kconf.unique_defined_syms:
        if not any(n.prompt for n in sym.nodes):
            continue
        if sym.str_value == base.get(sym.name, "") or \
           sym.type not in (kconfiglib.BOOL, kconfiglib.TRISTATE,
                            kconfiglib.INT, kconfiglib.HEX,
                            kconfiglib.STRING):
            continue
        if sym.type in (kconfiglib.BOOL, kconfiglib.TRISTATE) and \
           sym.str_value == "n":
            continue
        v = sym.str_value
        if sym.type == kconfiglib.STRING:
            v = '"%s"' % v.replace("\\", "\\\\").replace('"', '\\"')
        out.write("CONFIG_%s=%s\n" % (sym.name, v))
        changed += 1

    bad = 0
    for name, symname in sorted(targets.items()):
        if kconf.syms[symname].tri_value == 0:
            missing[name] = "CONFIG_%s could not be set" % symname
    for name, why in sorted(missing.items()):
        out.write("# not here: %s (%s)\n" % (name, why))
        bad += 1
    print("usb-drivers.py: %d modules, %d settings, %d not reached"
          % (len(targets), changed, bad), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
