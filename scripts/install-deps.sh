#!/bin/sh
# Install the Debian 12 packages slabconv needs, only those that are missing.
# Never touches apt's configuration; needs root (or sudo) only when something is missing.
set -eu

PACKAGES="coccinelle sparse qemu-system-x86 gcc make bc flex bison libelf-dev libssl-dev
cpio busybox-static python3 python3-pytest rsync ccache git xz-utils perl
chromium python3-pil"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "[deps] installing:$missing" >&2
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
