#!/usr/bin/env bash
# Speculative decoding, measured: ember with --lookup and with a draft model
# against ember's plain decode of the same prompt, and llama.cpp's
# llama-lookup / llama-speculative on the same files, in one run,
# alternating. Prints a Markdown table (docs/PERFORMANCE.md, "Speculative
# decoding") to stdout; logs go to stderr.
#
#   bash bench/speculative_compare.sh
#
# Prompts (bench/prompts): code_rewrite.txt and summarise.txt repeat their
# input (where lookup pays); free_writing.txt sampled at temperature 0.8
# does not (where it must not cost more than 5%). Greedy runs use --temp 0;
# every run --seed 1 (speculative output equals plain output, sampled too). Each goes through the model's chat template (ember run
# --chat; the peer gets the same rendering from `ember template`).
#
# Rows:
#   lookup:  SmolLM2-135M-Instruct Q4_1 and Qwen2.5-Coder-0.5B-Instruct Q4_K_M
#            (real, from the model cache), --lookup 3 (adaptive draft length);
#   draft:   Qwen2.5-Coder-0.5B as an F16 target (`ember quantize --type F16`
#            of the Q4_K_M file, the same model at full width) with the Q4_K_M
#            file as its draft; and the Q4_K_M file with a draft whose guesses
#            fail (random weights, Qwen2's vocabulary: where speculation must
#            cost next to nothing).
# ember's tok/s is its decode rate (`decode_tok_s`: from the first generated
# token on); llama.cpp's is the one llama-lookup / llama-speculative print
# ("decoded N tokens in T seconds, speed: S t/s").
#
# Environment: SPEC_REPS [3], SPEC_THREADS ["1 2"], SPEC_N [256] tokens,
# SPEC_ROWS ["lookup draft"; "fail": the failing-draft row alone],
# SPEC_LOOKUP [3], EMBER_BENCH_BUILD [build-bench], EMBER_MODELS.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
REPS="${SPEC_REPS:-3}"
THREADS="${SPEC_THREADS:-1 2}"
N="${SPEC_N:-256}"
LOOKUP="${SPEC_LOOKUP:-3}"
BUILD="${EMBER_BENCH_BUILD:-$REPO/build-bench}"
MODELS="${EMBER_MODELS:-$HOME/.cache/ember/models}"
BENCH_DIR="${EMBER_BENCH_DIR:-$HOME/.cache/ember/bench}"
PEER_BIN="${EMBER_PEER_DIR:-$HOME/.cache/ember/peer}/build/bin"
log() { echo "[spec] $*" >&2; }

bash scripts/build-peer.sh >&2
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target ember ember_make_model >&2
EMBER="$BUILD/bin/ember"
mkdir -p "$BENCH_DIR"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

smol="$MODELS/SmolLM2-135M-Instruct.Q4_1.gguf"
qwen="$MODELS/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
qwen_f16="$BENCH_DIR/qwen2.5-coder-0.5b-f16-from-q4_k_m.gguf"
[[ -f "$smol" && -f "$qwen" ]] || { log "needs the real models: scripts/fetch-models.sh --all"; exit 1; }
# A draft whose guesses fail: random weights in SmolLM2's shape with Qwen2's
# vocabulary (../shared/vocab), so the vocabulary check passes.
bad_draft="$BENCH_DIR/smollm2-shape-q4_0-qwen2vocab.gguf"
[[ -f "$bad_draft" ]] || "$BUILD/bin/ember_make_model" --shape smollm2 --type q4_0 \
  --vocab "$REPO/../shared/vocab/ggml-vocab-qwen2.gguf" -o "$bad_draft" >&2
if [[ ! -f "$qwen_f16" ]]; then
  log "making $qwen_f16"
  "$EMBER" quantize -m "$qwen" -o "$qwen_f16.part" --type F16 >&2
  mv "$qwen_f16.part" "$qwen_f16"
fi

# The chat rendering of a prompt file for a model (for the peer).
render() {  # model prompt-file out
  python3 -c 'import json,sys; print(json.dumps([{"role":"user","content":open(sys.argv[1]).read()}]))' \
    "$2" >"$tmp/messages.json"
  "$EMBER" template -m "$1" --messages "$tmp/messages.json" >"$3"
}

# ember: decode tok/s, and the acceptance when speculative.
ember_run() {  # model prompt-file threads [speculative flags...]
  local model="$1" prompt="$2" t="$3"
  shift 3
  "$EMBER" run -m "$model" --chat -f "$prompt" -n "$N" --temp "$TEMP" --seed 1 --ignore-eos -c 2048 -t "$t" \
    --json "$@" 2>/dev/null |
    python3 -c 'import json,sys; j=json.load(sys.stdin); s=j.get("speculative",{}); print(j["decode_tok_s"], s.get("acceptance",""), s.get("tokens_per_step",""), len(j["tokens"]))'
}

# llama.cpp's llama-lookup / llama-speculative: its decode speed and acceptance.
peer_run() {  # program rendered-prompt threads [flags...]
  local prog="$1" prompt="$2" t="$3"
  shift 3
  "$PEER_BIN/$prog" -f "$prompt" -n "$N" --temp "$TEMP" --seed 1 --ignore-eos -c 2048 -t "$t" "$@" \
    >"$tmp/peer.out" 2>&1 || { log "$prog failed: $(tail -3 "$tmp/peer.out")"; echo "nan nan"; return; }
  python3 - "$tmp/peer.out" <<'EOF'
import re, sys
t = open(sys.argv[1], errors="replace").read()
speed = re.findall(r"speed:\s*([0-9.]+)\s*t/s", t)
acc = re.findall(r"accept\s*=\s*([0-9.]+)%", t)
print(speed[-1] if speed else "nan", float(acc[-1]) / 100 if acc else "nan")
EOF
}

median() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:] if x!="nan"]; print(f"{statistics.median(v):.1f} ({min(v):.1f}..{max(v):.1f})" if v else "n/a")' "$@"; }
med() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:] if x!="nan"]; print(statistics.median(v) if v else "nan")' "$@"; }

echo "| case | threads | ember plain tok/s | ember speculative tok/s | speedup | acceptance | tokens/pass | llama.cpp tok/s | llama.cpp acceptance | ember / llama.cpp |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

row() {  # label model target-prompt-file peer-prog peer-model-flags threads ember-flags...
  local label="$1" model="$2" prompt="$3" prog="$4" peer_flags="$5" t="$6"
  shift 6
  local rendered="$tmp/rendered.txt"
  render "$model" "$prompt" "$rendered"
  local plain=() spec=() acc=() tpp=() peer=() peer_acc=() p s a k ps pa r
  for ((r = 0; r < REPS; r++)); do
    # Plain and speculative take turns going first: the host drifts, and a
    # fixed order put the speculative run always right after the plain one.
    if ((r % 2 == 0)); then
      read -r p _ _ _ < <(ember_run "$model" "$prompt" "$t")
      read -r s a k _ < <(ember_run "$model" "$prompt" "$t" "$@")
    else
      read -r s a k _ < <(ember_run "$model" "$prompt" "$t" "$@")
      read -r p _ _ _ < <(ember_run "$model" "$prompt" "$t")
    fi
    # shellcheck disable=SC2086
    read -r ps pa < <(peer_run "$prog" "$rendered" "$t" -m "$model" $peer_flags)
    plain+=("$p"); spec+=("$s"); acc+=("$a"); tpp+=("$k"); peer+=("$ps"); peer_acc+=("$pa")
    log "$label t=$t rep $r: plain $p, speculative $s (acceptance $a), $prog $ps ($pa)"
  done
  local mp ms mpeer
  mp="$(med "${plain[@]}")"; ms="$(med "${spec[@]}")"; mpeer="$(med "${peer[@]}")"
  python3 - "$label" "$t" "$(median "${plain[@]}")" "$(median "${spec[@]}")" "$mp" "$ms" \
    "$(med "${acc[@]}")" "$(med "${tpp[@]}")" "$(median "${peer[@]}")" "$(med "${peer_acc[@]}")" "$mpeer" <<'EOF'
import sys
label, t, plain, spec, mp, ms, acc, tpp, peer, pacc, mpeer = sys.argv[1:]
mp, ms, mpeer = float(mp), float(ms), float(mpeer)
speed = f"**{ms / mp:.2f}x**"
ratio = f"{ms / mpeer:.2f}x" if mpeer == mpeer else "n/a"
fmt = lambda x: f"{float(x):.0%}" if x not in ("", "nan") else "n/a"
tp = f"{float(tpp):.2f}" if tpp not in ("", "nan") else "n/a"
print(f"| {label} | {t} | {plain} | {spec} | {speed} | {fmt(acc)} | {tp} | {peer} | {fmt(pacc)} | {ratio} |")
EOF
}

TEMP=0
for t in $THREADS; do
  [[ "${SPEC_ROWS:-lookup draft}" == *lookup* ]] || continue
  for p in code_rewrite summarise free_writing; do
    row "SmolLM2 Q4_1, $p, --lookup $LOOKUP" "$smol" "bench/prompts/$p.txt" llama-lookup \
      "--spec-draft-n-max 8" "$t" --lookup "$LOOKUP"
    row "Qwen2.5-Coder Q4_K_M, $p, --lookup $LOOKUP" "$qwen" "bench/prompts/$p.txt" llama-lookup \
      "--spec-draft-n-max 8" "$t" --lookup "$LOOKUP"
  done
  # Where drafts fail: sampled free writing (greedy small models fall into
  # loops that lookup predicts well, which is not the case to measure here).
  TEMP=0.8
  row "SmolLM2 Q4_1, free_writing sampled (T 0.8), --lookup $LOOKUP" "$smol" \
    bench/prompts/free_writing.txt llama-lookup "--spec-draft-n-max 8" "$t" --lookup "$LOOKUP"
  row "Qwen2.5-Coder Q4_K_M, free_writing sampled (T 0.8), --lookup $LOOKUP" "$qwen" \
    bench/prompts/free_writing.txt llama-lookup "--spec-draft-n-max 8" "$t" --lookup "$LOOKUP"
  TEMP=0
done
for t in $THREADS; do
  if [[ "${SPEC_ROWS:-lookup draft}" == *draft* ]]; then
    for p in code_rewrite free_writing; do
      row "Qwen2.5-Coder F16 target, Q4_K_M draft, $p" "$qwen_f16" "bench/prompts/$p.txt" \
        llama-speculative "-md $qwen -td $t --spec-draft-n-max 8" "$t" --draft-model "$qwen"
    done
  fi
  [[ "${SPEC_ROWS:-lookup draft}" == *draft* || "${SPEC_ROWS:-}" == *fail* ]] || continue
  row "Qwen2.5-Coder Q4_K_M, a random-weights draft (drafts fail), code_rewrite" "$qwen" \
    bench/prompts/code_rewrite.txt llama-speculative "-md $bad_draft -td $t --spec-draft-n-max 8" \
    "$t" --draft-model "$bad_draft"
done
