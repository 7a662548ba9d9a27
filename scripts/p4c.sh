#!/usr/bin/env bash
# Builds bf-p4c, Intel's open Tofino compiler from p4lang/p4c (backends/tofino), into a cache
# folder outside this repository, from pinned sources; `rtl-gen --target p4 --compile` and
# rtl-gen's compile test find it there (docs/p4.md, "Compiling with Intel's Tofino compiler").
#
#   scripts/p4c.sh --sources DIR      local copies (git repositories) of the five sources below,
#                                     as DIR/p4c, DIR/abseil-cpp, DIR/p4runtime, DIR/protobuf and
#                                     DIR/spdlog: each is cloned from there at its pinned commit
#   scripts/p4c.sh --git-base URL     clones them from URL/<owner>/<name> (the public git host
#                                     of these projects, or a mirror of it)
#   [--cache DIR]                     where to build (default: ~/.cache/horus-p4c)
#
# Idempotent: a step whose result is there is skipped, and ninja resumes an interrupted build.
# About two hours on two cores, and up to 4.5 GB of memory per compiler process; it prints a
# progress line. Debian packages and a Python virtual environment (with the Z3 the compiler
# links, from PyPI) are installed as needed. The result: CACHE/build/bf-p4c.
set -euo pipefail

sources="" git_base="" cache="${HOME}/.cache/horus-p4c"
while (($#)); do
    case "$1" in
        --sources) sources="$(cd "$2" && pwd)"; shift 2 ;;
        --git-base) git_base="${2%/}"; shift 2 ;;
        --cache) cache="$2"; shift 2 ;;
        *) echo "usage: scripts/p4c.sh (--sources DIR | --git-base URL) [--cache DIR]" >&2; exit 2 ;;
    esac
done
if [ -z "$sources" ] && [ -z "$git_base" ]; then
    echo "scripts/p4c.sh: say where the sources are: --sources DIR (local copies) or --git-base URL" >&2
    exit 2
fi

# name  owner/repository  commit (p4c's own CMake pins the four dependencies)
pins=(
    "p4c p4lang/p4c 34b86e9bacb932c799aaf1b83495ce1e386ea047"
    "abseil-cpp abseil/abseil-cpp dd4c89bd"
    "p4runtime p4lang/p4runtime ec4eb5ef70dbcbcbf2f8357a4b2b8c2f218845a5"
    "protobuf protocolbuffers/protobuf 4a2aef57"
    "spdlog gabime/spdlog 53e1c9ab"
)

say() { echo "== p4c: $*"; }
src="$cache/src"
mkdir -p "$src"

say "Debian packages"
packages=(cmake bison flex libfl-dev libboost-graph-dev libboost-iostreams-dev libgc-dev
    rapidjson-dev pkg-config ninja-build ccache libgmp-dev g++ python3-venv git)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Clones `name` at its pinned commit into $2, from the local copy or the git base.
checkout() {
    local name="$1" dest="$2" repo="$3" commit="$4" from
    if [ -f "$dest/.horus-pinned" ] && [ "$(cat "$dest/.horus-pinned")" = "$commit" ]; then
        return
    fi
    if [ -n "$sources" ]; then from="$sources/$name"; else from="$git_base/$repo"; fi
    rm -rf "$dest"
    git clone -q --no-checkout "$from" "$dest"
    if [ "$name" = p4c ]; then
        # A presentation the sources do not need (and some snapshots lack: git then names the
        # missing blob, harmlessly, as it writes the index).
        git -C "$dest" config core.sparseCheckout true
        mkdir -p "$dest/.git/info"
        printf '/*\n!/docs/compiler-design.pptx\n' >"$dest/.git/info/sparse-checkout"
    fi
    git -C "$dest" checkout -q "$commit"
    echo "$commit" >"$dest/.horus-pinned"
}

say "sources at their pinned commits"
for pin in "${pins[@]}"; do
    read -r name repo commit <<<"$pin"
    case "$name" in
        spdlog) ;; # below, inside p4c's tree
        *) checkout "$name" "$src/$name" "$repo" "$commit" ;;
    esac
