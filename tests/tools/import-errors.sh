#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# import-errors.sh IMPORT - usbrig-import on bad input: a clear message
# that says where and what, exit 1 (2 for usage), and nothing written.
#
# Each case runs IMPORT with -o pointing at a file that already holds a
# marker: it must still hold the marker afterwards.  The inputs are the
# committed ones of tests/data/import/, or made here: a pcap cut inside its
# first packet and a pcap of Ethernet frames (the files' headers written
# with printf: only libpcap reads them, in usbrig-import).
#
# Prints "ok N - ..." / "not ok N - ..." per case, then
# "import-errors: P passed, F failed".  Exit 0 all passed, 1 otherwise.

set -u
[ $# -eq 1 ] && [ -x "$1" ] || { echo "usage: $0 IMPORT" >&2; exit 2; }
import=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$root/tests/data/import
tmp=$(mktemp -d "${TMPDIR:-/tmp}/import-errors.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# a pcap global header: magic, 2.4, zone, sigfigs, snaplen, link type
pcap_header() {	# LINKTYPE (decimal, < 256)
	printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\0\0\0\0\0\0\0\0\xff\xff\0\0'
	printf "\\x$(printf %02x "$1")\\0\\0\\0"
}
# a record of 64 bytes (timestamp, incl_len, orig_len), body not included
record_header() {
	printf '\0\0\0\0\0\0\0\0\x40\0\0\0\x40\0\0\0'
}
{ pcap_header 220; record_header; head -c 20 /dev/zero; } >"$tmp/cut.pcap"
{ pcap_header 1; record_header; head -c 64 /dev/zero; } >"$tmp/ethernet.pcap"
printf 'not a dump at all\n' >"$tmp/prose.txt"
# two adapters with the same ids, as a paste of `lsusb -v` shows them
{ cat "$data/lsusb/ftdi-007.txt"; echo
  sed '1s/Device [0-9]*:/Device 009:/' "$data/lsusb/ftdi-007.txt"; } >"$tmp/twins.txt"

n=0 passed=0 failed=0
# case NAME EXIT PATTERN ARGS...: IMPORT ARGS -o OUT exits EXIT, its
# stderr matches the extended regex PATTERN, OUT is untouched
case_() {
	local name=$1 want=$2 pattern=$3 out=$tmp/out.gadget st
	shift 3
	n=$((n + 1))
	echo marker >"$out"
	"$import" "$@" -o "$out" >"$tmp/stdout" 2>"$tmp/stderr"
	st=$?
	if [ $st -ne "$want" ]; then
		echo "not ok $n - $name: exit $st, expected $want"
	elif ! grep -Eq -e "$pattern" "$tmp/stderr"; then
		echo "not ok $n - $name: message does not match /$pattern/"
	elif [ "$(cat "$out")" != marker ] || ls "$tmp"/out.gadget.tmp.* >/dev/null 2>&1; then
		echo "not ok $n - $name: the output file was touched"
	else
		echo "ok $n - $name: $(head -1 "$tmp/stderr")"
		passed=$((passed + 1))
		return
	fi
	sed 's/^/#   /' "$tmp/stderr"
	failed=$((failed + 1))
}

case_ "binary junk, format guessed" 1 \
	"binary\\.bin:1: cannot tell what kind of dump" \
	"$data/lsusb/binary.bin"
case_ "binary junk read as lsusb" 1 \
	"binary\\.bin:[0-9]+: binary data .*not \`lsusb -v\` text" \
	"lsusb:$data/lsusb/binary.bin"
case_ "prose, format guessed" 1 "prose\\.txt:1: cannot tell" \
	"$tmp/prose.txt"
case_ "a paste with no device (plain lsusb)" 1 \
	"no-device\\.txt:1: .*lists devices but prints no descriptors" \
	"$data/lsusb/no-device.txt"
case_ "a paste cut inside the device descriptor" 1 \
	"cut-in-device\\.txt:[0-9]+: the device descriptor is cut short" \
	"$data/lsusb/cut-in-device.txt"
case_ "a truncated pcap" 1 "cut\\.pcap: frame 1: " "pcap:$tmp/cut.pcap"
case_ "an unknown link type" 1 \
	"ethernet\\.pcap: link type 1 is not a USB capture: usbrig reads 189, 220, 249" \
	"$tmp/ethernet.pcap"
case_ "an ambiguous dump without --select" 1 \
	"two-devices\\.0u: 2 devices match: .*choose one with --select" \
	"usbmon:$data/two-devices.0u"
case_ "an ambiguous --select" 1 \
	"twins\.txt: 2 devices match --select 0403:6001: .*choose one with --select BUS:DEV" \
	"$tmp/twins.txt" --select 0403:6001
case_ "--select that matches nothing" 1 \
	"two-devices\\.0u: no device matches --select 9999:9999" \
	"usbmon:$data/two-devices.0u" --select 9999:9999
case_ "--select that is neither VID:PID nor BUS:DEV" 1 \
	"--select 12x4: expected VID:PID" \
	"usbmon:$data/two-devices.0u" --select 12x4
case_ "a sysfs hex paste with a typo" 1 "typo\\.txt:2: 'zz' is not a hex byte" \
	"sysfs:$(printf '12 01 00 02 00 00 00 40\n09 12 zz 00\n' >"$tmp/typo.txt"; echo "$tmp/typo.txt")"
case_ "a missing file" 1 "nothing\\.txt: No such file" "$tmp/nothing.txt"
case_ "an unknown option" 2 "usage: usbrig-import" --bogus "$tmp/prose.txt"
case_ "two inputs" 2 "expected one \\[FORMAT:\\]FILE" \
	"$tmp/prose.txt" "$tmp/prose.txt"

# not an error, but the same code path: an output that is not a regular
# file is written to, never replaced by a rename (as root a rename over
# /dev/null would put a plain file there)
n=$((n + 1))
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
"$import" "$data/three.devices" --select 001:005 -o "$tmp/fifo" 2>"$tmp/stderr"
st=$?
sleep 0.2
kill $reader 2>/dev/null	# still waiting: nothing was written to the FIFO
wait $reader 2>/dev/null
if [ $st -eq 0 ] && [ -p "$tmp/fifo" ] && grep -q "idVendor 0x0403" "$tmp/fifo.out"; then
	echo "ok $n - an output that is a FIFO is written to, not replaced"
	passed=$((passed + 1))
else
	echo "not ok $n - an output that is a FIFO is written to, not replaced"
	sed 's/^/#   /' "$tmp/stderr"
	failed=$((failed + 1))
fi

echo "import-errors: $passed passed, $failed failed"
[ $failed -eq 0 ]
