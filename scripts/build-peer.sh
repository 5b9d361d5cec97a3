#!/usr/bin/env bash
# Build the llama.cpp "peer" used for correctness validation (scripts/validate.sh)
# and benchmarking, plus our own small peer program (bench/peer/peer_tool.cpp).
#
# Everything goes into a cache directory outside the repo:
#     ${EMBER_PEER_DIR:-$HOME/.cache/ember/peer}
# and is built only once. A second run prints the location and exits quickly
# (peer_tool is recompiled only if bench/peer/peer_tool.cpp changed).
#
# llama.cpp's source comes from the PyPI sdist of llama-cpp-python, which vendors
# it under vendor/llama.cpp. The sdist is taken from
#     ${EMBER_MODELS:-$HOME/.cache/ember/models}/pkgs/   or   $EMBER_PEER_DIR/pkgs/
# and downloaded with pip when missing.
#
# This is NOT part of the main CMake build or of CI.
#
# Output (stdout, last lines): KEY=VALUE lines that scripts can `eval`:
#     PEER_DIR=...  LLAMA_BIN_DIR=...  PEER_TOOL=...  LLAMA_BENCH=...  LLAMA_CPP_VERSION=...
#
# Environment:
#     EMBER_PEER_DIR    cache dir (default ~/.cache/ember/peer)
#     EMBER_MODELS      models dir, searched for pkgs/<sdist> (default ~/.cache/ember/models)
#     PEER_JOBS         parallel build jobs (default 2)
#     PEER_FORCE=1      wipe the llama.cpp build and rebuild from scratch
set -euo pipefail

LLAMA_CPP_PY_VERSION="0.3.36"
SDIST_NAME="llama_cpp_python-${LLAMA_CPP_PY_VERSION}.tar.gz"

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEER_DIR="${EMBER_PEER_DIR:-$HOME/.cache/ember/peer}"
MODELS_DIR="${EMBER_MODELS:-$HOME/.cache/ember/models}"
JOBS="${PEER_JOBS:-2}"

SRC_PARENT="$PEER_DIR/src"
SRC_DIR="$SRC_PARENT/llama_cpp_python-${LLAMA_CPP_PY_VERSION}"
LLAMA_SRC="$SRC_DIR/vendor/llama.cpp"
BUILD_DIR="$PEER_DIR/build"
BIN_DIR="$BUILD_DIR/bin"
STAMP="$PEER_DIR/llama.cpp.built"
VERSION_FILE="$PEER_DIR/VERSION"
PEER_SRC="$REPO_ROOT/bench/peer/peer_tool.cpp"
PEER_TOOL="$PEER_DIR/peer_tool"
GRAMMAR_PEER_SRC="$REPO_ROOT/bench/peer/grammar_peer.cpp"
GRAMMAR_PEER="$PEER_DIR/grammar_peer"

# Targets we need from llama.cpp: the library, llama-bench (kernel benchmarks),
# llama-tokenize and llama-simple (manual spot checks of peer_tool's behaviour),
# llama-perplexity (docs/KV.md compares perplexities), llama-quantize
# (scripts/validate_quantize.sh compares ember quantize's files with its own),
# llama-lookup and llama-speculative (bench/speculative_compare.sh), llama-server
# (bench/serve_load.py --peer).
TARGETS=(llama llama-bench llama-tokenize llama-simple llama-perplexity llama-quantize
         llama-lookup llama-speculative llama-server)

# Configuration; changing it invalidates the stamp.
CMAKE_FLAGS=(
    -DCMAKE_BUILD_TYPE=Release
    -DGGML_NATIVE=ON
    -DLLAMA_CURL=OFF
    -DLLAMA_OPENSSL=OFF
    -DBUILD_SHARED_LIBS=ON
    -DLLAMA_BUILD_TESTS=OFF
    -DLLAMA_BUILD_SERVER=ON
    -DLLAMA_BUILD_APP=OFF
    -DLLAMA_BUILD_UI=OFF
    -DLLAMA_USE_PREBUILT_UI=OFF
    -DLLAMA_BUILD_TOOLS=ON
    -DLLAMA_BUILD_EXAMPLES=ON
)

log() { echo "[build-peer] $*" >&2; }

