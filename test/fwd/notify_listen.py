#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""systemd's side of the notify protocol, for the xdp-fwd tests.

  notify_listen.py SOCK LOG
      binds SOCK (a unix datagram socket) and writes each message to LOG, one line each, its
      newlines shown as " | ", until killed.
  notify_listen.py --service SOCK LOG -- CMD [ARG...]
      the same, each line prefixed with the sender's pid (SO_PASSCRED: what systemd checks
      NotifyAccess=main against), and runs CMD as a unit's main process: NOTIFY_SOCKET=SOCK and
      WATCHDOG_PID=its pid in its environment (WATCHDOG_USEC passes through), as a subreaper
      (systemd is the parent of what the main process leaves), "start PID" first; each process
      reaped is logged "exit PID CODE" (CODE 128+N for signal N). Ends when none is left.
"""
import ctypes
import os
import select
import socket
import struct
import sys

PR_SET_CHILD_SUBREAPER = 36

args = sys.argv[1:]
service = args[:1] == ["--service"]
if service:
    args = args[1:]
if len(args) < 2 or (service and (len(args) < 4 or args[2] != "--")):
    sys.exit(__doc__)
sock_path, log_path = args[0], args[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind(sock_path)
log = open(log_path, "a")


def put(text):
    log.write(text + "\n")
    log.flush()


def receive(block):
    """Logs every message queued (block: waits 50 ms for the first)."""
    timeout = 0.05 if block else 0
    while select.select([s], [], [], timeout)[0]:
        timeout = 0
        msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
        pid = 0
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("iII", data[:12])[0]
        text = msg.decode(errors="replace").rstrip("\n").replace("\n", " | ")
        put(f"{pid} {text}" if service else text)


if not service:
    while True:
        receive(True)

if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0):
    sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")
main = os.fork()
if main == 0:
    env = dict(os.environ, NOTIFY_SOCKET=sock_path, WATCHDOG_PID=str(os.getpid()))
    try:
        os.execvpe(args[3], args[3:], env)
    finally:
        os._exit(127)
put(f"start {main}")
while True:
    receive(True)
    try:
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if not pid:
                break
            code = os.waitstatus_to_exitcode(status)
            receive(False)  # what it said before it ended comes first
            put(f"exit {pid} {code if code >= 0 else 128 - code}")
    except ChildProcessError:
        receive(False)
        break
