#!/usr/bin/env python3
"""cut-frames.py N MARKER - a stage's output cut in the middle of a frame:
copy N frames (one per line) from stdin to stdout, then, the first time
only (MARKER does not exist yet; it is created), write the first half of
the next frame, kill the parent process (the stage whose stdout this is,
started as `exec STAGE ... > >(exec cut-frames.py N MARKER)`) with SIGKILL,
and stop. After that first time it copies everything unchanged, so the
restarted stage runs normally. This is a frame truncated mid-write by a
stage that died: its reader must say so, and nothing may be lost."""
import os
import signal
import sys

n, marker = int(sys.argv[1]), sys.argv[2]
out = sys.stdout.buffer
armed = not os.path.exists(marker)
count = 0
for line in sys.stdin.buffer:
    if armed and count == n:
        open(marker, "w").close()
        out.write(line[: max(1, len(line) // 2)])
        out.flush()
        os.kill(os.getppid(), signal.SIGKILL)
        sys.exit(0)
    out.write(line)
    out.flush()
    count += 1
