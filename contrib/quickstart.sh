#!/bin/sh
# Quick start: install dependencies, build jailrun in the source tree and
# show what a jail hides, on a demo home with a fake SSH key.
set -eu
cd "$(dirname "$0")/.."

./contrib/setup-deps.sh
[ -x configure ] || ./bootstrap >/dev/null
[ -f Makefile ] || ./configure -q
make -s -j"$(nproc)"

demo=$(mktemp -d /tmp/jailrun-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
mkdir -p "$demo/home/.ssh" "$demo/project"
echo "-----BEGIN OPENSSH PRIVATE KEY----- (demo key, not real)" >"$demo/home/.ssh/id_rsa"
chmod 700 "$demo/home/.ssh" && chmod 600 "$demo/home/.ssh/id_rsa"

jailrun=$PWD/jailrun
policy=$PWD/policy/strict.pol
cat <<MSG

== jailrun demo ==========================================================
Host side: HOME=$demo/home holds .ssh/id_rsa, GITHUB_TOKEN is set, and the
workspace is $demo/project.  We run:
  jailrun --policy policy/strict.pol -- bash -c 'id; hostname; ls -a ~;
      cat ~/.ssh/id_rsa; echo "token=\$GITHUB_TOKEN"; echo pwned > /etc/motd; echo ok > result'
--------------------------------------------------------------------------
MSG
cd "$demo/project"
set +e
HOME=$demo/home GITHUB_TOKEN=ghp_demo_not_real "$jailrun" --policy "$policy" -- bash -c \
	'id; hostname; ls -a ~; cat ~/.ssh/id_rsa; echo "token=$GITHUB_TOKEN"; echo pwned > /etc/motd; echo ok > result'
status=$?
set -e
cat <<MSG
--------------------------------------------------------------------------
jailrun exited $status (the command's own status).
The key is still on the host, unread:  $(ls -l "$demo/home/.ssh/id_rsa" | cut -d' ' -f1,9-)
The workspace write reached the host:  result = $(cat result 2>/dev/null || echo MISSING)
/etc/motd untouched by the jail:       $(grep -c pwned /etc/motd 2>/dev/null || true) lines say pwned
Next: 'make check' runs the whole test suite.
MSG
