#!/usr/bin/env bash
# Start spread against host count on the lent 16-core machine (issue 29's 32-host target).
#
# That machine has no `ip` and no network namespaces (gVisor), no fio and no pydantic, and
# nothing can be fetched there: its kit travels in .devkit/ (git-ignored): `fio` (3.33, static)
# and `whl/` (the wheels of arraybench's runtime dependencies missing there). Run from the repo
# root with OUT set (the log goes to $OUT/spread.log):
#
#     OUT=/tmp/x bash benchmarks/device_start_spread.sh
#
# Settings (environment): SPREAD_PYTHON (python3), DEVKIT (.devkit), SPREAD_SKIP_WHEELS=1 (a
# Python that has the dependencies already), SPREAD_HOSTS (4,8,16,32), SPREAD_ROUNDS (5),
# SPREAD_LIMIT_S (330: the measurement is stopped there; the host counts done by then are in
# the log). Any failed step stops the script with one line saying which, exit 1.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
: "${OUT:?set OUT to the folder for spread.log}"
PY=${SPREAD_PYTHON:-python3}
KIT=${DEVKIT:-.devkit}
HOSTS=${SPREAD_HOSTS:-4,8,16,32}
ROUNDS=${SPREAD_ROUNDS:-5}
LIMIT_S=${SPREAD_LIMIT_S:-330}
BASE_PORT=8795 # start_spread.py's PORT
mkdir -p "$OUT" || exit 1
LOG=$OUT/spread.log
: >"$LOG"

say() { echo "$*" | tee -a "$LOG"; }
fail() {
    say "device_start_spread.sh: FAILED: $*"
    exit 1
}

say "== kit"
if [ "${SPREAD_SKIP_WHEELS:-0}" != 1 ]; then
    ls "$KIT"/whl/*.whl >/dev/null 2>&1 || fail "no wheels in $KIT/whl (was $KIT carried?)"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$KIT"/whl/*.whl 2>&1 | tee -a "$LOG"
    [ "${PIPESTATUS[0]}" = 0 ] || fail "pip install of $KIT/whl/*.whl into /tmp/site"
    export PYTHONPATH=/tmp/site:src
else
    export PYTHONPATH=src
fi
# arraybench finds fio on PATH (engines/fio/runner.py fio_binary): a copy with its exec bit
# set (a carried file may lose it) in a folder of its own, first on PATH
[ -f "$KIT/fio" ] || fail "no $KIT/fio (was $KIT carried?)"
# (copied then renamed: a second run on the same machine cannot write over a running binary)
mkdir -p /tmp/spreadbin && cp "$KIT/fio" /tmp/spreadbin/fio.new &&
    chmod 755 /tmp/spreadbin/fio.new && mv -f /tmp/spreadbin/fio.new /tmp/spreadbin/fio ||
    fail "copying $KIT/fio to /tmp/spreadbin"
export PATH=/tmp/spreadbin:$PATH
[ "$(command -v fio)" = /tmp/spreadbin/fio ] || fail "fio on PATH is $(command -v fio)"
"$PY" -c "import arraybench.run.campaign, pydantic, re2, yaml; print('imports ok: pydantic',
pydantic.VERSION)" 2>&1 | tee -a "$LOG"
[ "${PIPESTATUS[0]}" = 0 ] || fail "importing arraybench and its dependencies (above)"

say "== machine"
{
    echo "nproc: $(nproc)"
    grep -m1 'model name' /proc/cpuinfo
    echo "kernel: $(uname -r) ($(uname -m))"
    echo "python: $("$PY" --version 2>&1) ($(command -v "$PY"))"
    echo "fio: $(fio --version 2>&1)"
    echo "uptime: $(uptime)"
} 2>&1 | tee -a "$LOG"
fio --version 2>&1 | grep -q '^fio-3\.33' || fail "fio --version is not fio-3.33"

say "== loopback addresses"
# each loopback host has its own address 127.0.0.<i+1> and port BASE_PORT+i
# (tests/loopback_hosts.py): bind every pair now, so a sandbox that routes only 127.0.0.1, or
# servers left by an earlier run holding the ports, stop here with the reason
MAX_HOSTS=$(echo "$HOSTS" | tr ',' '\n' | sort -n | tail -1)
"$PY" - "$MAX_HOSTS" "$BASE_PORT" <<'EOF' 2>&1 | tee -a "$LOG"
import socket, sys
count, port = int(sys.argv[1]), int(sys.argv[2])
for i in range(count):
    address = f"127.0.0.{i + 1}"
    with socket.socket() as s:
        try:
            s.bind((address, port + i))
        except OSError as exc:
            sys.exit(f"cannot bind {address}:{port + i}: {exc}")
print(f"bound 127.0.0.1 ... 127.0.0.{count}, ports {port} ... {port + count - 1}")
EOF
[ "${PIPESTATUS[0]}" = 0 ] || fail "the loopback hosts' addresses or ports are not free (above)"

say "== start spread: --loopback --hosts $HOSTS --rounds $ROUNDS (stopped at ${LIMIT_S} s)"
began=$(date +%s)
PYTHONUNBUFFERED=1 timeout "$LIMIT_S" "$PY" benchmarks/start_spread.py --loopback \
    --hosts "$HOSTS" --rounds "$ROUNDS" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
say "== took $(($(date +%s) - began)) s, exit $rc; uptime: $(uptime)"
[ "$rc" = 124 ] && fail "stopped after ${LIMIT_S} s: the host counts above are the ones finished"
[ "$rc" = 0 ] || fail "start_spread.py exited $rc (above)"
say "device_start_spread.sh: done"
