#!/usr/bin/env python3
"""Peak RSS of jailrun's own processes during one run, for `make bench`.

    rss.py JAILRUN_COMMAND...

Starts the command (a jailrun invocation, e.g. `jailrun --policy strict --
sleep 1`) and, every few milliseconds until it exits, reads VmHWM (the
kernel's high-water mark of resident memory) from /proc/PID/status of the
jailrun process (the supervisor) and of its direct children (the jail's
init, pid 1 inside).  Since VmHWM only grows, the last value read before a
process exits is its peak.  Prints one JSON object:

    {"supervisor_kib": 1234, "init_kib": 987, "status": 0}

init_kib is null if the init was never seen.  RSS counts every resident
page the process maps, shared ones (libc, pages shared with the parent after
clone) included.
"""
import json
import os
import subprocess
import sys
import time

INTERVAL = 0.005


def hwm_kib(pid):
    """VmHWM of PID in KiB, or None once it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return None


def children(pid):
    """PIDs whose parent is PID (from /proc/*/stat; no CONFIG_PROC_CHILDREN needed)."""
    kids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: split after it.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            kids.append(int(name))
    return kids


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: rss.py COMMAND [ARG...]")
    proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    sup = None
    init = None
    init_pid = None
    while proc.poll() is None:
        v = hwm_kib(proc.pid)
        if v is not None:
            sup = max(sup or 0, v)
        if init_pid is None:
            kids = children(proc.pid)
            init_pid = kids[0] if kids else None
        if init_pid is not None:
            v = hwm_kib(init_pid)
            if v is not None:
                init = max(init or 0, v)
        time.sleep(INTERVAL)
    print(json.dumps({"supervisor_kib": sup, "init_kib": init, "status": proc.returncode}))
    return 0 if proc.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