print_result() {
    local ver
    ver="$(sed -n 's/^llama_cpp_version=//p' "$VERSION_FILE" 2>/dev/null || true)"
    log "llama.cpp peer: $ver"
    log "  build dir:   $BUILD_DIR"
    log "  llama-bench: $BIN_DIR/llama-bench"
    log "  peer_tool:   $PEER_TOOL"
    # shell-quoted so that callers can `eval "$(scripts/build-peer.sh)"`
    printf 'PEER_DIR=%q\n' "$PEER_DIR"
    printf 'LLAMA_BIN_DIR=%q\n' "$BIN_DIR"
    printf 'PEER_TOOL=%q\n' "$PEER_TOOL"
    printf 'GRAMMAR_PEER=%q\n' "$GRAMMAR_PEER"
    printf 'LLAMA_BENCH=%q\n' "$BIN_DIR/llama-bench"
    printf 'LLAMA_CPP_VERSION=%q\n' "$ver"
}

need() {
    # wait a little for tools that may still be being installed by apt
    local tool="$1" tries=0
    while ! command -v "$tool" >/dev/null 2>&1; do
        if (( tries >= 20 )); then
            log "error: '$tool' not found (apt-get install -y cmake g++ ninja-build)"
            exit 1
        fi
        log "'$tool' not found yet, waiting 30s (is apt still installing it?)"
        sleep 30
        tries=$((tries + 1))
    done
}

config_id() {
    # identifies source version + configuration; stored in the stamp
    printf '%s\n' "$LLAMA_CPP_PY_VERSION" "${CMAKE_FLAGS[@]}" "${TARGETS[@]}" | sha256sum | cut -c1-16
}

mkdir -p "$PEER_DIR"
# serialize concurrent invocations (e.g. two validate runs)
exec 9>"$PEER_DIR/.lock"
flock 9

build_peer_tool() {
    # our peer program, compiled directly against the built libllama (never part of the main build)
    if [[ ! -f "$PEER_SRC" ]]; then
        log "error: $PEER_SRC not found"
        exit 1
    fi
    if [[ -x "$PEER_TOOL" && "$PEER_TOOL" -nt "$PEER_SRC" && "$PEER_TOOL" -nt "$STAMP" ]]; then
        return 0
    fi
    need g++
    log "compiling peer_tool"
    g++ -std=c++17 -O2 -Wall -Wextra \
        -I"$LLAMA_SRC/include" -I"$LLAMA_SRC/ggml/include" \
        "$PEER_SRC" -o "$PEER_TOOL.tmp" \
        -L"$BIN_DIR" -lllama -lggml -lggml-base \
        -Wl,-rpath,"$BIN_DIR" -pthread
    mv -f "$PEER_TOOL.tmp" "$PEER_TOOL"
}

build_grammar_peer() {
    # llama.cpp's grammar sampler on ember's grammars (bench/grammar_compare.sh)
    if [[ -x "$GRAMMAR_PEER" && "$GRAMMAR_PEER" -nt "$GRAMMAR_PEER_SRC" && "$GRAMMAR_PEER" -nt "$STAMP" ]]; then
        return 0
    fi
    log "compiling grammar_peer"
    g++ -std=c++17 -O2 -Wall -Wextra \
        -I"$LLAMA_SRC/include" -I"$LLAMA_SRC/ggml/include" \
        "$GRAMMAR_PEER_SRC" -o "$GRAMMAR_PEER.tmp" \
        -L"$BIN_DIR" -lllama -lggml -lggml-base \
        -Wl,-rpath,"$BIN_DIR" -pthread
    mv -f "$GRAMMAR_PEER.tmp" "$GRAMMAR_PEER"
}

all_built() {  # every program target is there (a target added later builds incrementally)
    local t
    for t in "${TARGETS[@]}"; do
        [[ "$t" == llama || -f "$BIN_DIR/$t" ]] || return 1
    done
}

if [[ "${PEER_FORCE:-0}" != "1" && -f "$STAMP" && "$(cat "$STAMP")" == "$(config_id)" \
      && all_built && -f "$VERSION_FILE" ]]; then
    build_peer_tool
    build_grammar_peer
    print_result
    exit 0
fi

