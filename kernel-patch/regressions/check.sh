#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel-patch/regressions/check.sh - what `make check-regressions` runs.
#
# For every entry NNN-name/ of the corpus: build the patched guest kernel
# with NNN-name/mutant.patch on top of the series (kernel-patch/build.sh
# --patch, into an output folder of its own, so build/kernel/bzImage stays
# the clean kernel), run the scenarios NNN-name/catches names on it, and
# expect them to fail. Then the clean kernel must pass the same scenarios.
# One table at the end; exit 1 if a mutant was missed, did not build, or
# the clean kernel failed.
#
# Builds take turns (build.sh's lock) and run at nice 19; the guest runs
# go in the background, so the next mutant builds while the last one boots.

set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

build=$top/build
usbrig=
cache=
out=
full=0
run_jobs=2
kjobs=$(nproc)
# a safety net over usbrig's own budgets (600 s, or 3600 s with --full)
run_timeout=
only=()

usage() {
	cat <<EOF
usage: $0 [options] [ENTRY...]
  --build DIR      build folder (default build/): usbrig is DIR/usbrig
  --usbrig BIN     the harness (default BUILD/usbrig)
  --cache DIR      kernel cache shared with make kernel (default BUILD/kernel)
  --out DIR        mutant kernels, logs, KTAP (default BUILD/regress)
  --full           run the whole tests/scenarios suite on each mutant and
                   on the clean kernel, not only the scenarios named
  --run-jobs N     usbrig runs at once (default 2: a guest mostly waits;
                   the builds run beside them at nice 19)
  --jobs N         make -jN for the kernel (default: nproc)
ENTRY: an entry's folder name or its number (003); default: all.
The clean kernel is CACHE/bzImage, built (or found up to date) first.
EOF
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--usbrig) usbrig=$2; shift 2 ;;
	--cache) cache=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--full) full=1; shift ;;
	--run-jobs) run_jobs=$2; shift 2 ;;
	--jobs) kjobs=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) echo "check.sh: unknown option $1" >&2; usage ;;
	*) only+=("$1"); shift ;;
	esac
done
# A make that calls us must not leak its flags into Kbuild or the harness.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

cd "$top" || exit 2
run_timeout=${run_timeout:-$([ $full -eq 1 ] && echo 3600 || echo 600)}
build=${build%/}
usbrig=${usbrig:-$build/usbrig}
cache=${cache:-$build/kernel}
out=${out:-$build/regress}
mkdir -p "$out"

if [ ! -x "$usbrig" ]; then
	echo "check.sh: no harness at $usbrig (make $usbrig)" >&2
	exit 2
fi

t0=$(date +%s)
say() { printf 'regress: %s\n' "$*"; }

