#!/usr/bin/env bash
# Time to first token of a chat's second turn, with and without reusing the
# first turn's KV state (ember run --prompt-cache). docs/KV.md has the results.
#
#   bench/kv_reuse.sh [-m MODEL] [-t THREADS] [-r REPS] [--doc FILE]
#
# Turn 1: a system prompt, a user message carrying a document (the first
# --doc-tokens words of FILE, default the GPL-3 text), the assistant's reply
# (greedy, 48 tokens). Turn 2: all of that plus a short question. Each
# measurement is `ember run -n 1` of turn 2, so its time to first token is the
# prompt time the log reports (plus, with the cache, loading the state file).
set -euo pipefail
cd "$(dirname "$0")/.."

model="${EMBER_MODELS:-$HOME/.cache/ember/models}/SmolLM2-135M-Instruct.Q4_1.gguf"
threads=auto
reps=5
doc=/usr/share/common-licenses/GPL-3
words=400
ember=build/bin/ember
while [ $# -gt 0 ]; do
  case "$1" in
    -m) model="$2"; shift 2 ;;
    -t) threads="$2"; shift 2 ;;
    -r) reps="$2"; shift 2 ;;
    --doc) doc="$2"; shift 2 ;;
    --words) words="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "kv_reuse.sh: error: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$ember" ] || { echo "kv_reuse.sh: error: build first ($ember is missing)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
document=$(tr -s ' \n' ' ' <"$doc" | cut -d' ' -f1-"$words")
turn1="<|im_start|>system
You are a helpful assistant.<|im_end|>
<|im_start|>user
Here is a document:

$document

Summarize it in two sentences.<|im_end|>
<|im_start|>assistant
"
# The reply as the model gives it (greedy), ending the turn as the template does.
reply=$("$ember" run -m "$model" -p "$turn1" -n 48 --temp 0 -t "$threads" \
  --prompt-cache "$work/turn1.kv" 2>"$work/turn1.log")
turn2="$turn1$reply<|im_end|>
<|im_start|>user
What does it say about patents?<|im_end|>
<|im_start|>assistant
"

measure() {  # label, extra flags...
  local label="$1"
  shift
  local sum=0 line
  for i in $(seq "$reps"); do
    cp "$work/turn1.kv" "$work/cache.kv"
    "$ember" run -m "$model" -p "$turn2" -n 1 --temp 0 -t "$threads" "$@" \
      >/dev/null 2>"$work/run.log"
    line=$(grep -E "ember: prompt [0-9]" "$work/run.log")
    # "prompt N tokens (M from the cache) in S s", plus the state file's load
    # time ("prompt cache: loaded N tokens from F in S s") when there is one.
    sum=$(python3 - "$work/run.log" "$sum" <<'PY'
import re, sys
log = open(sys.argv[1]).read()
t = float(re.search(r"from the cache\) in ([0-9.]+) s", log).group(1))
m = re.search(r"prompt cache: loaded .* in ([0-9.]+) s", log)
print(float(sys.argv[2]) + t + (float(m.group(1)) if m else 0.0))
PY
)
    if [ "$i" = 1 ]; then
      echo "$label: ${line#ember: }"
      grep "prompt cache: loaded" "$work/run.log" | sed "s/^ember: /$label: /" || true
    fi
  done
  python3 -c "print('$label: time to first token %.1f ms (mean of $reps)' % (1000 * $sum / $reps))"
}

echo "model: $model, threads: $threads"
measure "without reuse"
measure "with --prompt-cache" --prompt-cache "$work/cache.kv" --prompt-cache-ro
