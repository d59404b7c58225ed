#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/bench/table.sh BUILD - `make bench`'s one table, from what each
# part left in BUILD, and the same figures as BUILD/bench.json (for
# tracking across commits: one object, every figure a number or null).
#
#   bench.ktap        the suite in one boot, `usbrig --bench` (bench-suite):
#                     its `# bench:` lines and the closing counts
#   bench-load.ktap   tests/load/load-100-devices.scenario, --bench
#                     (bench-load): devices bound, the server's VmRSS
#                     before and with all of them attached
#   bench-urb.json    tests/bench/urb-bench.c (bench-urb)
#   bench-zero-guest.txt, bench-zero-host.txt   (bench-zero)
#   bench-repro.txt   `usbrig repro`'s verdict line (bench-repro)
#   bench-census.out  `census:` lines, only with BENCH_CENSUS=1
#
# A part that did not run (or failed) shows as "-" and null.

set -u
b=${1:?usage: table.sh BUILD}

# the first line of FILE matching PATTERN, through sed -n EXPRESSION
num() {	# FILE PATTERN SED-EXPRESSION
	[ -r "$1" ] || return 0
	grep -m1 -- "$2" "$1" | sed -n "$3"
}
or_null() { [ -n "$1" ] && echo "$1" || echo null; }
or_dash() { [ -n "$1" ] && echo "$1" || echo -; }
round() { [ -n "$1" ] && awk -v v="$1" 'BEGIN { printf "%.0f", v }' || echo -; }

