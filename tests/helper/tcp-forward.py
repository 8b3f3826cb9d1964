#!/usr/bin/env python3
"""tcp-forward.py LISTEN_PORT TARGET_HOST TARGET_PORT - a second address
for a server: every connection made to 127.0.0.1:LISTEN_PORT is carried,
byte for byte both ways, to TARGET_HOST:TARGET_PORT. One line on stdout
per connection accepted ("conn N"), flushed, so a test can tell that a
program connected through it. Stands for a pooler or a proxy in front of
a database; it never reads what it carries."""
import socket
import sys
import threading


def pump(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    port, host, tport = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(64)
    n = 0
    while True:
        c, _ = ls.accept()
        try:
            s = socket.create_connection((host, tport))
        except OSError:
            c.close()
            continue
        n += 1
        print("conn %d" % n, flush=True)
        for a, b in ((c, s), (s, c)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


if __name__ == "__main__":
    main()
