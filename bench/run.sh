#!/bin/bash
# bench/run.sh: what jailrun costs, side by side with the bare command and
# bubblewrap (issue 8).  Run by `make bench` from a build tree:
#
#   JAILRUN=./jailrun JR_SRCDIR=.. bash ../bench/run.sh
#
# What it measures (wall clock, fork to reap, of the whole command):
#   1. start-up: /bin/true bare; jailrun --policy strict; bubblewrap with
#      the closest equivalent (when bwrap is installed); jailrun with
#      bench/no-filters.pol (strict.pol without its seccomp rules; Landlock
#      cannot be turned off by a policy, see that file).
#   2. a short agent action, bash -c 'cd $WS && ls && cat file && echo x > out':
#      bare, jailrun strict, bubblewrap.
#   3. syscall-heavy work: bench/syscalls.c (static; 2,000,000 getppid and
#      200,000 open/close of a workspace file), bare vs jailrun strict:
#      what seccomp and Landlock add per system call.
#   4. session exec: /bin/true through a running session (jailrun --session)
#      vs a fresh jail vs bare.
#   5. supervisor memory: peak RSS (VmHWM) of the jailrun process and of the
#      jail's init during `jailrun --policy strict -- sleep 1` (bench/rss.py).
#   6. the egress proxy (`net proxy`, issue 9; bench/proxy.py, bench/netbench.c):
#      throughput of one 1 GiB HTTP GET from a server on the host's 127.0.0.1,
#      and the rate of BENCH_PROXY_CONNS sequential short requests (connect,
#      request, 512-byte answer, close), each straight over loopback, through
#      socat as a plain TCP forwarder (left out when socat is missing), and
#      from inside `jailrun -p strict -D 'net proxy'` through the proxy
#      (CONNECT; for the rate also plain HTTP).  The client times itself, so
#      the jail's start-up is not counted; reported as MB/s and connections/s
#      in a second table, with ratios to direct and to socat.
#
# How: bench/timeit.c (compiled here with cc -O2) runs the candidates of a
# case interleaved, run by run (A B C A B C ...), after 2 untimed warm-up
# rounds, so a slow phase of the machine hits every candidate alike; ratios
# are between medians of the same interleaved run.  bench/report.py prints
# one table (median, p90, ratio to bare, ratio to bwrap for jailrun rows) and
# writes results.json.  hyperfine is not used: it runs one command at a time.
#
# The bubblewrap equivalent: --unshare-all (user, pid, net with lo up, ipc,
# uts, cgroup), --die-with-parent, --new-session, --cap-drop ALL (as root
# bwrap would otherwise keep capabilities; jailrun keeps none), /usr /etc
# /opt and the /bin /sbin /lib* entries read-only (a symlink stays one, via
# --symlink), --proc /proc, --dev /dev, tmpfs on /tmp and $HOME, the
# workspace bound read-write, --chdir to it.  It has no seccomp filter and no
# Landlock, and jailrun's setup does more (masks, protected paths, scrubbed
# environment, idmapped workspace), so it is the floor to beat, not a twin.
#
# Environment:
#   JAILRUN             the jailrun binary (required)
#   JR_SRCDIR           the source tree (default: this script's parent)
#   BENCH_RUNS          timed runs for cases 1 and 2 (default 30)
#   BENCH_SYSCALL_RUNS  timed runs for case 3 (default 10; ~1 s each here)
#   BENCH_MEM_RUNS      runs for case 5 (default 3; 1 s each)
#   BENCH_PROXY_RUNS    timed runs for case 6 (default 5, after 1 warm-up)
#   BENCH_PROXY_CONNS   requests per run of the connection-rate case (default 2000)
#   BENCH_OUT           results file (default: bench/results.json under the
#                       current directory)
#   BWRAP               the bubblewrap program (default bwrap; a name not
#                       found leaves bubblewrap out)
#   JAILRUN_POLICY_PATH default: $JR_SRCDIR/policy
# Needs bash, cc (with a static libc), python3; bwrap and socat are
# optional.  Runs as whoever calls it (root on the CI machines); the
# workspace is a temporary directory under /tmp, removed at exit.
set -eu

die() { echo "bench: $*" >&2; exit 1; }

: "${JAILRUN:?set JAILRUN to the jailrun binary (make bench does)}"
srcdir=$(cd "${JR_SRCDIR:-$(dirname "$0")/..}" && pwd)
runs=${BENCH_RUNS:-30}
syscall_runs=${BENCH_SYSCALL_RUNS:-10}
mem_runs=${BENCH_MEM_RUNS:-3}
proxy_runs=${BENCH_PROXY_RUNS:-5}
proxy_conns=${BENCH_PROXY_CONNS:-2000}
out=${BENCH_OUT:-bench/results.json}
export JAILRUN_POLICY_PATH=${JAILRUN_POLICY_PATH:-$srcdir/policy}

