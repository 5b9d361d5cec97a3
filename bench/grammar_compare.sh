#!/usr/bin/env bash
# Grammar mask cost, ember against llama.cpp, in one run (docs/PERFORMANCE.md,
# "Grammar masks"): bench/grammar_bench.cpp forces each case's document through
# ember's grammar stage and writes the grammar and tokens; bench/peer/
# grammar_peer.cpp then runs llama.cpp's grammar sampler on the same grammar
# and tokens, and checks that its allowed-token counts equal ember's.
#
#   bench/grammar_compare.sh [BUILD_DIR] [ROUNDS]
#
# BUILD_DIR defaults to build (it needs ember_grammar_bench); ROUNDS to 5 for
# ember and 1 for llama.cpp (tens of milliseconds per token there).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$REPO/build}"
ROUNDS="${2:-5}"
VOCAB="${GRAMMAR_VOCAB:-$REPO/../shared/vocab/ggml-vocab-qwen2.gguf}"
eval "$("$REPO/scripts/build-peer.sh")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "## ember ($(git -C "$REPO" rev-parse --short HEAD)), $ROUNDS rounds"
"$BUILD/bin/ember_grammar_bench" --vocab "$VOCAB" --rounds "$ROUNDS" --emit "$WORK"
echo
echo "## llama.cpp ($LLAMA_CPP_VERSION), 1 round"
"$GRAMMAR_PEER" "$VOCAB" "$WORK" json person orders article --rounds 1
echo
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
