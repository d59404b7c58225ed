#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# man-check.sh BUILD - the manual pages (docs/man/) and the bash
# completions (contrib/bash-completion/) against the programs and docs/.
#
#   1. Every page renders with `groff -man -Tutf8 -ww` without a warning,
#      its .TH names the file, and (when man-db is installed) lexgrog
#      reads its NAME line as whatis would.
#   2. Options: each program's --help is run and every option it lists
#      (long `--foo`, and short `-x` that open a line) must be a tag (the
#      line after .TP) of the page's option section; and every option tag
#      of that section must be in --help (--help itself counts as listed
#      when it works: `usbrig repro --help' does not name itself).  usbrig has two sections:
#      OPTIONS for `usbrig --help`, REPRO OPTIONS for `usbrig repro --help`.
#      --version: the pages list it for every program; until each program's
#      --help lists it (other work in progress adds it), its absence from
#      --help is tolerated and said as a `#` line, not a failure.
#   3. Formats: each FORMAT name `usbrig-import --help` lists is bold in
#      usbrig-import(1).
#   4. docs/: every keyword of the keyword, behaviour and function-option
#      tables of docs/gadget-format.md is bold in usbrig-gadget(5), and
#      every statement of the tables of docs/scenario-format.md is bold in
#      usbrig-scenario(5) (`expect bound`, `requires tool`: both words).
#   5. Completions: each long option of --help is in the program's
#      completion file and the file offers none that --help lacks
#      (--version tolerated as above); then bash completes a few command
#      lines with it (options, formats, files).
#
# Prints "ok N - ..." / "not ok N - ..." (with "# " lines saying what is
# wrong), then "man-check: P passed, F failed".  Exit 0 all passed, 1
# otherwise, 2 bad usage or groff missing (`make deps` installs
# groff-base).

set -u
if [ $# -ne 1 ] || [ ! -d "$1" ]; then echo "usage: $0 BUILD" >&2; exit 2; fi
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
man=$root/docs/man
comp=$root/contrib/bash-completion
command -v groff >/dev/null ||
	{ echo "man-check: no groff (apt-get install groff-base)" >&2; exit 2; }
command -v perl >/dev/null || { echo "man-check: no perl" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/man-check.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

n=0 passed=0 failed=0
# result NAME: ok when $tmp/why is empty, else not ok with its lines
result() {
	n=$((n + 1))
	if [ -s "$tmp/why" ]; then
		echo "not ok $n - $1"
		sed 's/^/# /' "$tmp/why"
		failed=$((failed + 1))
	else
		echo "ok $n - $1"
		passed=$((passed + 1))
	fi
	: >"$tmp/why"
}
why() { echo "$*" >>"$tmp/why"; }
: >"$tmp/why"

# ---- helpers (perl: quoting-aware and the same on every host) ----

# help_opts: the options a --help text (stdin) lists, one a line: every
# --long anywhere, and -x where it opens a line ("  -a, --listen").
help_opts() {
	perl -ne 'print "$1\n" while /(?<![\w-])(--[a-z][a-z0-9-]*)/g;
		print "$1\n" if /^\s+(-[a-zA-Z])(?![\w-])/' | sort -u
}

# tag_opts PAGE SECTION: the options in the tags of SECTION of PAGE.
tag_opts() {
	perl -e '
		my ($file, $want) = @ARGV;
		open my $f, "<", $file or die "$file: $!\n";
		my ($in, $tp, $found) = (0, 0, 0);
		while (<$f>) {
			if (/^\.SH\s+"?([^"]*?)"?\s*$/) {
				$in = $1 eq $want; $found ||= $in; next;
			}
			next unless $in;
			if (/^\.TP\b/) { $tp = 1; next; }
			next unless $tp;
			$tp = 0;
			s/\\f(\[[^]]*\]|\(..|.)//g; s/\\-/-/g; s/\\e/\\/g;
			print "$1\n" while /(?<![\w-])(--?[a-zA-Z][a-z0-9-]*)/g;
		}
		exit($found ? 0 : 3);
	' "$1" "$2" | sort -u
	return "${PIPESTATUS[0]}"
}

