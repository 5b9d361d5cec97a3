#!/usr/bin/env bash
# Soak ember: a long run through the C API on a real model, then a mixed
# `ember serve` load; both sample the process's memory (VmRSS) and open file
# descriptors. docs/RELIABILITY.md records the results.
#
#   scripts/soak.sh [--model M] [--tokens N] [--ctx N] [--threads N]
#                   [--serve-minutes N] [--build DIR] [--out DIR]
#
#   --model M          a GGUF (default: SmolLM2-135M-Instruct Q4_1 in the
#                      model cache, ~/.cache/ember/models or $EMBER_MODELS)
#   --tokens N         generated tokens of the C API run (default 100000)
#   --ctx N            its context (default 256: the context shifts often)
#   --threads N        its threads (default 1; 0: auto)
#   --serve-minutes N  minutes of scripts/soak_serve.py against `ember serve`
#                      (default 10; 0 skips it)
#   --build DIR        the build with bin/ember_soak and bin/ember (default
#                      build; built here if they are missing)
#   --out DIR          where the CSVs go (default BUILD/soak)
#
# The C API run (bench/soak.cpp) goes round: generation appending to a small
# context (context shifts), state saved to a file and loaded into a new
# session, a prompt sharing the context's prefix (reuse), chat turns, prompt-
# lookup speculative decoding and JSON-schema output, each with the next of
# seven sampler chains. It samples RSS and descriptors every 2000 tokens into
# OUT/soak.csv and ends with the RSS after the warm-up (the first tenth of the
# tokens), at the end and the maximum, and the descriptors. Exit status 1 when
# the RSS grew by more than 1 MiB after the warm-up, the descriptors changed,
# a call failed, or the server soak found an unexpected answer.
set -euo pipefail
cd "$(dirname "$0")/.."

models="${EMBER_MODELS:-$HOME/.cache/ember/models}"
model="$models/SmolLM2-135M-Instruct.Q4_1.gguf"
tokens=100000
ctx=256
threads=1
serve_minutes=10
build=build
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --tokens) tokens="$2"; shift 2 ;;
    --ctx) ctx="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --serve-minutes) serve_minutes="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "soak.sh: error: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -f "$model" ] || { echo "soak.sh: error: no model at $model (scripts/fetch-models.sh)" >&2; exit 2; }
if [ ! -x "$build/bin/ember_soak" ] || [ ! -x "$build/bin/ember" ]; then
  [ -f "$build/CMakeCache.txt" ] ||
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j "${EMBER_JOBS:-2}" --target ember_soak ember_cli
fi
out="${out:-$build/soak}"
mkdir -p "$out"

status=0
echo "=== C API soak: $tokens tokens on $(basename "$model"), n_ctx $ctx"
"$build/bin/ember_soak" -m "$model" --tokens "$tokens" --ctx "$ctx" --threads "$threads" \
  --csv "$out/soak.csv" --state-file "$out/soak.state" || status=1

if [ "$serve_minutes" != 0 ]; then
  echo "=== ember serve soak: $serve_minutes minutes"
  python3 scripts/soak_serve.py --ember "$build/bin/ember" -m "$model" \
    --minutes "$serve_minutes" --csv "$out/soak_serve.csv" || status=1
fi
exit "$status"
