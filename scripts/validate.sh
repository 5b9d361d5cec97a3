#!/usr/bin/env bash
# Correctness validation of ember against llama.cpp (the "peer"). Not part of CI.
#
#   scripts/validate.sh [args for scripts/validate_compare.py]
#   scripts/validate.sh --models smollm2,gemma3 --only teacher --only ppl   # a short run
#
# 1. builds (once, cached) llama.cpp and bench/peer/peer_tool via scripts/build-peer.sh;
# 2. for every model of the table (MODELS in scripts/validate_compare.py: SmolLM2-135M
#    Q4_1, Gemma 3 270M, Qwen2.5-Coder-0.5B; --models KEY,... picks some; missing files
#    are skipped, models ember refuses are reported as not supported yet), compares
#    (scripts/validate_models.py):
#      - tokenization of long real texts (ids must be identical),
#      - teacher-forced next-token distributions at every position of 3 real texts
#        (top-1 agreement, KL(peer||ember): mean, median, p99, max, the worst positions),
#      - distance to exact math: KL from the plain-float reference forward
#        (ember_reference_logits) for ember and llama.cpp, over 128 tokens,
#      - perplexity, ember perplexity vs llama-perplexity (-c 512, the same chunks),
#      - greedy 64-token continuations of 10 prompts (where they part ways, both sides'
#        margins between the two candidate tokens);
# 3. on the reference model (SmolLM2), in depth: the --numerics ggml identity gate, and
#    with ember's own kernels
#      - greedy 64-token continuations of 12 prompts; where ember and llama.cpp part
#        ways, both sides' logits at that point and the margin between the two
#        candidate tokens; llama.cpp's own default-vs-precise spread, from which the
#        near-tie threshold T is derived,
#      - last-position logits of 3 prompts (max/mean abs diff, KL, argmax; reported only);
# 4. writes docs/VALIDATION.md; exits non-zero if tokenization differs, if a greedy
#    continuation of the reference model fails the gate (below), or if an ember command
#    fails on a model it loads.
#
# Sections (--only, repeatable): tokenize, teacher, reference, ppl, continuations (per model);
# greedy, logits (the reference model). Default: all.
#
# Environment:
#   EMBER_BIN       ember binary (default build/bin/ember, relative to the repo root)
#   EMBER_MODELS    models dir (default ~/.cache/ember/models)
#   VALIDATE_SYNTHETIC   1 (default): also the synthetic Qwen3-0.6B and Llama-3.2-1B shapes
#                   (ember_make_model next to EMBER_BIN; generated once into
#                   VALIDATE_SYNTHETIC_DIR, default ~/.cache/ember/synthetic); 0: not
#   VALIDATE_EXTRA_MODELS  more models, space-separated KEY=PATH (e.g. synthetic
#                   "qwen3-0.6b-shape=/path/a.gguf llama-3.2-1b-shape=/path/b.gguf"); the
#                   chat format is guessed from KEY (gemma, llama, qwen, smol)
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
EMBER_BIN="${EMBER_BIN:-build/bin/ember}"
OUT="${VALIDATION_OUT:-docs/VALIDATION.md}"
extra=()
for spec in ${VALIDATE_EXTRA_MODELS:-}; do
    extra+=(--extra-model "$spec")
done
# The families with no small real file here (Qwen3, Llama 3.x): synthetic models
# in their real shapes, random weights, the real vocabularies (ember_make_model,
# built with ember), generated once into VALIDATE_SYNTHETIC_DIR.
SYN_DIR="${VALIDATE_SYNTHETIC_DIR:-$HOME/.cache/ember/synthetic}"
MAKE_MODEL="$(dirname "$EMBER_BIN")/ember_make_model"
if [[ "${VALIDATE_SYNTHETIC:-1}" == 1 && -x "$MAKE_MODEL" ]]; then
    mkdir -p "$SYN_DIR"
    for s in "qwen3-0.6b ggml-vocab-qwen2.gguf" "llama3.2-1b ggml-vocab-llama-bpe.gguf"; do
        read -r shape vocab <<<"$s"
        f="$SYN_DIR/$shape-shape-q4_k_m.gguf"
        if [[ ! -f "$f" ]]; then
            "$MAKE_MODEL" --shape "$shape" --type q4_k_m --vocab "$REPO_ROOT/../shared/vocab/$vocab" \
                -o "$f" >&2
        fi
        extra+=(--extra-model "$shape-shape=$f")
    done
fi

# build-peer.sh prints KEY=VALUE lines (PEER_TOOL, LLAMA_CPP_VERSION, ...) on stdout
peer_env="$(bash "$REPO_ROOT/scripts/build-peer.sh")"
eval "$peer_env"
: "${PEER_TOOL:?build-peer.sh did not report PEER_TOOL}"
: "${LLAMA_BIN_DIR:?build-peer.sh did not report LLAMA_BIN_DIR}"

if [[ "$EMBER_BIN" != /* && "$EMBER_BIN" == */* ]]; then
    EMBER_BIN="$REPO_ROOT/$EMBER_BIN"
fi
if ! command -v "$EMBER_BIN" >/dev/null 2>&1; then
    echo "[validate] error: ember binary not found: $EMBER_BIN (build it first, or set EMBER_BIN)" >&2
    exit 2
fi

echo "[validate] peer: $LLAMA_CPP_VERSION" >&2
echo "[validate] ember: $EMBER_BIN" >&2
echo "[validate] models: $MODELS_DIR" >&2

exec python3 "$REPO_ROOT/scripts/validate_compare.py" \
    --ember "$EMBER_BIN" \
    --peer "$PEER_TOOL" \
    --llama-perplexity "$LLAMA_BIN_DIR/llama-perplexity" \
    --models-dir "$MODELS_DIR" \
    ${extra[@]+"${extra[@]}"} \
    --out "$OUT" \
    --llama-version "$LLAMA_CPP_VERSION" \
    --repo "$REPO_ROOT" \
    --n-predict 64 \
    --peer-threads "${PEER_THREADS:-0}" \
    --gate "${VALIDATE_GATE:-tie-aware}" \
    "$@"
