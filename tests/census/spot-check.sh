#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# spot-check.sh USBRIG BASELINE - does the census table tell the truth?
#
# Every tests/census/spot/*.scenario is written by hand, with its own
# gadgets, for one driver, and asserts what that driver does.  Its
# `# census: MODULE KIND FIELD=OUTCOME...` lines say which census rows it
# confirms (FIELD static, newid or replug; OUTCOME as in docs/census.md,
# with `:ERRNO` for a probe error).  This checks
#   1. that BASELINE (a census.json) has each row with those outcomes, and
#   2. that the scenarios pass (USBRIG runs them in a guest),
# so the table and the hand-written checks cannot drift apart.  KTAP on
# stdout; exit 0 when both hold.

set -u
usbrig=$1
baseline=$2
here=$(dirname "$0")
fail=0
n=0

errno_name() {
	case $1 in
	0) echo "" ;;
	2) echo ENOENT ;; 5) echo EIO ;; 6) echo ENXIO ;; 12) echo ENOMEM ;;
	16) echo EBUSY ;; 19) echo ENODEV ;; 22) echo EINVAL ;;
	32) echo EPIPE ;; 71) echo EPROTO ;; 95) echo EOPNOTSUPP ;;
	110) echo ETIMEDOUT ;; *) echo "E$1" ;;
	esac
}

field() {	# field ROW KEY: the value of "KEY": in one JSON row line
	printf '%s\n' "$1" | sed -n "s/.*\"$2\": \"\\{0,1\\}\\([^\",}]*\\).*/\\1/p"
}

echo "KTAP version 1"
for sc in "$here"/spot/*.scenario; do
	grep '^# census: ' "$sc" >/dev/null || continue
	grep '^# census: ' "$sc" | while read -r _ _ mod kind rest; do
		row=$(grep "\"module\": \"$mod\", \"kind\": \"$kind\"" "$baseline")
		why=
		if [ -z "$row" ]; then
			why="$baseline has no row $mod ($kind)"
		fi
		for want in $rest; do
			[ -n "$row" ] || break
			key=${want%%=*}
			val=${want#*=}
			got=$(field "$row" "$key")
			e=$(errno_name "$(field "$row" "${key}_errno")")
			[ "$key" = replug ] && e=
			[ -n "$e" ] && got="$got:$e"
			[ "$got" = "$val" ] ||
				why="$why $key is $got in the table, $val in $(basename "$sc");"
		done
		if [ -n "$why" ]; then
			echo "not ok - census row $mod ($kind): $why"
		else
			echo "ok - census row $mod ($kind) is what $(basename "$sc") asserts"
		fi
	done
done >"${TMPDIR:-/tmp}/spot-check.$$"
cat "${TMPDIR:-/tmp}/spot-check.$$"
grep -q '^not ok' "${TMPDIR:-/tmp}/spot-check.$$" && fail=1
n=$(grep -c '^ok\|^not ok' "${TMPDIR:-/tmp}/spot-check.$$")
rm -f "${TMPDIR:-/tmp}/spot-check.$$"

# the scenarios themselves, in a guest
if ! "$usbrig" "$here"/spot/*.scenario; then
	echo "not ok - the spot scenarios pass"
	fail=1
else
	echo "ok - the spot scenarios pass"
fi
echo "# $n census rows checked against $baseline"
exit $fail
