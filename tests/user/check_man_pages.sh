#!/bin/bash
# Host test: every symbol the library exports has a man3 page, and every man
# page renders without groff warnings.
set -uo pipefail
cd "$(dirname "$0")/../.."
status=0
syms=$(sed -n '/global:/,/local:/p' lib/libusnicrel.map | grep -oE '^[[:space:]]*[a-z_0-9]+;' | tr -d ' \t;')
[ -n "$syms" ] || { echo "no exported symbols found in lib/libusnicrel.map"; exit 1; }
for s in $syms; do
	[ -f "man/man3/$s.3" ] || { echo "missing man page man/man3/$s.3"; status=1; }
done
cd man
for f in man*/*.[0-9]; do
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null)
	[ -z "$out" ] || { echo "$f: $out"; status=1; }
done
[ $status -eq 0 ] && echo "man pages: ok ($(echo "$syms" | wc -w) symbols)"
exit $status
