#!/usr/bin/env python3
"""Run a command on a fresh pty, as a terminal emulator would.

usage: pty-run.py [--rows R --cols C] [--pipe-stdout] [--no-ctty] -- COMMAND [ARG...]

--pipe-stdout: the command's stdout is a pipe (its bytes are printed after
the terminal's output); stdin and stderr stay on the pty.
--no-ctty: the command starts a new session without taking the pty as its
controlling terminal, as a harness with start_new_session=True does.

The command's output read from the pty master goes to stdout.  On stderr
the last line is "queued=N": the number of input bytes waiting in the
terminal's input queue after the command ended, i.e. bytes that something
pushed into this terminal with TIOCSTI (nobody reads them otherwise).
Exit status: the command's.
"""
import argparse, fcntl, os, select, struct, sys, termios, time

p = argparse.ArgumentParser()
p.add_argument("--rows", type=int, default=24)
p.add_argument("--cols", type=int, default=80)
p.add_argument("--pipe-stdout", action="store_true")
p.add_argument("--no-ctty", action="store_true")
p.add_argument("cmd", nargs=argparse.REMAINDER)
a = p.parse_args()
cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd

master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", a.rows, a.cols, 0, 0))
pipe_r, pipe_w = os.pipe() if a.pipe_stdout else (None, None)
pid = os.fork()
if pid == 0:
    os.close(master)
    os.setsid()
    if not a.no_ctty:
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    if pipe_w is not None:
        os.dup2(pipe_w, 1)
        os.close(pipe_r)
    os.execvp(cmd[0], cmd)
if pipe_w is not None:
    os.close(pipe_w)

out = bytearray()
status = None
deadline = time.time() + 30
while time.time() < deadline:
    r, _, _ = select.select([master], [], [], 0.05)
    if r:
        try:
            out += os.read(master, 65536)
        except OSError:
            pass
    if status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            deadline = min(deadline, time.time() + 0.3)  # drain what is left
if status is None:
    os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
queued = struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0\0\0\0"))[0]
sys.stdout.buffer.write(bytes(out))
if pipe_r is not None:
    sys.stdout.buffer.write(os.read(pipe_r, 1 << 20))
sys.stdout.flush()
print(f"queued={queued}", file=sys.stderr)
sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8)
