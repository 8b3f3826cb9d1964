#!/usr/bin/env python3
"""delay-frames.py SECONDS - copy frames (one per line: a frame holds no LF
but its last byte) from stdin to stdout, each one SECONDS after it arrived,
in order. Put behind a stage (--stage NAME=a script that pipes the real
program's stdout through it), it makes that stage's output late without
changing a byte of it: a capture that lags behind the loader."""
import os
import sys
import threading
import time
import collections

delay = float(sys.argv[1])
q = collections.deque()
cv = threading.Condition()
done = False


def reader():
    global done
    for line in sys.stdin.buffer:
        with cv:
            q.append((time.monotonic() + delay, line))
            cv.notify()
    with cv:
        done = True
        cv.notify()


threading.Thread(target=reader, daemon=True).start()
out = sys.stdout.buffer
while True:
    with cv:
        while not q and not done:
            cv.wait()
        if not q and done:
            break
        due, line = q[0]
    wait = due - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    with cv:
        q.popleft()
    try:
        out.write(line)
        out.flush()
    except BrokenPipeError:
        os._exit(0)
