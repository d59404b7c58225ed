#!/bin/sh
# check.sh BUILD - `usbrig repro` end to end on the dumps of tests/repro/:
# the verdict and exit code of an expected outcome (0), of an outcome that
# is not the expected one (1), of a dump usbrig-import rejects and of a bad
# flag (125, with the file:line or the flag in the message); the scenario
# written by --out passes `usbrig --check` and passes when run.
# Prints one line per case; exits 1 when any case fails.
set -u
build=${1:-build}
usbrig=$build/usbrig
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# case NAME WANT_STATUS PATTERN -- ARGS...: run usbrig repro ARGS, expect
# exit WANT_STATUS and PATTERN (grep -E) in its stdout+stderr
case_() {
	name=$1 want=$2 pat=$3
	shift 4
	"$usbrig" repro "$@" >"$tmp/$name.out" 2>&1
	st=$?
	if [ "$st" -ne "$want" ]; then
		echo "not ok $name: exit $st, wanted $want"
		sed 's/^/#   /' "$tmp/$name.out"
		fails=$((fails + 1))
	elif ! grep -Eq -- "$pat" "$tmp/$name.out"; then
		echo "not ok $name: exit $st but no /$pat/ in the output"
		sed 's/^/#   /' "$tmp/$name.out"
		fails=$((fails + 1))
	else
		echo "ok $name (exit $st; $(grep -Eo 'after [0-9.]+s' \
			"$tmp/$name.out" | tail -1))"
	fi
}

# pl2303 binds 067b:23c3 by its static table; --out writes a scenario
case_ static-bind 0 'interface 0 .*bound to pl2303' -- \
	"$here/pl2303-23c3.lsusb" --expect 0:bound:pl2303 --expect no-crash \
	--out "$tmp/out"
# the paste as it was cut: one endpoint left, pl2303 refuses (ENODEV,
# silent but for initcall_debug), before and after new_id: not bound
case_ expected-failure 1 'probe error: pl2303 ENODEV' -- \
	"$here/pl2303-23c3-cut.lsusb" --driver pl2303 --expect 0:bound:pl2303
# a dump the importer cannot read: untestable, its file:line said
case_ bad-input 125 'bad-vendor\.lsusb:1: ' -- "$here/bad-vendor.lsusb"
# a bad flag: untestable too (git bisect run skips, never blames)
case_ bad-flag 125 'usbrig repro: --expect: ' -- \
	"$here/pl2303-23c3.lsusb" --expect bound-to:pl2303

# the regression scenario --out wrote
sc=$tmp/out/repro-067b-23c3.scenario
if "$usbrig" --check "$sc" >/dev/null 2>"$tmp/check.err" &&
   "$usbrig" "$sc" >"$tmp/run.ktap" 2>"$tmp/run.err"; then
	echo "ok out-scenario ($(tail -1 "$tmp/run.ktap"))"
else
	echo "not ok out-scenario"
	sed 's/^/#   /' "$tmp/check.err" "$tmp/run.ktap" 2>/dev/null
	fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]
