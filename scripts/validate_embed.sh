#!/usr/bin/env bash
# ember embed against llama.cpp's embeddings (bench/peer/peer_tool embed: a
# context with embeddings on) on the same GGUF files: for each model in the
# cache, pooling and text, the cosine of the two vectors and the largest
# difference over the largest value; and, over the texts, whether the two
# engines give the texts the same similarities (what retrieval uses): the
# largest difference of a pair's cosine, and for how many texts the others
# come in the same order (a near-tie can swap two).
# Vectors compared unnormalized (ember --no-normalize).
#
#   scripts/validate_embed.sh [--out FILE]     (default: stdout)
#
# Environment: EMBER_BIN (default build/bin/ember), EMBER_MODELS, EMBER_PEER_DIR,
# EMBED_THREADS (default 2).
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
OUT=/dev/stdout
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out) OUT="$2"; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "validate_embed.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
EMBER_BIN="${EMBER_BIN:-build/bin/ember}"
MODELS_DIR="${EMBER_MODELS:-$HOME/.cache/ember/models}"
THREADS="${EMBED_THREADS:-2}"
eval "$(scripts/build-peer.sh)"
[[ -x "$EMBER_BIN" ]] || { echo "no $EMBER_BIN (build first)" >&2; exit 1; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

TEXTS=(
    "The cat sat on the mat."
    "A kitten was sitting on the rug."
    "Quantum chromodynamics describes the strong interaction between quarks and gluons."
    "def add(a, b):\n    return a + b"
    "The stock market fell sharply on Monday after the interest rate decision."
    "Der Hund schläft im Garten, weil die Sonne scheint."
)
{
    echo "| model | pooling | texts | cosine min / mean | max diff / max value | similarities: largest difference | same ranking of the others |"
    echo "|---|---|---:|---:|---:|---:|---|"
} > "$WORK/table.md"
for f in SmolLM2-135M-Instruct.Q4_1.gguf gemma-3-270m-q4_k_m.gguf qwen2.5-coder-0.5b-instruct-q4_k_m.gguf; do
    m="$MODELS_DIR/$f"
    [[ -f "$m" ]] || { echo "[embed] skipped (not in cache): $f" >&2; continue; }
    for pooling in mean last; do
        for i in "${!TEXTS[@]}"; do
            text="$(printf '%b' "${TEXTS[$i]}")"
            "$PEER_TOOL" embed -m "$m" -p "$text" --pooling "$pooling" -t "$THREADS" \
                -o "$WORK/peer_$i.bin" > /dev/null
            "$EMBER_BIN" embed -m "$m" -p "$text" --separator '' --pooling "$pooling" \
                --no-normalize -t "$THREADS" > "$WORK/ember_$i.txt"
        done
        python3 - "$WORK" "${#TEXTS[@]}" "$f" "$pooling" >> "$WORK/table.md" <<'PY'
import sys
import numpy as np
work, n, name, pooling = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
P = [np.fromfile(f"{work}/peer_{i}.bin", dtype="<f4").astype(np.float64) for i in range(n)]
E = [np.loadtxt(f"{work}/ember_{i}.txt", dtype=np.float64).ravel() for i in range(n)]
cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
c = [cos(p, e) for p, e in zip(P, E)]
d = max(float(np.abs(p - e).max() / np.abs(p).max()) for p, e in zip(P, E))
# For each text, the order of the others by similarity, in each engine.
same = sum(
    [j for j in np.argsort([-cos(P[i], P[j]) for j in range(n)]) if j != i]
    == [j for j in np.argsort([-cos(E[i], E[j]) for j in range(n)]) if j != i]
    for i in range(n))
sim = max(abs(cos(P[i], P[j]) - cos(E[i], E[j])) for i in range(n) for j in range(i + 1, n))
print(f"| {name} | {pooling} | {n} | {min(c):.5f} / {np.mean(c):.5f} | {d:.4f} | {sim:.4f} | {same} of {n} texts |")
PY
        echo "[embed] $f $pooling done" >&2
    done
done
cp "$WORK/table.md" "$OUT"
