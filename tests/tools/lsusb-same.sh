#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lsusb-same.sh ORIGINAL COPY - does COPY show every field ORIGINAL shows?
#
# Both are `lsusb -v` texts of one device, possibly from different usbutils
# versions, which differ in layout, wording and the order of the top-level
# blocks, not in the descriptor fields.  So:
# - a field is a line `NAME VALUE ...` whose NAME is a descriptor field
#   (lower-case type prefix, then a capital: bLength, wTotalLength,
#   bmAttributes, iProduct, baInterfaceNr(0), ...); decoded words and
#   headers (`Self Powered`, `MaxPower 100mA`, `Port 1: ...`) are not;
# - it is compared by NAME and VALUE, numbers by value (usbutils printed
#   wTotalLength in decimal, later in hex), `( 0)` as `(0)`; a string index
#   (iProduct 2 Foo) by the text after it too, unless ORIGINAL could not
#   read it (no text, `(??)`, `(error)`);
# - a field printed one byte per line under one name (old usbutils
#   bmaControls) is one little-endian value;
# - names old usbutils misspelt count as the new ones (bNumFormarts);
# - bNumCompressionPatterns is not compared: old usbutils printed the
#   image size count there, the importer takes what bLength leaves room
#   for (and notes it);
# - quantities printed with a unit (`8 milli Ampere`, `3202 nano seconds`)
#   are decodings, and usbutils versions decode some differently: skipped;
# - the fields of a top-level block (`Device Descriptor:`, `Binary Object
#   Store Descriptor:`, `Device Qualifier ...:`, `Hub Descriptor:`, ...)
#   must appear in COPY's block of that name, in the same order; the
#   blocks may come in any order;
# - the `Bus NNN Device NNN` numbers are not compared, the ID is;
# - a paste still in quoted-printable (`=20`, `=3D`, soft line breaks) is
#   decoded first, as a mail reader would.
#
# Exit: 0 same, 1 a field differs or is missing (the first one is printed
# with ORIGINAL's line number), 2 usage.

set -u
[ $# -eq 2 ] && [ -r "$1" ] && [ -r "$2" ] || {
	echo "usage: $0 ORIGINAL COPY" >&2
	exit 2
}

# FILE -> lines "LINE \t BLOCK \t KEY \t TEXT"
fields() {
	awk '
	function num(v,    i, n) {
		if (v ~ /^0x[0-9a-fA-F]+$/) {
			n = 0
			v = tolower(substr(v, 3))
			for (i = 1; i <= length(v); i++)
				n = n * 16 + index("0123456789abcdef", substr(v, i, 1)) - 1
			return n ""
		}
		if (v ~ /^[0-9]+$/)
			return (v + 0) ""
		return v
	}
	function hexbyte(h) {
		return (index("0123456789ABCDEF", substr(h, 1, 1)) - 1) * 16 + \
		       index("0123456789ABCDEF", substr(h, 2, 1)) - 1
	}
	BEGIN {
		alias["bNumFormarts"] = "bNumFormats"
		alias["bNumControl"] = "bNumControls"
		alias["bEndPointAddress"] = "bEndpointAddress"
		alias["bNrPins"] = "bNrInPins"
		block = "(top)"
		for (i = 32; i < 127; i++)
			chr[i] = sprintf("%c", i)
	}
	FNR == 1 { qp = 0 }
	# quoted-printable: a soft break ends a line with "=", =XX is a byte
	qp || /=20$|=3D|=$/ {
		if (!qp && $0 !~ /=20$|=3D/)
			;
		else {
			qp = 1
			line = $0
			while (line ~ /=$/ && (getline nxt) > 0)
				line = substr(line, 1, length(line) - 1) nxt
			out = ""
			while (match(line, /=[0-9A-F][0-9A-F]/)) {
				b = hexbyte(substr(line, RSTART + 1, 2))
				out = out substr(line, 1, RSTART - 1) (b in chr ? chr[b] : " ")
				line = substr(line, RSTART + 3)
			}
			$0 = out line
		}
	}
	{ gsub(/\r/, "") }
	/^Bus [0-9]+ Device [0-9]+: ID / {
		sub(/^Bus [0-9]+ Device [0-9]+: /, "")
		flush()
		print FNR "\t(top)\tID " $2 "\t"
		next
	}
	/^(Device Descriptor|Binary Object Store Descriptor|Device Qualifier|Hub Descriptor|Device Status|Debug descriptor|Other Speed Configuration).*:/ {
		block = $0
		next
	}
	{
		gsub(/\( +/, "(")
		gsub(/ +\)/, ")")
		if ($0 !~ /^[ \t]+[a-z]+[A-Z0-9][A-Za-z0-9_()]*[ \t]+[^ \t]/)
			next
		name = $1
		if (name in alias)
			name = alias[name]
		if ($2 == "0x")		# old usbutils printed nothing after 0x
			next
		# old usbutils printed bNumImageSizePatterns here (a UVC still
		# image frame bLength says how many there really are)
		if (name == "bNumCompressionPatterns")
			next
		# a quantity in units is decoded, and versions decode some
		# differently (bHubContrCurrent, wHubDelay of a SuperSpeed hub)
		if ($3 ~ /^(milli|micro|nano)$/ || $4 ~ /^(milli|micro|nano)$/)
			next
		rest = ""
		if (name ~ /^i[A-Z]/ && $2 ~ /^[0-9]+$/ && $2 != "0") {
			rest = $0
			sub(/^[ \t]+[^ \t]+[ \t]+[^ \t]+ ?/, "", rest)
			if (rest == "(??)" || rest == "(error)")
				rest = ""
		}
		# old usbutils printed a wide bmaControls(N) one byte per
		# line, under one name: the bytes are one little-endian value
		v = num($2)
		if (pn == name && pb == block && v ~ /^[0-9]+$/ &&
		    pv ~ /^[0-9]+$/ && rest == "") {
			pv = pv + v * pm
			pm *= 256
			next
		}
		flush()
		pl = FNR; pb = block; pn = name; pv = v; pr = rest; pm = 256
	}
	function flush() {
		if (pn != "")
			print pl "\t" pb "\t" pn " " pv "\t" pr
		pn = ""
	}
	END { flush() }' "$1"
}

orig=$(mktemp) && copy=$(mktemp) || exit 2
trap 'rm -f "$orig" "$copy"' EXIT
fields "$1" >"$orig"
fields "$2" >"$copy"

# per block of ORIGINAL, a subsequence of COPY's block of the same name
awk -F '\t' -v origname="$1" -v copyname="$2" '
NR == FNR {
	n[$2]++
	c[$2, n[$2]] = $3
	ct[$2, n[$2]] = $4
	next
}
{
	b = $2
	while (j[b] < n[b] && (c[b, j[b] + 1] != $3 ||
	       ($4 != "" && ct[b, j[b] + 1] != $4)))
		j[b]++
	if (j[b] >= n[b]) {
		printf "%s:%d: field \"%s%s%s\" (in \"%s\") is not in %s (in order)\n",
			origname, $1, $3, $4 == "" ? "" : " ", $4, b, copyname
		bad = 1
		exit 1
	}
	j[b]++
	total++
}
END {
	if (!bad)
		printf "lsusb-same: %d fields of %s found in %s\n", total,
			origname, copyname
	exit bad
}' "$copy" "$orig"
