#!/bin/bash
# Host test: 'make install-lib install-tools install-udev' into a staging root yields a library,
# header, man pages, usnic-rel-stat and a pkg-config file with which a program
# builds and runs; 'make install-prov' the libfabric provider, which fi_info lists.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$src/build}
dest=$build/install-test
rm -rf "$dest"
make -s -C "$src" install-lib install-tools install-udev DESTDIR="$dest" PREFIX=/usr >/dev/null
lib=$dest/usr/lib
for f in "$lib/libusnicrel.so" "$lib/libusnicrel.a" "$dest/usr/include/usnicrel.h" \
	"$dest/usr/share/man/man3/urel_device_open.3" "$dest/usr/share/man/man7/usnicrel.7" \
	"$dest/usr/share/man/man4/usnic_rel.4" "$dest/usr/bin/usnic-rel-stat" \
	"$dest/usr/share/man/man8/usnic-rel-stat.8" "$dest/lib/udev/rules.d/60-usnic-rel.rules"; do
	[ -e "$f" ] || { echo "check_install: $f not installed"; exit 1; }
done
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
[ "$(pkg-config --modversion libusnicrel)" = "$(sed -n 's/^LIB_VERSION := //p' "$src/Makefile")" ]
cat >"$dest/prog.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <usnicrel.h>
int main(void)
{
	struct urel_device *dev;
	int ret = urel_device_open("/nonexistent", &dev);

	printf("%u %s\n", urel_library_abi_version(), urel_strerror(ret));
	return ret == -ENOENT ? 0 : 1;
}
C
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror -o "$dest/prog" "$dest/prog.c" $(pkg-config --cflags --libs libusnicrel)
LD_LIBRARY_PATH=$lib "$dest/prog"
readelf -d "$dest/prog" | grep -q 'NEEDED.*libusnicrel.so.0'
# A program linked against the current header binds urel_win_stats to
# LIBUSNICREL_0.9 (struct with standbacks); older ones keep the 0.8, 0.6,
# 0.5 or 0.3 entry, which fills only the struct they were built with.
# (Output captured first: grep -q closing the pipe early fails readelf
# with SIGPIPE under pipefail.)
syms=$(readelf -W --dyn-syms "$lib/libusnicrel.so")
grep -q 'urel_win_stats@LIBUSNICREL_0\.3$' <<<"$syms" ||
	{ echo "check_install: urel_win_stats@LIBUSNICREL_0.3 missing"; exit 1; }
grep -q 'urel_win_stats@LIBUSNICREL_0\.5$' <<<"$syms" ||
	{ echo "check_install: urel_win_stats@LIBUSNICREL_0.5 missing"; exit 1; }
grep -q 'urel_win_stats@LIBUSNICREL_0\.6$' <<<"$syms" ||
	{ echo "check_install: urel_win_stats@LIBUSNICREL_0.6 missing"; exit 1; }
grep -q 'urel_win_stats@LIBUSNICREL_0\.8$' <<<"$syms" ||
	{ echo "check_install: urel_win_stats@LIBUSNICREL_0.8 missing"; exit 1; }
grep -q 'urel_win_stats@@LIBUSNICREL_0\.9$' <<<"$syms" ||
	{ echo "check_install: urel_win_stats@@LIBUSNICREL_0.9 missing"; exit 1; }
# Likewise urel_msg_stats: LIBUSNICREL_0.9 (standbacks) for new programs, 0.8 and 0.2 kept.
grep -q 'urel_msg_stats@LIBUSNICREL_0\.2$' <<<"$syms" ||
	{ echo "check_install: urel_msg_stats@LIBUSNICREL_0.2 missing"; exit 1; }
grep -q 'urel_msg_stats@LIBUSNICREL_0\.8$' <<<"$syms" ||
	{ echo "check_install: urel_msg_stats@LIBUSNICREL_0.8 missing"; exit 1; }
grep -q 'urel_msg_stats@@LIBUSNICREL_0\.9$' <<<"$syms" ||
	{ echo "check_install: urel_msg_stats@@LIBUSNICREL_0.9 missing"; exit 1; }
cat >"$dest/stats.c" <<'C'
#include <usnicrel.h>
#include <usnicrel_msg.h>
#include <usnicrel_win.h>
int main(void)
{
	struct urel_win_stats st;
	struct urel_msg_stats ms;

	return urel_win_stats(NULL, &st) == -22 && urel_msg_stats(NULL, &ms) == -22 ? 0 : 1;
}
C
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror -o "$dest/stats" "$dest/stats.c" $(pkg-config --cflags --libs libusnicrel)
LD_LIBRARY_PATH=$lib "$dest/stats"
syms=$(readelf -W --dyn-syms "$dest/stats")
grep -q 'urel_win_stats@LIBUSNICREL_0\.9' <<<"$syms" ||
	{ echo "check_install: a new program does not bind urel_win_stats@LIBUSNICREL_0.9"; exit 1; }
grep -q 'urel_msg_stats@LIBUSNICREL_0\.9' <<<"$syms" ||
	{ echo "check_install: a new program does not bind urel_msg_stats@LIBUSNICREL_0.9"; exit 1; }
# The libfabric provider lands in libfabric's own provider directory, and
# libfabric finds it there.
provdir=$(pkg-config --variable=libdir libfabric)/libfabric
make -s -C "$src" install-prov DESTDIR="$dest" >/dev/null
[ -x "$dest$provdir/liburel-fi.so" ] || { echo "check_install: provider not in $dest$provdir"; exit 1; }
FI_PROVIDER_PATH=$dest$provdir fi_info -p urel -l | grep -q '^urel:' ||
	{ echo "check_install: fi_info does not list the installed provider"; exit 1; }
echo "check_install: ok"
