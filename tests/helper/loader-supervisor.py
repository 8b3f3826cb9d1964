#!/usr/bin/env python3
"""loader-supervisor.py - the supervisor's side of a loader, for tests.

Runs the loader with a socketpair on fd 3, reads its hello, sends one load
frame, reads its stdout (copy rows and marks) and confirms each mark on
fd 3 - what pg2osync-supervise does once the writer reports the mark
durable. Records what it saw and exits with the loader's exit status.

  loader-supervisor.py [options] -- loader -c cfg.yaml ...

  --table REL[=FILE]   a table of the load frame, in order; FILE holds the
                       progress object to send with it
  --frames FILE        every frame of the loader's stdout, as it arrived
  --marks FILE         each mark's JSON, one per line
  --stats FILE         each stats frame's JSON from fd 3, one per line
  --hold SECONDS       wait this long before each confirmation, and count
                       the frames that arrive meanwhile: rows of the next
                       wave may (reported on stderr), and marks of other
                       tables (reported: the loader keeps several tables'
                       marks open), a mark of the same table must not (a
                       table's next mark waits for its confirmation)
  --close-after N      close fd 3 after the N-th mark instead of
                       confirming it
  --wrong-confirm      confirm each mark under another id
  --checkpoint POS=TEXT  the stored checkpoint the load frame carries
"""
import argparse
import collections
import json
import os
import select
import socket
import subprocess
import sys
import time


def frames(buf):
    """complete frames at the start of buf: (list of json bytes, rest)"""
    out = []
    while True:
        sp = buf.find(b" ")
        if sp < 0:
            break
        n = int(buf[:sp])
        if len(buf) < sp + 1 + n:
            break
        out.append(buf[sp + 1:sp + n])
        buf = buf[sp + 1 + n:]
    return out, buf


def frame(obj):
    j = json.dumps(obj, separators=(",", ":")).encode()
    return str(len(j) + 1).encode() + b" " + j + b"\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", action="append", default=[])
    ap.add_argument("--frames")
    ap.add_argument("--marks")
    ap.add_argument("--stats")
    ap.add_argument("--hold", type=float, default=0)
    ap.add_argument("--close-after", type=int, default=0)
    ap.add_argument("--wrong-confirm", action="store_true")
    ap.add_argument("--checkpoint")
    ap.add_argument("argv", nargs="+")
    a = ap.parse_args()

    ours, theirs = socket.socketpair()
    proc = subprocess.Popen(a.argv, stdout=subprocess.PIPE, close_fds=False,
                            preexec_fn=lambda: os.dup2(theirs.fileno(), 3))
    theirs.close()
    fr = open(a.frames, "wb") if a.frames else None
    mk = open(a.marks, "w") if a.marks else None
    st = open(a.stats, "w") if a.stats else None

    ctl = b""
    hello = None
    while hello is None:
        data = ours.recv(65536)
        if not data:
            sys.exit("loader-supervisor: fd 3 closed before hello")
        got, ctl = frames(ctl + data)
        if got:
            hello = json.loads(got[0])
    if hello.get("k") != "hello" or hello.get("tool") != "loader":
        sys.exit("loader-supervisor: first frame is not the loader's "
                 "hello: %r" % hello)
    tables = []
    for t in a.table:
        rel, _, path = t.partition("=")
        entry = {"table": rel}
        if path:
            with open(path) as f:
                entry["progress"] = json.load(f)
        tables.append(entry)
    load = {"k": "load", "tables": tables}
    if a.checkpoint:
        pos, _, text = a.checkpoint.partition("=")
        load["checkpoint"] = {"pos": int(pos), "text": text}
    ours.sendall(frame(load))

    out = b""
    nmarks = 0
    pending = collections.deque()   # (id, table, when to confirm), oldest first
    early = 0               # marks before their table's previous one's confirmation
    overlap = 0             # rows read while a mark was being confirmed
    others = 0              # marks written while another table's waited
    most = 0                # marks waiting at once, at most
    open_ctl = True
    fd_out = proc.stdout.fileno()
    while True:
        timeout = None
        if pending:
            timeout = max(0, pending[0][2] - time.monotonic())
        rl = [fd_out] + ([ours] if open_ctl else [])
        r, _, _ = select.select(rl, [], [], timeout)
        while pending and time.monotonic() >= pending[0][2]:
            ours.sendall(frame({"k": "confirm", "id": pending[0][0]}))
            pending.popleft()
        if open_ctl and ours in r:
            data = ours.recv(65536)
            if not data:
                open_ctl = False
            got, ctl = frames(ctl + data)
            for g in got:
                if st:
                    st.write(g.decode() + "\n")
                    st.flush()
        if fd_out in r:
            data = os.read(fd_out, 1 << 20)
            if not data:
                break
            if fr:
                fr.write(data)
            got, out = frames(out + data)
            for g in got:
                m = json.loads(g)
                if m.get("k") == "row" and pending:
                    overlap += 1
                if m.get("k") != "mark":
                    continue
                if any(p[1] == m.get("table") for p in pending):
                    early += 1
                elif pending:
                    others += 1
                nmarks += 1
                if mk:
                    mk.write(g.decode() + "\n")
                    mk.flush()
                if a.close_after and nmarks == a.close_after:
                    ours.shutdown(socket.SHUT_RDWR)
                    ours.close()
                    open_ctl = False
                elif open_ctl:
                    cid = m["id"] + ("x" if a.wrong_confirm else "")
                    if a.hold == 0:
                        ours.sendall(frame({"k": "confirm", "id": cid}))
                    else:
                        pending.append((cid, m.get("table"),
                                        time.monotonic() + a.hold))
                        most = max(most, len(pending))
    rc = proc.wait()
    if open_ctl:
        # the last stats frame may follow the last mark
        ours.settimeout(5)
        try:
            while True:
                data = ours.recv(65536)
                if not data:
                    break
                got, ctl = frames(ctl + data)
                for g in got:
                    if st:
                        st.write(g.decode() + "\n")
        except OSError:
            pass
    if a.hold:
        print("loader-supervisor: %d row frames arrived while a mark "
              "waited for its confirmation" % overlap, file=sys.stderr)
        print("loader-supervisor: %d marks arrived while another table's "
              "waited, %d waiting at most" % (others, most), file=sys.stderr)
    if early:
        print("loader-supervisor: %d marks arrived before their table's "
              "previous mark was confirmed" % early, file=sys.stderr)
        rc = rc or 100
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()