done
read -r _ spdlog_repo spdlog_commit <<<"${pins[4]}"
checkout spdlog "$src/p4c/backends/tofino/third_party/spdlog" "$spdlog_repo" "$spdlog_commit"

# GCC 12 rejects two lambdas of ir/visitor.cpp that take the map's element by a non-const
# reference; they only read it.
visitor="$src/p4c/ir/visitor.cpp"
if grep -q '\](flow_join_points_t::value_type &el)' "$visitor"; then
    say "patching ir/visitor.cpp for GCC 12"
    sed -i 's/\](flow_join_points_t::value_type &el)/](const flow_join_points_t::value_type \&el)/' "$visitor"
fi

# The driver keeps the assembler's command as a pathlib.Path, which its command check (str.find)
# and its runner (str.join) do not take: every program that reaches the assembler fails with a
# Python error. The build copies the driver, so both copies are patched.
for driver in "$src/p4c/backends/tofino/bf-p4c/driver/barefoot.py" "$cache/build/p4c_src/barefoot.py"; do
    if [ -f "$driver" ] && grep -q "self.add_command('assembler', bfas)" "$driver"; then
        say "patching the driver's assembler command (${driver#"$cache"/})"
        sed -i "s|self.add_command('assembler', bfas)|self.add_command('assembler', str(bfas))|" "$driver"
    fi
done

say "Python environment (the driver's packages, and Z3 4.11)"
venv="$cache/venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import z3, jsl, jsonschema, yaml, PyInstaller' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q jsl jsonschema packaging pyyaml pyinstaller z3-solver==4.11.2.0
fi
z3="$("$venv/bin/python" -c 'import os, z3; print(os.path.dirname(z3.__file__))')"
# The driver's build runs pyinstaller from the environment.
export PATH="$venv/bin:$PATH"

build="$cache/build"
if [ ! -f "$build/build.ninja" ]; then
    say "configuring"
    cmake -S "$src/p4c" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_TOFINO=ON \
        -DENABLE_GTESTS=OFF -DENABLE_BMV2=OFF -DENABLE_EBPF=OFF -DENABLE_UBPF=OFF -DENABLE_DPDK=OFF \
        -DENABLE_P4TC=OFF -DENABLE_P4FMT=OFF -DENABLE_P4C_GRAPHS=OFF -DENABLE_TEST_TOOLS=OFF \
        -DENABLE_P4TEST=ON -DENABLE_DOCS=OFF -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
        -DFETCHCONTENT_SOURCE_DIR_ABSEIL="$src/abseil-cpp" \
        -DFETCHCONTENT_SOURCE_DIR_P4RUNTIME="$src/p4runtime" \
        -DP4C_USE_PREINSTALLED_PROTOBUF=OFF -DFETCHCONTENT_SOURCE_DIR_PROTOBUF="$src/protobuf" \
        -DP4C_DRIVER_NAME=bf-p4c -DCMAKE_UNITY_BUILD=ON -DP4C_USE_PREINSTALLED_BDWGC=ON \
        -DUSE_PREINSTALLED_Z3=ON -DZ3_INCLUDE_DIR="$z3/include" -DZ3_LIBRARY="$z3/lib/libz3.so" \
        -DPYTHON_EXECUTABLE="$venv/bin/python" >"$cache/configure.log" 2>&1 ||
        { echo "configuring failed: $cache/configure.log" >&2; exit 1; }
fi

say "building (about two hours on two cores; the log is $cache/build.log)"
set +e
ninja -C "$build" -j"$(nproc)" p4c-barefoot bfas p4test p4c_driver linkp4cbarefoot \
    set_p4c_default_target bf-p4c_symlink update_includes 2>&1 |
    tee "$cache/build.log" |
    awk '/^\[[0-9]+\/[0-9]+\]/ { split(substr($1, 2), n, "/"); p = int(100 * n[1] / n[2]);
             if (p != last) { printf "\r   %3d %% (%s steps)", p, substr($1, 2, length($1) - 2); fflush(); last = p } }
         END { print "" }'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
    echo "the build failed: the end of $cache/build.log says why" >&2
    exit "$status"
fi
"$build/bf-p4c" --version
say "done: $build/bf-p4c (rtl-gen finds it there; or set HORUS_BF_P4C)"