JAILRUN=$(cd "$(dirname "$JAILRUN")" && pwd)/$(basename "$JAILRUN")
[ -x "$JAILRUN" ] || die "$JAILRUN: not an executable"
for n in "$runs" "$syscall_runs" "$mem_runs" "$proxy_runs" "$proxy_conns"; do
	case $n in '' | *[!0-9]*) die "run counts must be positive whole numbers" ;; esac
	[ "$n" -gt 0 ] || die "run counts must be positive whole numbers"
done
command -v cc >/dev/null || die "cc not found"
command -v python3 >/dev/null || die "python3 not found"
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")

tmp=$(mktemp -d /tmp/jailrun-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ws=$tmp/ws
mkdir "$tmp/bin" "$ws"
printf 'hello from the workspace\n' >"$ws/file"
for f in README.md main.c Makefile; do printf 'x\n' >"$ws/$f"; done

# ---- helpers ------------------------------------------------------------------
cc -std=c17 -O2 -Wall -Wextra -o "$tmp/bin/timeit" "$srcdir/bench/timeit.c"
# In the workspace, so the jail sees the very same binary at the same path.
cc -std=c17 -O2 -Wall -Wextra -static -o "$ws/.syscalls" "$srcdir/bench/syscalls.c" ||
	die "cannot link bench/syscalls.c statically (Debian: libc6-dev has libc.a)"
cc -std=c17 -O2 -Wall -Wextra -static -o "$ws/.netbench" "$srcdir/bench/netbench.c"

timeit() { (cd "$ws" && "$tmp/bin/timeit" "$@"); }

jailrun_strict=("$JAILRUN" --policy strict --)
jailrun_nofilters=("$JAILRUN" --policy "$srcdir/bench/no-filters.pol" --)

bwrap=${BWRAP:-bwrap}
have_bwrap=false
bwrap_cmd=()
if command -v "$bwrap" >/dev/null; then
	have_bwrap=true
	bwrap_cmd=("$bwrap" --unshare-all --die-with-parent --new-session --cap-drop ALL)
	for d in /usr /etc /opt /bin /sbin /lib /lib32 /lib64 /libx32; do
		if [ -L "$d" ]; then
			bwrap_cmd+=(--symlink "$(readlink "$d")" "$d")
		elif [ -d "$d" ]; then
			bwrap_cmd+=(--ro-bind "$d" "$d")
		fi
	done
	bwrap_cmd+=(--proc /proc --dev /dev --tmpfs /tmp --tmpfs "$HOME"
		--bind "$ws" "$ws" --chdir "$ws" --)
fi

# Sets bwrap_args to "::: bwrap BWRAP-OPTIONS -- CMD..." (timeit's words for
# the bwrap candidate), or to nothing when bwrap is not installed.
with_bwrap() {
	if $have_bwrap; then
		bwrap_args=(::: bwrap "${bwrap_cmd[@]}" "$@")
	else
		bwrap_args=()
	fi
}

echo "jailrun benchmarks: $(uname -r), $(nproc) CPUs; workspace $ws" >&2

# ---- 1. start-up ------------------------------------------------------------------
echo "1/6 start-up: /bin/true x $runs" >&2
with_bwrap /bin/true
timeit -n "$runs" \
	bare /bin/true \
	::: "jailrun strict" "${jailrun_strict[@]}" /bin/true \
	"${bwrap_args[@]}" \
	::: "jailrun no-filters" "${jailrun_nofilters[@]}" /bin/true \
	>"$tmp/startup.jsonl"

# ---- 2. a short agent action ---------------------------------------------------------
echo "2/6 agent action x $runs" >&2
export WS=$ws
# shellcheck disable=SC2016 # $WS is for the inner bash
action=(bash -c 'cd $WS && ls && cat file && echo x > out')
with_bwrap "${action[@]}"
timeit -n "$runs" \
	bare "${action[@]}" \
	::: "jailrun strict" "${jailrun_strict[@]}" "${action[@]}" \
	"${bwrap_args[@]}" \
	>"$tmp/action.jsonl"

# ---- 3. syscall-heavy work --------------------------------------------------------
echo "3/6 syscall-heavy x $syscall_runs" >&2
timeit -n "$syscall_runs" -w 1 \
	bare "$ws/.syscalls" "$ws/file" \
	::: "jailrun strict" "${jailrun_strict[@]}" "$ws/.syscalls" "$ws/file" \
	>"$tmp/syscalls.jsonl"

# ---- 4. session exec --------------------------------------------------------------
# /bin/true through a running session (strict.pol, workspace $ws) against
# a fresh jail and the bare command.
session_name=bench-$$
case_session() {
	(cd "$ws" && "$JAILRUN" --session "$session_name" --policy strict -- /bin/true) || return 1
	(cd "$ws" && timeit -n "$runs" \
		bare /bin/true \
		::: "jailrun session" "$JAILRUN" --session "$session_name" --policy strict -- /bin/true \
		::: "jailrun strict" "${jailrun_strict[@]}" /bin/true \
		>"$tmp/session.jsonl")
	local r=$?
	"$JAILRUN" --session "$session_name" --stop
	return $r
}
echo "4/6 session exec x $runs" >&2
if case_session; then
	session=(--case session "session exec: /bin/true" "$tmp/session.jsonl")
else
	echo "    skipped (the session did not start)" >&2
	session=(--skip session "session exec: /bin/true" "the session did not start")
fi

# ---- 4b. the agent API: exec and readFile through jailrun serve -------------------
echo "4b/6 agent API latency x $runs" >&2
python3 "$srcdir/bench/rpc-latency.py" "$JAILRUN" "$runs" "$ws" exec >"$tmp/rpc-exec.jsonl"
python3 "$srcdir/bench/rpc-latency.py" "$JAILRUN" "$runs" "$ws" readfile >"$tmp/rpc-read.jsonl"

# ---- 5. supervisor memory ---------------------------------------------------------
echo "5/6 supervisor memory: sleep 1 x $mem_runs" >&2
: >"$tmp/memory.jsonl"
for _ in $(seq "$mem_runs"); do
	(cd "$ws" && python3 "$srcdir/bench/rss.py" "${jailrun_strict[@]}" sleep 1) >>"$tmp/memory.jsonl"
done

# ---- 6. the egress proxy ----------------------------------------------------------
echo "6/6 egress proxy: 1 GiB and $proxy_conns requests x $proxy_runs" >&2
python3 "$srcdir/bench/proxy.py" "$JAILRUN" "$ws/.netbench" "$ws" "$proxy_runs" "$proxy_conns" \
	"$tmp/proxy-throughput.jsonl" "$tmp/proxy-connrate.jsonl"

# ---- report ---------------------------------------------------------------------------
bwrap_version=none
$have_bwrap && bwrap_version=$("$bwrap" --version | sed 's/^bubblewrap //')
socat_version=none
command -v socat >/dev/null && socat_version=$(socat -V | sed -n 's/^socat version \([^ ]*\).*/\1/p')
echo
python3 "$srcdir/bench/report.py" --out "$out" \
	--meta "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	--meta "kernel=$(uname -r)" \
	--meta "cpus=$(nproc)" \
	--meta "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" \
	--meta "user=$(id -un)" \
	--meta "jailrun=$("$JAILRUN" --version)" \
	--meta "bwrap=$bwrap_version" \
	--meta "socat=$socat_version" \
	--meta "timer=bench/timeit.c (interleaved, 2 warm-up rounds; 1 for syscall-heavy)" \
	--case startup "start-up: /bin/true" "$tmp/startup.jsonl" \
	--case action "agent action: bash ls/cat/echo" "$tmp/action.jsonl" \
	--case syscalls "syscall-heavy: 2M getppid + 200k open/close" "$tmp/syscalls.jsonl" \
	"${session[@]}" \
	--case rpc-exec "serve exec: /bin/true" "$tmp/rpc-exec.jsonl" \
	--case rpc-read "serve readFile: 4 KiB" "$tmp/rpc-read.jsonl" \
	--memory memory "supervisor memory: sleep 1 (peak RSS)" "$tmp/memory.jsonl" \
	--throughput proxy-throughput "egress proxy: 1 GiB GET" "$tmp/proxy-throughput.jsonl" \
	--connrate proxy-connrate "egress proxy: $proxy_conns requests" "$tmp/proxy-connrate.jsonl"
echo
echo "Medians and p90 of wall-clock ms over $runs runs (cases 1-2) and $syscall_runs (case 3),"
echo "candidates interleaved run by run; x bare, x bwrap: ratio of medians from the same run."
$have_bwrap || echo "bubblewrap ($bwrap) not installed: its rows are missing."
echo "Memory: largest VmHWM over $mem_runs runs."
echo "Egress proxy: $proxy_runs runs, timed by the client (jail start-up not counted); p90 is the"
echo "rate of the slow run at the 90th percentile of time; x direct, x socat: ratio of median times."
command -v socat >/dev/null || echo "socat not installed: its rows are missing."
echo "Results: $out"
