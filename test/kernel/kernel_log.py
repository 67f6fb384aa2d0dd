#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The kernel log check around the netns suite, as liburing's test runner does with dmesg.

  kernel_log.py start STATE   records the kernel log's last sequence number in STATE
  kernel_log.py check STATE   fails (exit 1) when a record logged since then is a kernel
                              warning, BUG, Oops, general protection fault or sanitizer report

Records come from /dev/kmsg ("prio,seq,time,flags;text"), so each has a sequence number and
nothing printed before the start is read again. Only those patterns count, so other
processes' ordinary messages (links up, namespaces, audit) never fail the suite; a warning
someone else triggers meanwhile would. Exit 77 when /dev/kmsg cannot be read
(kernel.dmesg_restrict without CAP_SYSLOG, or no /dev/kmsg).
"""
import errno
import os
import re
import sys

BAD = re.compile(r"^(WARNING:|BUG:|Oops|general protection fault|kernel BUG at|UBSAN:|"
                 r"Kernel panic|watchdog: BUG:|INFO: task .* blocked)")


def parse(record):
    head, _, text = record.partition(";")
    fields = head.split(",")
    if len(fields) >= 2 and fields[1].isdigit():
        return int(fields[1]), text.split("\n", 1)[0]
    return None


def records():
    """(seq, text) of every record in the kernel's buffer now. UMEM_KMSG names a file of
    records in the same format instead (the checker's own test)."""
    path = os.environ.get("UMEM_KMSG", "/dev/kmsg")
    if path != "/dev/kmsg":
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                r = parse(line)
                if r:
                    yield r
        return
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        while True:
            try:
                raw = os.read(fd, 8192)
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno == errno.EPIPE:  # overwritten while reading: continue after it
                    continue
                raise
            r = parse(raw.decode("utf-8", "replace"))
            if r:
                yield r
    finally:
        os.close(fd)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "check"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    mode, state = sys.argv[1], sys.argv[2]
    if mode == "start":
        try:
            last = max((seq for seq, _ in records()), default=-1)
        except OSError as e:
            # Recorded, not failed: a failing set-up would keep the suite from running.
            with open(state, "w") as f:
                f.write("unreadable %s\n" % e.strerror)
            print("kernel log unreadable (%s): the check will be skipped" % e.strerror)
            return 0
        with open(state, "w") as f:
            f.write("%d\n" % last)
        print("kernel log at record %d" % last)
        return 0
    try:
        with open(state) as f:
            saved = f.read().split()
    except OSError:
        print("no start record (%s): run with the kernel_log_start test" % state)
        return 77
    if not saved or not saved[0].lstrip("-").isdigit():
        print("kernel log unreadable at start: skipped")
        return 77
    since = int(saved[0])
    try:
        new = [(seq, text) for seq, text in records() if seq > since]
    except OSError as e:
        print("kernel log unreadable (%s): skipped" % e.strerror)
        return 77
    bad = [(seq, text) for seq, text in new if BAD.search(text)]
    for seq, text in bad:
        print("kernel: [%d] %s" % (seq, text))
    if bad:
        print("FAIL: %d kernel warning/BUG line(s) logged during the suite (dmesg for the traces)"
              % len(bad))
        return 1
    print("kernel log: %d record(s) since the start, no warning or BUG" % len(new))
    return 0


if __name__ == "__main__":
    sys.exit(main())
