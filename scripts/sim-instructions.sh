#!/usr/bin/env bash
# Instructions per event of the simulator, counted by valgrind (cachegrind, no cache simulation):
# unlike CPU time, the same for the same binary and inputs whatever else the machine is doing, so
# two versions of the engine compare on a shared machine. Runs the events bench
# (`sim/benches/events.rs`, its configuration) for a short and a longer simulated time and divides
# the difference in instructions by the difference in events, which leaves the setup out.
#
#   scripts/sim-instructions.sh [policy ...]      (default: horus random)
#
# SHORT_MS and LONG_MS (default 0.5 and 1.5) set the two simulated times. Takes about a minute per
# policy (the two runs go side by side). Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null 2>&1 || {
    echo "valgrind is needed (Debian package valgrind)" >&2
    exit 1
}
short_ms=${SHORT_MS:-0.5}
long_ms=${LONG_MS:-1.5}
awk -v s="$short_ms" -v l="$long_ms" 'BEGIN { exit !(s > 0 && l > s) }' || {
    echo "need 0 < SHORT_MS < LONG_MS, got $short_ms and $long_ms" >&2
    exit 1
}
policies=("$@")
((${#policies[@]})) || policies=(horus random)

# The bench's executable, as cargo names it.
bench=$(cargo bench -p horus-sim --bench events --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "events" and m.get("executable"):
        print(m["executable"])')
[ -x "$bench" ] || {
    echo "could not build the events bench" >&2
    exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run under valgrind: prints "<events> <instructions>".
count() {
    local policy=$1 ms=$2 out=$tmp/$1-$2
    HORUS_SIM_HUGE_PAGES=0 HORUS_BENCH_POLICIES=$policy HORUS_BENCH_RUNS=1 HORUS_BENCH_SIM_MS=$ms \
        valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bench" \
        >"$out" 2>&1 || {
        echo "valgrind run of $policy for $ms ms failed:" >&2
        grep -m1 -A1 panicked "$out" >&2 || tail -5 "$out" >&2
        return 1
    }
    local events instr
    events=$(sed -n 's/.* tasks, \([0-9]*\) events in .*/\1/p' "$out")
    instr=$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$out" | tr -d ,)
    [ -n "$events" ] && [ -n "$instr" ] || {
        echo "no event or instruction count in the run of $policy for $ms ms" >&2
        return 1
    }
    echo "$events $instr"
}

printf '%-8s %12s %16s\n' policy events instr/event
for p in "${policies[@]}"; do
    count "$p" "$short_ms" >"$tmp/$p.short" &
    short=$!
    count "$p" "$long_ms" >"$tmp/$p.long" || {
        wait "$short" || true
        exit 1
    }
    wait "$short"
    read -r e1 i1 <"$tmp/$p.short"
    read -r e2 i2 <"$tmp/$p.long"
    awk -v p="$p" -v e1="$e1" -v e2="$e2" -v i1="$i1" -v i2="$i2" \
        'BEGIN { printf "%-8s %12d %16.1f\n", p, e2 - e1, (i2 - i1) / (e2 - e1) }'
done