k=$b/bench.ktap
boot=$(num "$k" '# bench: start to first' 's/.*scenario \([0-9.]*\)s.*/\1/p')
wall=$(num "$k" '# bench: wall' 's/.*wall \([0-9.]*\)s.*/\1/p')
counts=$(num "$k" ' passed, .* skipped$' 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
# shellcheck disable=SC2086 # three numbers, split on purpose
set -- $counts
passed=${1:-}; failed=${2:-}; skipped=${3:-}
# bench-ref.ktap: the reference set (tests/bench/suite-ref.txt), 1 job
r=$b/bench-ref.ktap
ref_wall=$(num "$r" '# bench: wall' 's/.*wall \([0-9.]*\)s.*/\1/p')
ref_n=$(num "$r" '# bench: wall' 's/.* for \([0-9]*\) scenario.*/\1/p')
ref_counts=$(num "$r" ' passed, .* skipped$' 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 passed, \2 failed/p')
sc_med=$(num "$k" '# bench: per scenario median' 's/.*median \([0-9.]*\)s.*/\1/p')
sc_max=$(num "$k" '# bench: per scenario median' 's/.*max \([0-9.]*\)s.*/\1/p')
sc_max_name=$(num "$k" '# bench: per scenario median' 's/.*max [0-9.]*s (\(.*\))$/\1/p')
lat() {	# NAME FIELD
	num "$k" "# bench: $1 latency median" "s/.* $2 \\([0-9.]*\\)ms.*/\\1/p"
}
lat_n() { num "$k" "# bench: $1 latency median" 's/.*(n=\([0-9]*\))$/\1/p'; }
nb_med=$(lat 'new_id->bind' median); nb_p95=$(lat 'new_id->bind' p95)
nb_n=$(lat_n 'new_id->bind')
ab_med=$(lat 'attach->bind' median); ab_p95=$(lat 'attach->bind' p95)
ab_n=$(lat_n 'attach->bind')

l=$b/bench-load.ktap
load_bound=$(num "$l" 'output: "100' 's/.*output: "\([0-9]*\).*/\1/p')
load_ok=$(num "$l" '^ok [0-9]* load-100-devices' 's/.*/1/p')
load_s=$(num "$l" '# bench: per scenario median' 's/.*median \([0-9.]*\)s.*/\1/p')
# VmRSS of usbrig-gadget serving 101 gadgets: before the 100 attach, and
# with all 100 attached (the run steps print it)
rss0=$( [ -r "$l" ] && grep 'output: "VmRSS' "$l" | sed -n '1s/.*VmRSS:[^0-9]*\([0-9]*\) kB.*/\1/p')
rss1=$( [ -r "$l" ] && grep 'output: "VmRSS' "$l" | sed -n '2s/.*VmRSS:[^0-9]*\([0-9]*\) kB.*/\1/p')
per_dev=
[ -n "$rss0" ] && [ -n "$rss1" ] &&
	per_dev=$(awk -v a="$rss0" -v z="$rss1" 'BEGIN { printf "%.1f", (z - a) / 100 }')

# bench-urb.json: one figure per `{"name": ...` line, its values on the
# lines up to the next
urb() {	# NAME FIELD
	[ -r "$b/bench-urb.json" ] || return 0
	awk -v n="\"$1\"" -v f="\"$2\":" '
		$0 ~ "\"name\": " n { on = 1 }
		on && $0 ~ "\"name\": " && $0 !~ n { on = 0 }
		on { for (i = 1; i < NF; i++) if ($i == f) {
			v = $(i + 1); sub(/,$/, "", v); print v; exit } }
	' "$b/bench-urb.json"
}

# bench-zero: "test N NAME ...: usbrig X MB/s, kernel Y MB/s, usbrig/kernel
# R", the isochronous ones ending ", nominal Z MB/s", and "kernel n/a
# (WHY)" where the kernel's path has no such endpoint
ZERO_TESTS="1 2 5 6 15 16"
zero() {	# MODE TEST FIELD(usbrig|kernel|ratio|nominal)
	f=$b/bench-zero-$1.txt
	[ -r "$f" ] || return 0
	case $3 in
	usbrig) e='s/.*: usbrig \([0-9.]*\) MB\/s.*/\1/p' ;;
	kernel) e='s/.*, kernel \([0-9.]*\) MB\/s.*/\1/p' ;;
	ratio) e='s/.*usbrig\/kernel \([0-9.]*\).*/\1/p' ;;
	nominal) e='s/.*, nominal \([0-9.]*\) MB\/s$/\1/p' ;;
	esac
	grep -m1 ": test $2 " "$f" | sed -n "$e"
}
zero_name() { [ -r "$b/bench-zero-guest.txt" ] && grep -m1 ": test $1 " "$b/bench-zero-guest.txt" | sed -n 's/.*: test [0-9]* \(.*\): usbrig .*/\1/p'; }
# the kernel's figure for the table: "n/a" when the line says so
zero_kernel() {	# TEST
	if [ -r "$b/bench-zero-guest.txt" ] &&
	   grep -m1 ": test $1 " "$b/bench-zero-guest.txt" | grep -q ', kernel n/a'; then
		echo n/a
	else
		or_dash "$(zero guest "$1" kernel)"
	fi
}

# bench-zero's "iso IN jitter, |URB interval - N ms| (...): usbrig median A
# p95 B max C ms (...), kernel ... | kernel n/a (WHY); guest timer median
# ..." line
jit() {	# MODE WHO(usbrig|kernel|timer) FIELD(median|p95|max)
	f=$b/bench-zero-$1.txt
	[ -r "$f" ] || return 0
	case $2 in
	usbrig) w=': usbrig' ;;
	kernel) w=', kernel' ;;
	timer) w='; guest timer' ;;
	esac
	case $3 in
	median) n=1 ;;
	p95) n=2 ;;
	max) n=3 ;;
	esac
	grep -m1 ': iso IN jitter' "$f" |
		sed -n "s/.*$w median \([0-9.]*\) p95 \([0-9.]*\) max \([0-9.]*\) ms.*/\1 \2 \3/p" |
		cut -d' ' -f"$n"
}
jit_nominal() { [ -r "$b/bench-zero-guest.txt" ] && grep -m1 ': iso IN jitter' "$b/bench-zero-guest.txt" | sed -n 's/.*|URB interval - \([0-9.]*\) ms|.*/\1/p'; }
jit3() {	# MODE WHO: "A/B/C", "n/a" or "-"
	m=$(jit "$1" "$2" median)
	if [ -n "$m" ]; then
		echo "$m/$(jit "$1" "$2" p95)/$(jit "$1" "$2" max)"
	elif [ -r "$b/bench-zero-$1.txt" ] &&
	     grep -m1 ': iso IN jitter' "$b/bench-zero-$1.txt" | grep -q ", $2 n/a"; then
		echo n/a
	else
		echo -
	fi
}
jit_json() {	# MODE WHO: {"median": A, "p95": B, "max": C} or null
	m=$(jit "$1" "$2" median)
	if [ -n "$m" ]; then
		printf '{"median": %s, "p95": %s, "max": %s}' "$m" \
			"$(jit "$1" "$2" p95)" "$(jit "$1" "$2" max)"
	else
		printf null
	fi
}

