#!/usr/bin/env bash
# Correctness validation of ember against llama.cpp (the "peer"). Not part of CI.
#
#   scripts/validate.sh [extra args for scripts/validate_compare.py, e.g. --only greedy]
#
# 1. builds (once, cached) llama.cpp and bench/peer/peer_tool via scripts/build-peer.sh;
# 2. compares, on SmolLM2-135M-Instruct Q4_1:
#      - greedy 64-token continuations of 12 prompts; where ember and llama.cpp part
#        ways, both sides' logits at that point and the margin between the two
#        candidate tokens; llama.cpp's own default-vs-precise spread, from which the
#        near-tie threshold T is derived,
#      - last-position logits of 3 prompts (max/mean abs diff, KL, argmax; reported only),
#      - tokenization of long real texts (ids must be identical);
# 3. writes docs/VALIDATION.md; exits non-zero if tokenization differs, if a greedy
#    continuation fails the gate (below), or if an ember command fails.
#
# Environment:
#   EMBER_BIN       ember binary (default build/bin/ember, relative to the repo root)
#   EMBER_MODELS    models dir (default ~/.cache/ember/models)
#   EMBER_PEER_DIR  peer cache dir (default ~/.cache/ember/peer)
#   VALIDATION_OUT  report path (default docs/VALIDATION.md)
#   PEER_THREADS    -t for peer_tool (default: its own default = all CPUs)
#   VALIDATE_GATE   the greedy criterion. tie-aware (the default): identical to the default
#                   peer, or the first divergence is at a near-tie (the default peer's own
#                   margin between its token and ember's is below T, T = 99th percentile of
#                   llama.cpp's default-vs-precise margin shifts; see docs/VALIDATION.md).
#                   default / precise / either: token ids must be identical to the default
#                   peer (llama.cpp library defaults: flash attention auto -> on, F16 KV
#                   cache), the precise one (--fa off --kv f32), or either of them.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

MODELS_DIR="${EMBER_MODELS:-$HOME/.cache/ember/models}"
MODEL="$MODELS_DIR/SmolLM2-135M-Instruct.Q4_1.gguf"
EMBER_BIN="${EMBER_BIN:-build/bin/ember}"
OUT="${VALIDATION_OUT:-docs/VALIDATION.md}"

if [[ ! -f "$MODEL" ]]; then
    echo "[validate] error: model not found: $MODEL" >&2
    exit 2
fi

# build-peer.sh prints KEY=VALUE lines (PEER_TOOL, LLAMA_CPP_VERSION, ...) on stdout
peer_env="$(bash "$REPO_ROOT/scripts/build-peer.sh")"
eval "$peer_env"
: "${PEER_TOOL:?build-peer.sh did not report PEER_TOOL}"

if [[ "$EMBER_BIN" != /* && "$EMBER_BIN" == */* ]]; then
    EMBER_BIN="$REPO_ROOT/$EMBER_BIN"
fi
if ! command -v "$EMBER_BIN" >/dev/null 2>&1; then
    echo "[validate] error: ember binary not found: $EMBER_BIN (build it first, or set EMBER_BIN)" >&2
    exit 2
fi

echo "[validate] peer: $LLAMA_CPP_VERSION" >&2
echo "[validate] ember: $EMBER_BIN" >&2
echo "[validate] model: $MODEL" >&2

exec python3 "$REPO_ROOT/scripts/validate_compare.py" \
    --ember "$EMBER_BIN" \
    --peer "$PEER_TOOL" \
    --model "$MODEL" \
    --out "$OUT" \
    --llama-version "$LLAMA_CPP_VERSION" \
    --repo "$REPO_ROOT" \
    --n-predict 64 \
    --peer-threads "${PEER_THREADS:-0}" \
    --gate "${VALIDATE_GATE:-tie-aware}" \
    "$@"