# bold PAGE: the page rendered on one long line per paragraph, reduced to
# its bold phrases (bold words joined by blanks), one a line.
bold() {
	groff -man -Tutf8 -P-c -rLL=2000n "$1" 2>/dev/null |
	perl -CSD -ne '
		my $o = "";
		while (/\G(?:(.)\x08\1|_\x08(.)|(.))/gs) {
			if (defined $1) { $o .= $1 }
			elsif (defined $3 && $3 eq " ") { $o .= " " }
			else { $o .= "\n" }
		}
		for (split /\n/, $o) { s/^\s+|\s+$//g; s/\s+/ /g; print "$_\n" if length }
	'
}

# has_bold FILE WORDS: WORDS (a phrase) as whole words in a line of FILE
has_bold() {
	WORDS=$2 perl -ne 'BEGIN { $w = quotemeta $ENV{WORDS} }
		$ok = 1 if /(?<![\w.-])$w(?![\w-])/; END { exit !$ok }' "$1"
}

# ---- 1. rendering ----
pages=("$man"/*.[1-8])
[ -e "${pages[0]}" ] || { echo "man-check: no pages in $man" >&2; exit 2; }
for p in "${pages[@]}"; do
	base=${p##*/}
	name=${base%.*} sec=${base##*.}
	groff -man -Tutf8 -ww -z "$p" >"$tmp/out" 2>&1 ||
		why "groff exits $?"
	[ -s "$tmp/out" ] && cat "$tmp/out" >>"$tmp/why"
	th=$(sed -n 's/^\.TH[ \t]\{1,\}\([^ \t]*\)[ \t]\{1,\}\([^ \t]*\).*/\1 \2/p' "$p" |
		head -1 | sed 's/\\-/-/g')
	want="$(echo "$name" | tr '[:lower:]' '[:upper:]') $sec"
	[ "$th" = "$want" ] || why ".TH says '$th', the file name '$want'"
	if command -v lexgrog >/dev/null; then
		lexgrog "$p" >"$tmp/out" 2>&1 ||
			why "lexgrog cannot read the NAME line: $(cat "$tmp/out")"
	fi
	result "$base renders without warnings"
done
command -v lexgrog >/dev/null ||
	echo "# lexgrog (man-db) not installed: NAME lines not parsed"

# ---- 2. options: --help against the page ----
# program (as run), page, section, completion file
checks=(
	"usbrig|usbrig.1|OPTIONS|usbrig"
	"usbrig repro|usbrig.1|REPRO OPTIONS|usbrig"
	"usbrig census|usbrig.1|CENSUS OPTIONS|usbrig"
	"usbrig fuzz|usbrig.1|FUZZ OPTIONS|usbrig"
	"usbrig-gadget|usbrig-gadget.1|OPTIONS|usbrig-gadget"
	"usbrig-import|usbrig-import.1|OPTIONS|usbrig-import"
)
for c in "${checks[@]}"; do
	IFS='|' read -r prog page section cfile <<<"$c"
	bin=$build/${prog%% *}
	args=${prog#"${prog%% *}"}
	# shellcheck disable=SC2086 # args: "" or " repro"
	if ! "$bin" $args --help >"$tmp/help" 2>&1; then
		why "$prog --help exits $?"
	fi
	# --help just ran: it is accepted, listed or not
	{ help_opts <"$tmp/help"; [ -s "$tmp/why" ] || echo --help; } |
		sort -u >"$tmp/h"
	tag_opts "$man/$page" "$section" >"$tmp/m" ||
		why "$page has no section $section"
	for o in $(comm -23 "$tmp/h" "$tmp/m"); do
		why "$prog --help lists $o; $page $section does not"
	done
	for o in $(comm -13 "$tmp/h" "$tmp/m"); do
		if [ "$o" = --version ]; then
			echo "# $prog --help does not list --version yet; $page does (tolerated)"
			continue
		fi
		why "$page $section lists $o; $prog --help does not"
	done
	result "$prog: --help and $page $section list the same options"
done

# ---- 3. formats of usbrig-import ----
bold "$man/usbrig-import.1" >"$tmp/bold"
"$build/usbrig-import" --help | sed -n '/^FORMAT/,$p' |
	awk '/^  [a-z]+ / { print $1 }' >"$tmp/formats"
[ -s "$tmp/formats" ] || why "usbrig-import --help lists no FORMAT"
while read -r f; do
	has_bold "$tmp/bold" "$f" || why "format $f is not in usbrig-import.1"
done <"$tmp/formats"
result "usbrig-import.1 names every FORMAT of --help ($(wc -l <"$tmp/formats"))"

# ---- 4. the file formats against docs/ ----
# gadget-format.md: the first cell of each row of the tables whose first
# header is Keyword, Option or Behaviour; every `word` in it is a keyword.
perl -ne '
	if (/^\|/) {
		my @c = split /\s*\|\s*/, $_; shift @c;
		if (!$in_table) { $head = $c[0]; $in_table = 1; $rule = 1; next }
		if ($rule) { $rule = 0; next }
		next unless $head =~ /^(Keyword|Option|Behaviour)$/;
		print "$1\n" while $c[0] =~ /`([a-zA-Z][\w-]*)/g;
	} else { $in_table = 0 }
' "$root/docs/gadget-format.md" | sort -u >"$tmp/kw"
bold "$man/usbrig-gadget.5" >"$tmp/bold"
[ "$(wc -l <"$tmp/kw")" -gt 50 ] ||
	why "only $(wc -l <"$tmp/kw") keywords read from docs/gadget-format.md"
while read -r k; do
	has_bold "$tmp/bold" "$k" ||
		why "docs/gadget-format.md keyword $k is not in usbrig-gadget.5"
done <"$tmp/kw"
result "usbrig-gadget.5 has every keyword of docs/gadget-format.md ($(wc -l <"$tmp/kw"))"

# scenario-format.md: tables whose first header is "statement": the first
# word of each `...` of the first cell (two for expect and requires).
perl -ne '
	if (/^\|/) {
		my @c = split /\s*\|\s*/, $_; shift @c;
		if (!$in_table) { $head = $c[0]; $in_table = 1; $rule = 1; next }
		if ($rule) { $rule = 0; next }
		next unless $head eq "statement";
		while ($c[0] =~ /`([^`]+)`/g) {
			my @w = split " ", $1;
			print(($w[0] =~ /^(expect|requires)$/ ? "$w[0] $w[1]" : $w[0]), "\n")
				if $w[0] =~ /^[a-z]/;
		}
	} else { $in_table = 0 }
' "$root/docs/scenario-format.md" | sort -u >"$tmp/kw"
for s in run say; do echo "$s"; done >>"$tmp/kw"	# prose in the docs
bold "$man/usbrig-scenario.5" >"$tmp/bold"
[ "$(wc -l <"$tmp/kw")" -gt 20 ] ||
	why "only $(wc -l <"$tmp/kw") statements read from docs/scenario-format.md"
while read -r k; do
	has_bold "$tmp/bold" "$k" ||
		why "docs/scenario-format.md statement '$k' is not in usbrig-scenario.5"
done <"$tmp/kw"
result "usbrig-scenario.5 has every statement of docs/scenario-format.md ($(wc -l <"$tmp/kw"))"

# ---- 5. completions ----
for c in "${checks[@]}"; do
	IFS='|' read -r prog page section cfile <<<"$c"
	f=$comp/$cfile
	bin=$build/${prog%% *}
	args=${prog#"${prog%% *}"}
	if [ ! -f "$f" ]; then
		why "no $f"
	else
		# shellcheck disable=SC2086
		{ "$bin" $args --help 2>&1 | help_opts; echo --help; } |
			grep -- '^--' | sort -u >"$tmp/h"
		# the completion file's option list for this program: the words
		# of its `opts_<name>=` line(s)
		var=opts_$(echo "${prog#usbrig}" | tr -d ' -' | sed 's/^$/main/')
		VAR=$var perl -0ne 'print "$1\n" if /\b$ENV{VAR}=["\x27]([^"\x27]*)["\x27]/' \
			"$f" | tr -s ' \t\n' '\n' | grep -- '^--' | sort -u >"$tmp/m"
		[ -s "$tmp/m" ] || why "$cfile has no $var= list"
		for o in $(comm -23 "$tmp/h" "$tmp/m"); do
			why "$prog --help lists $o; $cfile ($var) does not"
		done
		for o in $(comm -13 "$tmp/h" "$tmp/m"); do
			[ "$o" = --version ] && continue
			why "$cfile ($var) offers $o; $prog --help does not"
		done
	fi
	result "$prog: the bash completion offers the options of --help"
done

# completing: LINE (the cursor at its end) must offer every WANT word
complete_case() {	# FILE "LINE" WANT...
	local file=$1 line=$2
	shift 2
	(
		cd "$tmp/files" || exit 1
		# shellcheck disable=SC1090
		source "$file" || exit 1
		read -r -a COMP_WORDS <<<"$line"
		[ "${line: -1}" = " " ] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$line COMP_POINT=${#line}
		fn=$(complete -p "${COMP_WORDS[0]}" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
		[ -n "$fn" ] || { echo "no completion for ${COMP_WORDS[0]}"; exit 1; }
		"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD-1]}"
		printf '%s\n' "${COMPREPLY[@]}"
	) >"$tmp/got" 2>&1
	for w in "$@"; do
		grep -qxF -- "$w" "$tmp/got" ||
			why "'$line' offers no '$w' (got: $(tr '\n' ' ' <"$tmp/got"))"
	done
}
mkdir -p "$tmp/files/sub"
touch "$tmp/files/a.gadget" "$tmp/files/b.scenario" "$tmp/files/dump.txt"
complete_case "$comp/usbrig" "usbrig --ke" --keep --kernel
complete_case "$comp/usbrig" "usbrig --kernel " patched patched-kasan debian:6.12
complete_case "$comp/usbrig" "usbrig " repro b.scenario sub
complete_case "$comp/usbrig" "usbrig repro --dr" --driver
complete_case "$comp/usbrig" "usbrig repro --expect " "crash" "no-crash"
complete_case "$comp/usbrig-gadget" "usbrig-gadget --ch" --check
complete_case "$comp/usbrig-gadget" "usbrig-gadget " a.gadget sub
complete_case "$comp/usbrig-import" "usbrig-import lsu" lsusb:
# bash splits words at `:' (COMP_WORDBREAKS): the reply is what follows it
complete_case "$comp/usbrig-import" "usbrig-import lsusb:" dump.txt
complete_case "$comp/usbrig" "usbrig repro x --expect 0:" bound: unbound
complete_case "$comp/usbrig-import" "usbrig-import -o " a.gadget
result "bash completes options, values, formats and files"

echo "man-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
