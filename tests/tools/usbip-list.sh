#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usbip-list.sh SERVER SCRIPT... - the stock usbip client lists every gadget.
#
# Starts SERVER (build/usbrig-gadget) with all SCRIPTs on a free port, runs
# `usbip --tcp-port PORT list -r 127.0.0.1` and checks, per script N, that the
# block of busid 1-N shows the device's vid:pid (lowercase hex, as usbip
# prints it) and the class triple of interface 0 of the first configuration.
# The expected values come from `SERVER --dump SCRIPT` (the device and
# "config 0" hex lines), so the script file format does not matter here.
#
# Prints one "ok N - ..." / "not ok N - ..." line per script (with the usbip
# output on a failure), then "usbip-list: P passed, F failed".  Exit status:
# 0 all passed, 1 a check failed, 2 usage or set-up error.

set -u

usage() {
	echo "usage: $0 SERVER SCRIPT..." >&2
	exit 2
}

[ $# -ge 2 ] || usage
server=$1
shift

usbip=$(command -v usbip || true)
[ -n "$usbip" ] || usbip=/usr/sbin/usbip
if [ ! -x "$usbip" ]; then
	echo "usbip-list: the usbip tool is not installed (Debian package usbip)" >&2
	exit 2
fi
if [ ! -x "$server" ]; then
	echo "usbip-list: $server: not an executable" >&2
	exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/usbip-list.XXXXXX") || exit 2
pid=

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

show() {
	# show FILE: the file, indented as KTAP diagnostics
	sed 's/^/# /' "$1" >&2
}

"$server" --port 0 --port-file "$tmp/port" "$@" 2>"$tmp/server.log" &
pid=$!
for _ in $(seq 300); do
	[ -s "$tmp/port" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		echo "usbip-list: server exited with status $? before listening:" >&2
		show "$tmp/server.log"
		pid=
		exit 1
	fi
	sleep 0.1
done
if [ ! -s "$tmp/port" ]; then
	echo "usbip-list: server wrote no port file in 30 s" >&2
	show "$tmp/server.log"
	exit 1
fi
port=$(cat "$tmp/port")

"$usbip" --tcp-port "$port" list -r 127.0.0.1 >"$tmp/list" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	echo "usbip-list: usbip list -r exited with $rc:" >&2
	show "$tmp/list"
	show "$tmp/server.log"
	exit 1
fi

# hex_bytes LABEL DUMPFILE: the bytes of "LABEL: hh hh ..." one per line
hex_bytes() {
	sed -n "s/^$1://p" "$2" | head -n1 | tr ' ' '\n' | sed '/^$/d'
}

# first_interface_class DUMPFILE: "cc/ss/pp" of the interface descriptor
# with the lowest bInterfaceNumber and bAlternateSetting 0 in configuration
# 0 (what usbip prints as interface 0), or nothing
first_interface_class() {
	hex_bytes "config 0" "$1" | awk '
		function hex(s) {
			d = "0123456789abcdef"
			return (index(d, substr(s, 1, 1)) - 1) * 16 + index(d, substr(s, 2, 1)) - 1
		}
		{ b[NR - 1] = tolower($1) }
		END {
			i = 0
			best = 256
			while (i + 1 < NR) {
				len = hex(b[i])
				if (len < 2)
					break
				if (b[i + 1] == "04" && len >= 9 && b[i + 3] == "00" &&
				    hex(b[i + 2]) < best) {
					best = hex(b[i + 2])
					cls = b[i + 5] "/" b[i + 6] "/" b[i + 7]
				}
				i += len
			}
			if (best < 256)
				print cls
		}'
}

echo "KTAP version 1"
echo "1..$#"
passed=0
failed=0
n=0
for script in "$@"; do
	n=$((n + 1))
	busid="1-$n"
	name=$(basename "$script")
	why=

	if ! "$server" --dump "$script" >"$tmp/dump" 2>"$tmp/dump.err"; then
		why="--dump failed"
		cat "$tmp/dump.err" >>"$tmp/dump"
	fi
	mapfile -t dev < <(hex_bytes device "$tmp/dump")
	if [ -z "$why" ] && [ ${#dev[@]} -lt 18 ]; then
		why="no device descriptor in the --dump output"
	fi
	if [ -z "$why" ]; then
		vidpid="${dev[9]}${dev[8]}:${dev[11]}${dev[10]}"
		class=$(first_interface_class "$tmp/dump")
		# this device's block: from its busid line to the blank line
		awk -v b="$busid" '
			$0 ~ "^ *" b ": " { on = 1 }
			on && /^$/ { exit }
			on { print }' "$tmp/list" >"$tmp/block"
		if [ ! -s "$tmp/block" ]; then
			why="busid $busid not listed"
		elif ! grep -q "($vidpid)\$" "$tmp/block"; then
			why="$busid does not show ($vidpid)"
		elif [ -n "$class" ] &&
		     ! grep -Eq "^ +: +0 - .*\($class\)\$" "$tmp/block"; then
			why="$busid does not show interface 0 class ($class)"
		elif ! grep -q "/sys/devices/usbrig/$busid\$" "$tmp/block"; then
			why="$busid does not show its path"
		fi
	fi

	if [ -z "$why" ]; then
		passed=$((passed + 1))
		echo "ok $n - $busid $vidpid${class:+ if0 $class} $name"
	else
		failed=$((failed + 1))
		echo "not ok $n - $busid $name: $why"
		show "$tmp/dump"
		show "$tmp/list"
	fi
done

kill "$pid"
wait "$pid"
rc=$?
pid=
if [ $rc -ne 0 ]; then
	echo "# server exit status $rc after SIGTERM:"
	show "$tmp/server.log"
	failed=$((failed + 1))
fi

echo "usbip-list: $passed passed, $failed failed"
[ $failed -eq 0 ]
