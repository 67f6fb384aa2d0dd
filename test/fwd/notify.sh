#!/usr/bin/env bash
# systemd's notify protocol, with a listener of our own on NOTIFY_SOCKET: READY=1 once the ports
# forward (a ping crosses right after it), WATCHDOG=1 at half of WATCHDOG_USEC, STOPPING=1 after
# SIGTERM and nothing after it but the exit.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 not installed" >&2; exit 77; }

topo_up --hosts 2
SOCK=$WORK/notify.sock
# One line per datagram, its newlines shown as " | ".
netns_bg LISTEN_PID "$TOPO_MID" python3 "$SRC/test/fwd/notify_listen.py" "$SOCK" "$WORK/notify.log"
wait_for 5 test -S "$SOCK" || fail "the listener did not bind $SOCK"
: >"$WORK/notify.log"

count() { grep -c "$1" "$WORK/notify.log"; }
at_least() { [ "$(count "$1")" -ge "$2" ]; }

log "READY=1 once every port forwards"
NOTIFY_SOCKET=$SOCK WATCHDOG_USEC=400000 fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json
wait_for 10 at_least "READY=1" 1 || fail "no READY=1: $(cat "$WORK/notify.log")"
grep -q "READY=1 | STATUS=forwarding, 2 ports, 1 worker" "$WORK/notify.log" || fail "$(cat "$WORK/notify.log")"
in_host 0 ping -c 1 -W 2 "$TOPO_IP1" >/dev/null || fail "no ping across right after READY=1"
log "WATCHDOG=1 every 200 ms"
wait_for 5 at_least "WATCHDOG=1" 3 || fail "WATCHDOG=1 $(count WATCHDOG=1) times: $(cat "$WORK/notify.log")"
log "STOPPING=1 on SIGTERM"
fwd_stop TERM
at_least "STOPPING=1" 1 || fail "no STOPPING=1: $(cat "$WORK/notify.log")"
order=$(grep -v WATCHDOG "$WORK/notify.log" | cut -d' ' -f1 | tr '\n' ' ')
[ "$order" = "READY=1 STOPPING=1 " ] || fail "messages in this order: $order"
[ "$(tail -1 "$WORK/notify.log")" = "STOPPING=1" ] || fail "after STOPPING=1: $(tail -1 "$WORK/notify.log")"
log "without NOTIFY_SOCKET: nothing sent, runs as before"
: >"$WORK/notify.log"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json
in_host 0 ping -c 1 -W 2 "$TOPO_IP1" >/dev/null || fail "no ping across"
fwd_stop TERM
[ ! -s "$WORK/notify.log" ] || fail "sent without NOTIFY_SOCKET: $(cat "$WORK/notify.log")"
log "ok"
