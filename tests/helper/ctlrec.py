#!/usr/bin/env python3
"""ctlrec.py OUT -- CMD ARGS... - run a stage the way the supervisor does as
far as fd 3 goes: one end of a socketpair on the child's fd 3, so it adopts
the control channel and reports. Every frame the child sends there is written
to OUT as one line: the CLOCK_MONOTONIC time it arrived (seconds, the clock
faultproxy.py logs with) and the frame's JSON. stdin, stdout and stderr are
the child's own. Exits with the child's exit code (128 + N for signal N)."""
import os
import socket
import subprocess
import sys
import time

out_path = sys.argv[1]
if sys.argv[2] != "--":
    sys.exit("usage: ctlrec.py OUT -- CMD ARGS...")
cmd = sys.argv[3:]
ours, theirs = socket.socketpair()
if ours.fileno() == 3:
    # fd 3 is the child's: keep our end elsewhere
    moved = ours.dup()
    ours.close()
    ours = moved
if theirs.fileno() != 3:
    os.dup2(theirs.fileno(), 3)
    os.set_inheritable(3, True)
child = subprocess.Popen(cmd, pass_fds=(3,))
if theirs.fileno() != 3:
    os.close(3)
theirs.close()

buf = b""
with open(out_path, "w") as out:
    while True:
        data = ours.recv(65536)
        now = time.monotonic()
        if not data:
            break
        buf += data
        while True:
            sp = buf.find(b" ")
            if sp < 0:
                break
            n = int(buf[:sp])
            if len(buf) < sp + 1 + n:
                break
            frame = buf[sp + 1:sp + 1 + n].rstrip(b"\n").decode()
            buf = buf[sp + 1 + n:]
            out.write(f"{now:.6f} {frame}\n")
            out.flush()
rc = child.wait()
sys.exit(rc if rc >= 0 else 128 - rc)