# ---- the corpus ---------------------------------------------------------
entries=()
for d in "$here"/[0-9][0-9][0-9]-*/; do
	d=${d%/}
	n=$(basename "$d")
	if [ ${#only[@]} -gt 0 ]; then
		keep=0
		for o in "${only[@]}"; do
			case $n in "$o"|"$o"-*) keep=1 ;; esac
		done
		[ $keep -eq 1 ] || continue
	fi
	for f in mutant.patch catches README.md; do
		if [ ! -f "$d/$f" ]; then
			echo "check.sh: $n has no $f" >&2
			exit 2
		fi
	done
	entries+=("$n")
done
if [ ${#entries[@]} -eq 0 ]; then
	echo "check.sh: no entry matches ${only[*]}" >&2
	exit 2
fi

# The scenario names an entry lists; '#' comments, blank lines ignored.
catches_of() {
	sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/$1/catches" | grep -v '^$'
}

# Scenario files for a list of names: tests/scenarios/NAME.scenario.
scenario_files() {
	local s
	for s in "$@"; do
		if [ ! -f "tests/scenarios/$s.scenario" ]; then
			echo "check.sh: no tests/scenarios/$s.scenario" >&2
			return 1
		fi
		echo "tests/scenarios/$s.scenario"
	done
}

all_named=()
for n in "${entries[@]}"; do
	mapfile -t c < <(catches_of "$n")
	if [ ${#c[@]} -eq 0 ]; then
		echo "check.sh: $n/catches names no scenario" >&2
		exit 2
	fi
	scenario_files "${c[@]}" > /dev/null || exit 2
	all_named+=("${c[@]}")
done
mapfile -t all_named < <(printf '%s\n' "${all_named[@]}" | sort -u)

# ---- guest runs, in the background ---------------------------------------
# run_suite NAME KERNEL_DIR FILES...: usbrig on that kernel; leaves
# OUT/NAME/{ktap,usbrig.log,junit.xml,rc}. The boot folders usbrig keeps
# for failed scenarios (in BUILD/runs/) move to OUT/NAME/runs/: a mutant's
# failures are expected and would only clutter the folder CI publishes.
run_suite() {
	local kdir=$2 dir=$out/$1 rc rd t
	shift 2
	rm -rf "$dir/runs" "$dir/ktap" "$dir/rc" "$dir/secs" "$dir/junit.xml"
	mkdir -p "$dir/runs"
	t=$(date +%s)
	timeout -k 10 "$run_timeout" "$usbrig" --kernel "$kdir/bzImage" \
		--modules "$kdir/modules" --junit "$dir/junit.xml" "$@" \
		> "$dir/ktap" 2> "$dir/usbrig.log"
	rc=$?
	sed -n 's|^# console: \(.*\)/job[0-9]*-boot[0-9]*/console\.log$|\1|p' \
		"$dir/ktap" | sort -u | while read -r rd; do
		[ -d "$rd" ] || continue
		rm -f "$rd"/*/initramfs.cpio
		mv "$rd" "$dir/runs/" 2>/dev/null || true
	done
	echo $(( $(date +%s) - t )) > "$dir/secs"
	echo "$rc" > "$dir/rc"
}

running=0
start_run() {
	while [ "$running" -ge "$run_jobs" ]; do
		wait -n
		running=$((running - 1))
	done
	run_suite "$@" &
	running=$((running + 1))
}

# ---- the clean kernel ---------------------------------------------------
say "clean kernel: kernel-patch/build.sh --cache $cache"
mkdir -p "$out/clean"
if ! kernel-patch/build.sh --cache "$cache" --jobs "$kjobs" \
	> "$out/clean/build.log" 2>&1; then
	tail -n 20 "$out/clean/build.log" >&2
	echo "check.sh: the clean kernel does not build" >&2
	exit 1
fi
clean_sum=$(sha256sum "$cache/bzImage" | cut -c1-16)
if [ $full -eq 1 ]; then
	clean_files=(tests/scenarios)
else
	mapfile -t clean_files < <(scenario_files "${all_named[@]}")
fi
start_run clean "$cache" "${clean_files[@]}"

# ---- the mutants ----------------------------------------------------------
declare -A built
for n in "${entries[@]}"; do
	dir=$out/$n
	mkdir -p "$dir"
	t=$(date +%s)
	if kernel-patch/build.sh --cache "$cache" --jobs "$kjobs" \
		--patch "$here/$n/mutant.patch" --out "$dir/kernel" \
		> "$dir/build.log" 2>&1; then
		if grep -q '^kernel: up to date' "$dir/build.log"; then
			built[$n]="cached"
		else
			built[$n]="yes, $(( $(date +%s) - t ))s"
		fi
		say "$n: built (${built[$n]}), running"
		if [ $full -eq 1 ]; then
			files=(tests/scenarios)
		else
			mapfile -t c < <(catches_of "$n")
			mapfile -t files < <(scenario_files "${c[@]}")
		fi
		start_run "$n" "$dir/kernel" "${files[@]}"
	else
		built[$n]="FAILED"
		say "$n: does not build, see $dir/build.log"
		tail -n 5 "$dir/build.log" | sed 's/^/    /'
	fi
done
wait

# The clean kernel is the one it was: the mutants went elsewhere.
if [ "$(sha256sum "$cache/bzImage" | cut -c1-16)" != "$clean_sum" ]; then
	echo "check.sh: $cache/bzImage changed during the run" >&2
	clean_changed=1
else
	clean_changed=0
fi

# ---- the table ------------------------------------------------------------
# Top-level KTAP results: "not ok N name[ # DIRECTIVE]".
failed_in() {
	sed -n 's/^not ok [0-9]* \([^ #]*\).*/\1/p' "$1" 2>/dev/null
}
summary_of() {
	local s
	s=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$1" \
		2>/dev/null | tail -n 1)
	echo "${s:-no result}"
}

bad=0
rows=()
for n in "${entries[@]}"; do
	dir=$out/$n
	if [ "${built[$n]}" = FAILED ]; then
		rows+=("$n|FAILED|-|-|MISSED")
		bad=1
		continue
	fi
	rc=$(cat "$dir/rc" 2>/dev/null || echo 255)
	mapfile -t c < <(catches_of "$n")
	mapfile -t f < <(failed_in "$dir/ktap")
	named=()
	others=0
	for s in "${f[@]}"; do
		if printf '%s\n' "${c[@]}" | grep -qxF "$s"; then
			named+=("$s")
		else
			others=$((others + 1))
		fi
	done
	list=$(IFS=,; echo "${named[*]}")
	list=${list//,/, }
	[ $others -eq 0 ] || list="${list:+$list }(+$others other)"
	result="$(summary_of "$dir/ktap") (exit $rc, $(cat "$dir/secs" \
		2>/dev/null || echo '?')s)"
	if [ "$rc" = 1 ] && [ ${#named[@]} -gt 0 ]; then
		verdict=CAUGHT
	else
		verdict=MISSED
		bad=1
	fi
	rows+=("$n|${built[$n]}|$result|${list:--}|$verdict")
done
rc=$(cat "$out/clean/rc" 2>/dev/null || echo 255)
mapfile -t f < <(failed_in "$out/clean/ktap")
list=$(IFS=,; echo "${f[*]}")
if [ "$rc" = 0 ] && [ $clean_changed -eq 0 ]; then
	verdict=PASS
else
	verdict=FAIL
	bad=1
fi
rows+=("clean (no mutant)|$(grep -q '^kernel: up to date' \
	"$out/clean/build.log" && echo cached || echo yes)|$(summary_of \
	"$out/clean/ktap") (exit $rc, $(cat "$out/clean/secs" 2>/dev/null ||
	echo '?')s)|${list:--}|$verdict")

{
	printf '\n'
	printf '%s\n' "mutant|built|suite result|failing scenario(s) named|verdict" \
		"${rows[@]}" | column -t -s '|' -o ' | '
	printf '\n'
	if [ $full -eq 1 ]; then
		echo "suite: the whole tests/scenarios on every kernel"
	else
		echo "suite: the scenarios each entry's catches file names" \
			"(clean kernel: all ${#all_named[@]} of them)"
	fi
	if [ $clean_changed -eq 0 ]; then
		echo "clean kernel: $cache/bzImage (sha256 $clean_sum...), unchanged"
	else
		echo "clean kernel: $cache/bzImage CHANGED during the run"
	fi
	echo "logs: $out/<entry>/{build.log,ktap,usbrig.log,junit.xml,runs/}"
	echo "wall time: $(( $(date +%s) - t0 ))s"
} | tee "$out/table.txt"

exit $bad
