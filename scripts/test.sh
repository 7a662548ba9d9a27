#!/usr/bin/env bash
# The test command. On a fresh machine it first installs what the tests need (Verilator, Yosys,
# g++, make, clang, which compiles the co-simulation's Verilated models about 10 % faster
# than g++, python3, which runs the independent dissector of the endpoints' interoperation
# test, and z3, the solver of the formal proofs (yosys-smtbmc comes with yosys): Debian
# packages; ptf and scapy, which the generated PTF tests import: Python packages), then checks
# formatting and lints and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
# command:package
for tool in verilator:verilator yosys:yosys yosys-smtbmc:yosys z3:z3 g++:g++ make:make clang++:clang python3:python3; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if ((${#missing[@]})); then
    echo "== installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The generated PTF tests import ptf and scapy: the test suite imports them and checks their frames.
if ! python3 -c "import ptf, scapy" >/dev/null 2>&1; then
    echo "== installing the Python packages ptf and scapy"
    if ! python3 -m pip --version >/dev/null 2>&1; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
    fi
    python3 -m pip install -q --break-system-packages ptf scapy 2>/dev/null ||
        python3 -m pip install -q ptf scapy
fi
echo "== tools: $(verilator --version | head -1); $(yosys -V | head -1); $(g++ --version | head -1); $(clang++ --version | head -1)"

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo test"
cargo test --workspace