repro=$(num "$b/bench-repro.txt" '^verdict: ' 's/.* after \([0-9.]*\)s$/\1/p')
census=
if [ "${BENCH_CENSUS:-}" = 1 ] && [ -r "$b/bench-census.out" ]; then
	census=$(sed -n 's/^census: [0-9]* module(s), .* finding(s), \([0-9.]*\) s with .*/\1/p' \
		"$b/bench-census.out" | tail -1)
fi

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | head -1)
[ -n "$dirty" ] && commit="$commit+"

row() { printf '| %-46s | %-50s |\n' "$1" "$2"; }
echo "usbrig bench, $commit, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average at the end $(cut -d" " -f1 /proc/loadavg)"
row "figure" "value"
row "----------------------------------------------" "--------------------------------------------------"
row "boot to first scenario" "$(or_dash "$boot") s"
row "suite in one boot (1 job)" "$(or_dash "$wall") s; $(or_dash "$passed") passed, $(or_dash "$failed") failed, $(or_dash "$skipped") skipped"
row "suite of 2026-12-03 (suite-ref.txt, 1 job)" "$(or_dash "$ref_wall") s for $(or_dash "$ref_n") scenarios; $(or_dash "$ref_counts")"
row "per scenario (median, max)" "$(or_dash "$sc_med") s, $(or_dash "$sc_max") s ($(or_dash "$sc_max_name"))"
row "attach -> bound (median, p95)" "$(or_dash "$ab_med") ms, $(or_dash "$ab_p95") ms (n=$(or_dash "$ab_n"))"
row "new_id -> bound (median, p95)" "$(or_dash "$nb_med") ms, $(or_dash "$nb_p95") ms (n=$(or_dash "$nb_n"))"
# bulk-out and bulk-in are the same pairs, so one row
for f in control-1 control-pipelined bulk-out; do
	case $f in
	control-1) d="host URB/s, control, 1 in flight" ;;
	control-pipelined) d="host URB/s, control, 32 in flight" ;;
	bulk-out) d="host MB/s, 64 KiB bulk OUT+IN pairs, each way" ;;
	esac
	row "$d" "$(round "$(urb $f usbrig)") vs loopback $(round "$(urb $f loopback)") (x$(or_dash "$(urb $f ratio)"))"
done
for t in $ZERO_TESTS; do
	nom=$(zero guest "$t" nominal)
	zk=$(zero_kernel "$t")
	[ "$zk" = n/a ] || zk="$zk (x$(or_dash "$(zero guest "$t" ratio)"))"
	row "testusb $t $(zero_name "$t"), MB/s" "guest $(or_dash "$(zero guest "$t" usbrig)") vs kernel $zk; on host $(or_dash "$(zero host "$t" usbrig)")$( [ -n "$nom" ] && echo "; nominal $nom")"
