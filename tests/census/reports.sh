#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# reports.sh USBRIG OUT - is every kernel report of a census reproduced by
# its saved scenario alone?
#
# For each module whose row in OUT/census.json has a report, run
# OUT/scenarios/census-MODULE.scenario by itself (usbrig --panic-on-oops,
# as the census ran it) and compare the first line of the report it
# produces with the census's, times, CPUs, PIDs and addresses set aside.
# KTAP on stdout; exit 0 when every report came back.

set -u
usbrig=$1
out=$2
fail=0
n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the report's first line without what changes from run to run
norm() {
	sed -e 's/\[ *[0-9.]*\] //g' \
		-e 's/CPU: [0-9]* PID: [0-9]*/CPU: N PID: N/' \
		-e 's/+0x[0-9a-f]*\/0x[0-9a-f]*/+OFF/g' |
		grep -o -E '(BUG:|WARNING:|Oops|KASAN:|UBSAN:|INFO: task|general protection|Kernel panic|kernel BUG|list_[a-z]* corruption|Unable to handle).*' |
		head -n 1
}

echo "KTAP version 1"
grep '"report": "[^"]' "$out/census.json" |
	sed -n 's/^{"module": "\([^"]*\)".*"report": "\([^"]*\)".*/\1 \2/p' |
	sort -u -k1,1 >"$tmp/list"
while read -r mod report; do
	n=$((n + 1))
	want=$(printf '%b\n' "$report" | norm)
	"$usbrig" --panic-on-oops "$out/scenarios/census-$mod.scenario" \
		>"$tmp/$mod.ktap" 2>"$tmp/$mod.log"
	got=$(grep -h -E '# crash: |kernel crash report: ' "$tmp/$mod.ktap" \
		"$tmp/$mod.log" | sed -e 's/.*# crash: //' \
		-e 's/.*kernel crash report: //' | norm)
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		echo "ok $n - $mod: $want"
	else
		echo "not ok $n - $mod: the census saw '$want', alone it gives '${got:-no report}'"
		fail=1
	fi
done <"$tmp/list"
echo "1..$n"
exit $fail
