#!/usr/bin/env bash
# From a fresh Debian machine to generated text: installs the system packages,
# fetches the default model, builds ember (Release) and runs it.
#   scripts/quickstart.sh ["prompt"]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/fetch-models.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target ember_cli
prompt="${1:-The three primary colors are}"
echo "--- ember run -p \"$prompt\" -n 64 --temp 0" >&2
./build/bin/ember run -p "$prompt" -n 64 --temp 0
