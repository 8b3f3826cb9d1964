#!/usr/bin/env python3
"""cut-frames.py N MARKER - a stage's output cut in the middle of a frame:
copy N frames (one per line) from stdin to stdout, then, the first time
only (MARKER does not exist yet; it is created), write the first half of
the next frame, kill the parent process (the stage whose stdout this is,
started as `exec STAGE ... > >(exec 3>&-; exec cut-frames.py N MARKER)`:
fd 3 closed, so the stage's control channel has no second holder) with SIGKILL,
and stop. After that first time it copies everything unchanged, so the
restarted stage runs normally. This is a frame truncated mid-write by a
stage that died: its reader must say so, and nothing may be lost."""
import os
import signal
import sys
import time

n, marker = int(sys.argv[1]), sys.argv[2]
out = sys.stdout.buffer
armed = not os.path.exists(marker)
count = 0
for line in sys.stdin.buffer:
    if armed and count == n:
        open(marker, "w").close()
        out.write(line[: max(1, len(line) // 2)])
        out.flush()
        # the reader sees the end of the pipe first, as it would when the
        # stage died, and has the supervisor's grace (1.2 s) to say so
        # before the stage's death is noticed
        out.close()
        os.close(1)
        time.sleep(0.05)
        os.kill(os.getppid(), signal.SIGKILL)
        os._exit(0)
    out.write(line)
    out.flush()
    count += 1
