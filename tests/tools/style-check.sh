#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# style-check.sh CHECKPATCH - the tree in kernel coding style, checked by
# the kernel's own scripts/checkpatch.pl (from Debian's linux-source-6.1,
# extracted by the Makefile; never committed).
#
# Every .c and .h under gadgets/, harness/ and tests/ is checked as a file
# (-f, --no-tree).  Ignored, and why:
#   BLOCK_COMMENT_STYLE  this tree ends a block comment on its last line of
#                        text (`...text */`), as much of the kernel does
#   SPLIT_STRING, STRING_FRAGMENTS, QUOTED_WHITESPACE_BEFORE_NEWLINE
#                        help texts and column-aligned messages of programs
#                        (the kernel's reason, grepping dmesg, is not ours)
#   ARRAY_SIZE, PREFER_DEFINED_ATTRIBUTE_MACRO
#                        kernel-only macros (ARRAY_SIZE, __printf)
#   EMBEDDED_FUNCTION_NAME, EMBEDDED_FILENAME
#                        a usage() that prints "usage:", a program that
#                        names itself: the words, not the function
#   ENOSYS, VOLATILE     userspace: ENOSYS for an unsupported call,
#                        volatile sig_atomic_t in signal handlers
# Single findings that are not style faults (checkpatch misreading a shell
# command in a string, a macro that builds an initializer list) are listed
# with their reason in tests/tools/style-allow.txt, matched by file, type
# and the text of the source line.  Everything else fails the check.
#
# Prints checkpatch's findings (file:line: TYPE: message) and a closing
# "style-check: N files, F findings" line.  Exit 0 clean, 1 findings,
# 2 usage.

set -u
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: $0 CHECKPATCH" >&2; exit 2; }
checkpatch=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2

IGNORE=BLOCK_COMMENT_STYLE,SPLIT_STRING,STRING_FRAGMENTS
IGNORE=$IGNORE,QUOTED_WHITESPACE_BEFORE_NEWLINE,ARRAY_SIZE
IGNORE=$IGNORE,PREFER_DEFINED_ATTRIBUTE_MACRO,EMBEDDED_FUNCTION_NAME
IGNORE=$IGNORE,EMBEDDED_FILENAME,ENOSYS,VOLATILE

mapfile -t files < <(find gadgets harness tests -name '*.[ch]' | sort)
out=$(perl "$checkpatch" --no-tree --terse --show-types --ignore "$IGNORE" \
	-f "${files[@]}" 2>&1 | grep -v '^total: ')
allow=$root/tests/tools/style-allow.txt
kept=
allowed=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	# file:line: LEVEL:TYPE: message
	file=${line%%:*}
	rest=${line#*:}
	num=${rest%%:*}
	type=$(printf '%s' "$line" | sed -n 's/^[^:]*:[0-9]*: [A-Z]*:\([A-Z_0-9]*\):.*/\1/p')
	src=$(sed -n "${num}p" "$file" 2>/dev/null)
	ok=0
	while IFS='|' read -r afile atype atext _; do
		case $afile in ''|'#'*) continue ;; esac
		if [ "$afile" = "$file" ] && [ "$atype" = "$type" ] &&
		   [[ "$src" == *"$atext"* ]]; then
			ok=1
			break
		fi
	done <"$allow"
	if [ $ok = 1 ]; then
		allowed=$((allowed + 1))
	else
		kept=$kept$line$'\n'
	fi
done <<<"$out"
out=${kept%$'\n'}
n=$(printf '%s' "$out" | grep -c ': \(ERROR\|WARNING\|CHECK\):' || true)
[ -z "$out" ] || printf '%s\n' "$out"
echo "style-check: $allowed finding(s) allowed by tests/tools/style-allow.txt"
echo "style-check: ${#files[@]} files, $n findings"
[ "$n" -eq 0 ]