need cmake
need g++
need ninja

# ---------------------------------------------------------------- source
if [[ ! -f "$LLAMA_SRC/include/llama.h" ]]; then
    sdist=""
    for cand in "$MODELS_DIR/pkgs/$SDIST_NAME" "$PEER_DIR/pkgs/$SDIST_NAME"; do
        if [[ -f "$cand" ]]; then sdist="$cand"; break; fi
    done
    if [[ -z "$sdist" ]]; then
        log "downloading llama-cpp-python==$LLAMA_CPP_PY_VERSION sdist from PyPI"
        mkdir -p "$PEER_DIR/pkgs"
        python3 -m pip download --no-deps --no-binary :all: \
            "llama-cpp-python==$LLAMA_CPP_PY_VERSION" -d "$PEER_DIR/pkgs" >&2
        sdist="$PEER_DIR/pkgs/$SDIST_NAME"
        [[ -f "$sdist" ]] || { log "error: download did not produce $sdist"; exit 1; }
    fi
    log "extracting $sdist"
    rm -rf "$SRC_DIR"
    mkdir -p "$SRC_PARENT"
    tar -xzf "$sdist" -C "$SRC_PARENT"
    [[ -f "$LLAMA_SRC/include/llama.h" ]] || { log "error: no vendor/llama.cpp in sdist"; exit 1; }
fi

# ---------------------------------------------------------------- version
# The sdist has no git metadata; llama-cpp-python's CHANGELOG names the llama.cpp
# commit it vendors ("update llama.cpp to ggml-org/llama.cpp@<hash>").
commit="$(awk -v v="## [$LLAMA_CPP_PY_VERSION]" '
    index($0, v) == 1 { inside = 1; next }
    inside && /^## \[/ { exit }
    inside && match($0, /llama\.cpp@[0-9a-f]+/) { print substr($0, RSTART + 10, RLENGTH - 10); exit }
' "$SRC_DIR/CHANGELOG.md" || true)"
commit="${commit:-unknown}"
llama_ver="$(sed -n 's/^set(LLAMA_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))/\2/p' "$LLAMA_SRC/CMakeLists.txt" | paste -sd. -)"
ggml_ver="$(sed -n 's/^set(GGML_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))/\2/p' "$LLAMA_SRC/ggml/CMakeLists.txt" | paste -sd. -)"
{
    echo "llama_cpp_version=llama.cpp@${commit} (llama ${llama_ver:-?}, ggml ${ggml_ver:-?}, from llama-cpp-python ${LLAMA_CPP_PY_VERSION} sdist)"
    echo "llama_cpp_commit=${commit}"
    echo "llama_cpp_python=${LLAMA_CPP_PY_VERSION}"
    echo "llama_version=${llama_ver}"
    echo "ggml_version=${ggml_ver}"
    echo "cmake_flags=${CMAKE_FLAGS[*]}"
    echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "compiler=$(g++ --version | head -1)"
} > "$VERSION_FILE.tmp"

# ---------------------------------------------------------------- build
if [[ "${PEER_FORCE:-0}" == "1" ]]; then rm -rf "$BUILD_DIR"; fi
rm -f "$STAMP"
t0=$(date +%s)
log "configuring llama.cpp ($commit) in $BUILD_DIR"
# GIT_CEILING_DIRECTORIES keeps llama.cpp's build-info from picking up an unrelated
# enclosing git repo; the commit is passed explicitly instead.
GIT_CEILING_DIRECTORIES="$SRC_PARENT" cmake -S "$LLAMA_SRC" -B "$BUILD_DIR" -G Ninja \
    "${CMAKE_FLAGS[@]}" -DLLAMA_BUILD_COMMIT="$commit" >&2
log "building targets: ${TARGETS[*]} (-j$JOBS)"
cmake --build "$BUILD_DIR" -j"$JOBS" --target "${TARGETS[@]}" >&2
t1=$(date +%s)
echo "build_seconds=$((t1 - t0))" >> "$VERSION_FILE.tmp"
mv -f "$VERSION_FILE.tmp" "$VERSION_FILE"
config_id > "$STAMP"
log "llama.cpp built in $((t1 - t0)) s"

build_peer_tool
build_grammar_peer
print_result
