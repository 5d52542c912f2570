#!/bin/sh
# Install the Debian 12 packages slabconv needs, by group, only those that are missing.
#
#   sh scripts/install-deps.sh [GROUP...]     (default: all)
#   sh scripts/install-deps.sh --list GROUP... prints the groups' packages, installs nothing
#
# Groups (each make target asks for its own; see the Makefile):
#   core     regen, review, mail, range-diff, attribute, checkpatch, residue, fetch
#   build    kernel builds and their warning gates (verify, layout)
#   boot     QEMU guests (all, verify's runtime bisect, boot, reference, bench)
#   distcc   distributed builds (DISTCC= / DISTCC_HOSTS)
#   browser  the review page's browser test
#   test     the test suite: every group above and pytest
#   all      every group
#
# Never touches apt's configuration; needs root (or sudo) only when something is missing.
set -eu

CORE="python3 git coccinelle perl xz-utils rsync"
# The architectures of verify/configs.toml: each one's cross compiler (build)
# and QEMU (boot), as base/arches.py names them (tests/test_deps_groups.py
# checks that every arch of the table has its packages here).
ARCH_BUILD="gcc-aarch64-linux-gnu"
ARCH_BOOT="qemu-system-arm"
BUILD="gcc make bc flex bison libelf-dev libssl-dev ccache sparse $ARCH_BUILD"
BOOT="qemu-system-x86 $ARCH_BOOT cpio busybox-static"
DISTCC="distcc"
BROWSER="chromium python3-pil"
TEST="python3-pytest"

packages() {
	for g in "$@"; do
		case "$g" in
		core) echo "$CORE" ;;
		build) echo "$CORE $BUILD" ;;
		boot) echo "$CORE $BUILD $BOOT" ;;
		distcc) echo "$DISTCC" ;;
		browser) echo "$BROWSER" ;;
		test | all) echo "$CORE $BUILD $BOOT $DISTCC $BROWSER $TEST" ;;
		*) echo "[deps] error: unknown group '$g' (core build boot distcc browser test all)" >&2
		   return 2 ;;
		esac
	done
}

list=0
if [ "${1:-}" = "--list" ]; then list=1; shift; fi
[ $# -eq 0 ] && set -- all
PACKAGES=$(packages "$@") || exit 2
# one a line, each once, in the order asked
PACKAGES=$(for p in $PACKAGES; do echo "$p"; done | awk '!seen[$0]++')
if [ "$list" -eq 1 ]; then
	echo "$PACKAGES"
	exit 0
fi

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "[deps] installing ($*):$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "[deps] error: need root or sudo to install:$missing" >&2; exit 3
	fi
fi
export DEBIAN_FRONTEND=noninteractive
# apt's own retries (as fetch/net.py's APT_RETRIES); the retried, backed-off
# downloads of a run are slabconv's (fetch/net.py), which needs python3 first.
RETRIES="-o Acquire::Retries=3 -o Acquire::Retries::Delay=false"
# shellcheck disable=SC2086
$SUDO apt-get $RETRIES update -q >&2 || { echo "[deps] error: apt-get update failed" >&2; exit 4; }
# shellcheck disable=SC2086
$SUDO apt-get $RETRIES install -y -q --no-install-recommends $missing >&2 || {
	echo "[deps] error: apt-get install failed for:$missing" >&2; exit 4; }
