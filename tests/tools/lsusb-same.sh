#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lsusb-same.sh ORIGINAL COPY - does COPY show every field ORIGINAL shows?
#
# Both are `lsusb -v` texts of one device, possibly from different usbutils
# versions (their layouts and decodings differ).  A field is a line
# `NAME VALUE ...` inside a descriptor; it is compared by NAME and its
# first VALUE word, and for string indices (iProduct 2 Foo, ...) by the
# text after the index too.  ORIGINAL's fields must appear in COPY in the
# same order; COPY may show more (a report descriptor the original could
# not read, a Device Status block).  The `Bus NNN Device NNN` numbers are
# not compared.  Lines the original could not fill in (`** UNAVAILABLE **`,
# `Couldn't open device`, `can't get ...`) are not fields.
#
# Exit: 0 same, 1 a field differs or is missing (the first one is printed
# with ORIGINAL's line number), 2 usage.

set -u
[ $# -eq 2 ] && [ -r "$1" ] && [ -r "$2" ] || {
	echo "usage: $0 ORIGINAL COPY" >&2
	exit 2
}

fields() {
	awk '
	/^Bus [0-9]+ Device [0-9]+: ID / {
		sub(/^Bus [0-9]+ Device [0-9]+: /, "")
		print NR "\tID " $2
		next
	}
	/UNAVAILABLE|Couldn.t open device|can.t get |cannot read/ { next }
	{
		gsub(/\r/, "")
		if ($0 !~ /^[ \t]+[A-Za-z][A-Za-z0-9_()]*[ \t]+[^ \t]/)
			next
		name = $1
		key = name " " $2
		# a string index: the text after it counts too
		if (name ~ /^i[A-Z]/ && $2 ~ /^[0-9]+$/ && $2 != "0") {
			rest = $0
			sub(/^[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]*/, "", rest)
			key = key " " rest
		}
		print NR "\t" key
	}' "$1"
}

orig=$(mktemp) && copy=$(mktemp) || exit 2
trap 'rm -f "$orig" "$copy"' EXIT
fields "$1" >"$orig"
fields "$2" >"$copy"

awk -F '\t' -v origname="$1" -v copyname="$2" '
NR == FNR { c[++nc] = $2; next }
{
	while (j < nc && c[j + 1] != $2)
		j++
	if (j >= nc) {
		printf "%s:%d: field \"%s\" is not in %s (in order)\n",
			origname, $1, $2, copyname
		bad = 1
		exit 1
	}
	j++
	n++
}
END {
	if (!bad)
		printf "lsusb-same: %d fields of %s found in %s\n", n,
			origname, copyname
	exit bad
}' "$copy" "$orig"
