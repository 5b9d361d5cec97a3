#!/usr/bin/env bash
# From a fresh Debian machine to generated text: installs the system packages,
# fetches the default model, builds ember (Release) and runs it: once with
# llama.cpp's arithmetic (its exact text), once with ember's own kernels.
#   scripts/quickstart.sh ["prompt"]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/fetch-models.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target ember_cli
prompt="${1:-The three primary colors are}"
# --numerics ggml: llama.cpp's arithmetic, so this is the text llama.cpp
# generates from the same file (docs/VALIDATION.md).
echo "--- ember run -p \"$prompt\" -n 64 --temp 0 --numerics ggml   (llama.cpp's exact text)" >&2
./build/bin/ember run -p "$prompt" -n 64 --temp 0 --numerics ggml
echo >&2
# ember's own kernels: several times faster; the same model, other roundings.
echo "--- ember run -p \"$prompt\" -n 64 --temp 0   (ember's own kernels)" >&2
./build/bin/ember run -p "$prompt" -n 64 --temp 0
