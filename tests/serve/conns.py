"""Connections to a calc-route serve that a well-behaved client would not make, for
tests/test_serve_admission.sh (Debian's /usr/bin/python3, standard library only).

  conns.py idle HOST PORT N SECONDS
      opens N connections from HOST's 127.0.0.1 side that never send a byte, holds them
      SECONDS at most, and prints "accepted A closed C": A the connections the service kept
      open past its accept (those over its per-address limit it closes at once), C those it
      closed itself before SECONDS ran out.
  conns.py slow HOST PORT SECONDS
      sends a request's headers one byte every 0.2 s and prints "closed by the service" once
      the service closes the connection, or "still open" after SECONDS.
  conns.py get SOURCE HOST PORT PATH
      GET PATH from the address SOURCE (e.g. 127.0.0.2): prints "STATUS BODY".
"""
import select
import socket
import sys
import time


def idle(host, port, n, seconds):
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=5)
        s.setblocking(False)
        socks.append(s)
    # The service closes those past its limit at once: give it a moment to do so, then count
    # those still open as accepted.
    deadline = time.monotonic() + seconds
    first = time.monotonic() + 1.0
    open_ = set(socks)
    accepted = None
    closed = 0
    while open_ and time.monotonic() < deadline:
        r, _, _ = select.select(list(open_), [], [], 0.1)
        for s in r:
            try:
                data = s.recv(1)
            except (ConnectionResetError, BlockingIOError):
                data = b""
            if not data:
                open_.discard(s)
                if accepted is not None:
                    closed += 1
        if accepted is None and time.monotonic() >= first:
            accepted = len(open_)
            if len(sys.argv) > 6:   # a marker file: the caller may probe now
                open(sys.argv[6], "w").close()
    if accepted is None:
        accepted = len(open_)
    for s in socks:
        s.close()
    print(f"accepted {accepted} closed {closed}")


def slow(host, port, seconds):
    req = b"POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nX-Pad: " + b"a" * 400
    s = socket.create_connection((host, port), timeout=5)
    deadline = time.monotonic() + seconds
    sent = 0
    while time.monotonic() < deadline:
        try:
            s.send(req[sent % len(req):sent % len(req) + 1])
            sent += 1
        except (BrokenPipeError, ConnectionResetError):
            break
        r, _, _ = select.select([s], [], [], 0.2)
        if r:
            try:
                data = s.recv(4096)
            except ConnectionResetError:
                data = b""
            if not data:
                break
    else:
        print("still open")
        return
    print("closed by the service" if sent > 1 else "refused")


def get(source, host, port, path):
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(10)
    s.connect((host, port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    print(head.split(b" ")[1].decode(), body.decode().strip())


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "idle":
        idle(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    elif what == "slow":
        slow(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        get(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