done
row "iso IN jitter, ms off $(or_dash "$(jit_nominal)") (median/p95/max)" "guest $(jit3 guest usbrig) vs kernel $(jit3 guest kernel); guest timer $(jit3 guest timer); on host $(jit3 host usbrig)"
row "devices per guest (load-100-devices)" "$(or_dash "$load_bound") bound of 100$( [ -n "$load_ok" ] && echo ", passed" ), $(or_dash "$load_s") s"
row "server memory per attached device" "$(or_dash "$per_dev") KiB (VmRSS $(or_dash "$rss0") -> $(or_dash "$rss1") KiB)"
row "repro, start to verdict" "$(or_dash "$repro") s"
if [ "${BENCH_CENSUS:-}" = 1 ]; then
	row "census, whole" "$(or_dash "$census") s"
else
	row "census, whole (BENCH_CENSUS=1, ~15 min)" "not run"
fi

{
	printf '{\n  "commit": "%s",\n  "date": "%s",\n' "$commit" "$(date -u '+%Y-%m-%dT%H:%M:%SZ')"
	printf '  "load_average": %s,\n' "$(cut -d' ' -f1 /proc/loadavg)"
	printf '  "boot_to_first_scenario_s": %s,\n' "$(or_null "$boot")"
	printf '  "suite": {"wall_s": %s, "passed": %s, "failed": %s, "skipped": %s, "per_scenario_median_s": %s, "per_scenario_max_s": %s, "slowest": %s},\n' \
		"$(or_null "$wall")" "$(or_null "$passed")" "$(or_null "$failed")" "$(or_null "$skipped")" \
		"$(or_null "$sc_med")" "$(or_null "$sc_max")" \
		"$( [ -n "$sc_max_name" ] && echo "\"$sc_max_name\"" || echo null)"
	printf '  "suite_ref": {"wall_s": %s, "scenarios": %s},\n' \
		"$(or_null "$ref_wall")" "$(or_null "$ref_n")"
	printf '  "attach_to_bound_ms": {"median": %s, "p95": %s, "n": %s},\n' \
		"$(or_null "$ab_med")" "$(or_null "$ab_p95")" "$(or_null "$ab_n")"
	printf '  "newid_to_bound_ms": {"median": %s, "p95": %s, "n": %s},\n' \
		"$(or_null "$nb_med")" "$(or_null "$nb_p95")" "$(or_null "$nb_n")"
	printf '  "urb": {'
	sep=
	for f in control-1 control-pipelined bulk-out bulk-in; do
		printf '%s"%s": {"usbrig": %s, "loopback": %s, "ratio": %s}' "$sep" "$f" \
			"$(or_null "$(urb $f usbrig)")" "$(or_null "$(urb $f loopback)")" \
			"$(or_null "$(urb $f ratio)")"
		sep=', '
	done
	printf '},\n  "testusb_mb_s": {'
	sep=
	for t in $ZERO_TESTS; do
		printf '%s"%s": {"guest": %s, "kernel": %s, "ratio": %s, "host": %s, "nominal": %s}' "$sep" "$t" \
			"$(or_null "$(zero guest "$t" usbrig)")" "$(or_null "$(zero guest "$t" kernel)")" \
			"$(or_null "$(zero guest "$t" ratio)")" "$(or_null "$(zero host "$t" usbrig)")" \
			"$(or_null "$(zero guest "$t" nominal)")"
		sep=', '
	done
	printf '},\n  "iso_in_jitter_ms": {"nominal": %s, "guest": %s, "kernel": %s, "guest_timer": %s, "host": %s},\n' \
		"$(or_null "$(jit_nominal)")" "$(jit_json guest usbrig)" \
		"$(jit_json guest kernel)" "$(jit_json guest timer)" \
		"$(jit_json host usbrig)"
	printf '  "load": {"devices_bound": %s, "scenario_s": %s, "server_rss_kib_before": %s, "server_rss_kib_attached": %s, "server_kib_per_device": %s},\n' \
		"$(or_null "$load_bound")" "$(or_null "$load_s")" "$(or_null "$rss0")" \
		"$(or_null "$rss1")" "$(or_null "$per_dev")"
	printf '  "repro_s": %s,\n  "census_s": %s\n}\n' "$(or_null "$repro")" "$(or_null "$census")"
} >"$b/bench.json"
echo "(figures: $b/bench.json)"
