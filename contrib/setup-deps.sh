#!/bin/sh
# Installs what jailrun needs to build and test on Debian 12 / Ubuntu 24.04,
# skipping apt entirely when everything is already there.
set -eu

packages="build-essential autoconf automake libtool pkg-config
libseccomp-dev libcap-dev libnl-3-dev libnl-route-3-dev libcjson-dev libbpf-dev clang
libcmocka-dev util-linux procps iproute2 python3 python3-jsonschema bash git nodejs passt
curl openssl socat"

missing=
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# npm (the MCP test installs the official SDK client with it) comes with
# some nodejs builds and is a package of its own in Debian's.
command -v npm >/dev/null || missing="$missing npm"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null; then
		SUDO=sudo
	else
		echo "setup-deps: missing packages:$missing; run this as root" >&2
		exit 1
	fi
else
	SUDO=
fi
echo "setup-deps: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
