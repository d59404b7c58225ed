#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# smoke.sh USBRIG OUT [SEED [DEVICES]] - `make check-fuzz-kernel`: a short
# `usbrig fuzz` that must find what it was given.  Device 0 carries the
# planted trigger (--plant: vendor-bulk with three bent class descriptors
# and interface 0 made a Bluetooth HCI interface, whose driver loads
# ecdh_generic, whose self-test WARNs in a guest without the default RNG,
# which the plant's scenarios take out: docs/fuzzing.md).  Checks: the run
# (8 devices) finds it, confirms it alone, minimises it to the one planted
# mutation, its repro.scenario passes on its own (the report comes back),
# the same scenario with the RNG left in the guest passes with no report
# at all (the report is the missing RNG's, which every other guest has),
# and a dry run of the same seed draws the same devices.
set -u
usbrig=$1 out=$2 seed=${3:-1} devices=${4:-8}

fail() {
	echo "check-fuzz-kernel: FAIL: $*" >&2
	exit 1
}

rm -rf "$out"
nice -n 10 "$usbrig" fuzz --seed "$seed" --devices "$devices" --plant \
	--jobs 2 --duration 600 --out "$out"
rc=$?
[ $rc = 1 ] || fail "usbrig fuzz exit $rc, expected 1 (findings)"
json=$out/summary.json
line=$(grep '"planted": true' "$json") || fail "no planted finding in $json"
dir=$(echo "$line" | sed 's/.*"dir": "\([^"]*\)".*/\1/')
echo "$line" | grep -q '"confirmed": true' || fail "$dir: not confirmed"
echo "$line" | grep -q '"minimised": 1,' ||
	fail "$dir: not minimised to one mutation: $line"
echo "$line" | grep -q 'bInterfaceClass 0xe0' ||
	fail "$dir: the mutation left is not the planted one: $line"
grep -q '# fuzz M[0-9]* (planted)' "$out/$dir/$dir-minimised.gadget" ||
	fail "$dir: the minimised gadget lacks the planted line"

# the finding's scenario reproduces it alone (expect kernel-report)
nice -n 10 "$usbrig" --save-dir "$out/repro-saved" "$out/$dir/repro.scenario" \
	>"$out/repro.ktap" 2>"$out/repro.log" ||
	fail "$out/$dir/repro.scenario does not reproduce (see $out/repro.ktap)"

# with drbg left in the guest, as every scenario but the plant's has it,
# the same device gives no report (a report fails the scenario), while
# btusb is bound and the kernel loaded drbg on demand
grep -q 'drbg\.ko' "$out/$dir/repro.scenario" ||
	fail "$out/$dir/repro.scenario does not take the RNG out"
loaded="grep '^btusb ' /proc/modules && grep '^drbg ' /proc/modules"
grep -v -e 'drbg' -e 'default RNG' -e '^expect kernel-report' \
	"$out/$dir/repro.scenario" |
	awk -v step="run \"$loaded\" within 10s" \
		'{ print } /census-probe static/ { print step }' \
	>"$out/$dir/with-rng.scenario"
if ! nice -n 10 "$usbrig" --save-dir "$out/with-rng-saved" \
	"$out/$dir/with-rng.scenario" >"$out/with-rng.ktap" \
	2>"$out/with-rng.log"; then
	grep -q "not ok .*/proc/modules" "$out/with-rng.ktap" &&
		fail "with the RNG in the guest: btusb not bound or drbg not loaded on demand (see $out/with-rng.ktap)"
	fail "the planted device reports with the RNG in the guest too (see $out/with-rng.ktap)"
fi

# the same seed, the same devices
"$usbrig" fuzz --seed "$seed" --devices "$devices" --plant --dry-run \
	--out "$out-dry" >/dev/null 2>&1
grep -v '^device [0-9]*: ' "$out/devices.txt" >"$out/devices.drawn"
cmp -s "$out/devices.drawn" "$out-dry/devices.txt" ||
	fail "seed $seed drew other devices the second time ($out-dry/devices.txt)"
rm -rf "$out-dry"
echo "check-fuzz-kernel: OK: $dir minimised to the planted mutation and reproduced"
