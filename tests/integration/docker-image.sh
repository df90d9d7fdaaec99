#!/bin/sh
# Builds the docker provider's test image, jailrun-busybox:test, when it is
# missing: a root filesystem of the host's static busybox (busybox-static)
# with every applet linked, imported with `docker import` (no registry is
# needed).  Exit 0 when the image is there, 1 when it cannot be made.
set -u
IMAGE=${1:-jailrun-busybox:test}
docker image inspect "$IMAGE" >/dev/null 2>&1 && exit 0
bb=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && LC_ALL=C ldd "$b" 2>&1 | grep -q 'not a dynamic'; then
		bb=$b
		break
	fi
done
[ -n "$bb" ] || { echo "docker-image.sh: no static busybox (apt-get install busybox-static)" >&2; exit 1; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/tmp" "$root/etc" "$root/proc" "$root/sys" "$root/dev" "$root/root"
cp "$bb" "$root/bin/busybox"
for a in $("$bb" --list); do
	[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
done
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
tar -C "$root" -c . | docker import - "$IMAGE" >/dev/null
