#!/usr/bin/env bash
# Builds the Debian packages of a build folder with cpack, unpacks them into a
# clean root with `dpkg -x` (nothing is installed on this machine) and runs
# what they installed (scripts/test.sh --full runs it for each architecture):
#
#   scripts/package-smoke.sh BUILD_DIR ARCH MODEL      ARCH: amd64 | arm64 | armhf
#
#   - ember --version, ember info and a short ember run on MODEL (a tiny GGUF
#     with a byte-level BPE vocabulary, tests/support/make_tiny_model);
#   - examples/stream.c compiled against the root's ember.h and libember.so
#     with the root's pkg-config file, and run on MODEL;
#   - for ARM, the static CLI (bin/ember-static, EMBER_STATIC_CLI) run under
#     qemu-user without a sysroot (-L), and ldd/file saying it is static.
#
# ARM roots hold the packages and, from Debian, exactly the closure of their
# Depends (scripts/cross-sysroot.sh --root); the programs run under
# qemu-user with that root as their only file system for libraries (-L), so a
# missing or wrong Depends fails here. The amd64 root holds the packages only:
# their Depends are this machine's installed libraries (dpkg-shlibdeps
# computed them from the same).
set -euo pipefail
if [ $# -ne 3 ]; then
  sed -n '2,6p' "$0" >&2
  exit 2
fi
build="$(realpath "$1")" arch="$2" model="$(realpath "$3")"
cd "$(dirname "$0")/.."
src="$PWD"

case "$arch" in
  amd64) triplet=x86_64-linux-gnu cc=gcc qemu=() ;;
  arm64) triplet=aarch64-linux-gnu cc=aarch64-linux-gnu-gcc qemu=(qemu-aarch64-static) ;;
  armhf) triplet=arm-linux-gnueabihf cc=arm-linux-gnueabihf-gcc qemu=(qemu-arm-static) ;;
  *) echo "package-smoke: unknown architecture '$arch'" >&2; exit 2 ;;
esac

step() { echo "--- package $arch: $*"; }
fail() { echo "package-smoke $arch: FAILED: $*" >&2; exit 1; }

step "cpack ($build)"
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB >"$build/cpack.log" 2>&1) || { cat "$build/cpack.log"; fail "cpack"; }
mapfile -t debs < <(ls "$build"/packages/*.deb)
[ ${#debs[@]} -eq 3 ] || fail "expected 3 packages, got: ${debs[*]}"
for deb in "${debs[@]}"; do
  printf '%s  %s bytes\n' "$(basename "$deb")" "$(stat -c %s "$deb")"
  dpkg-deb -f "$deb" Package Version Architecture Section Depends | sed 's/^/    /'
  [ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ] || fail "$(basename "$deb") is not $arch"
done

root="$build/package-root"
tmp="$build/package-smoke"
rm -rf "$root" "$tmp"
mkdir -p "$tmp"
if [ "$arch" = amd64 ]; then
  step "dpkg -x into $root"
  mkdir -p "$root"
  for deb in "${debs[@]}"; do dpkg -x "$deb" "$root"; done
  run=(env "LD_LIBRARY_PATH=$root/usr/lib/$triplet")
else
  step "dpkg -x into $root, with the closure of the Depends from Debian"
  bash scripts/cross-sysroot.sh --root "$arch" "$root" "${debs[@]}"
  # -L: the root is where the loader and every library come from (paths not
  # in it fall back to the host's, which has no $arch libraries).
  run=(timeout 600 "${qemu[@]}" -L "$root"
    -E "LD_LIBRARY_PATH=$root/lib/$triplet:$root/usr/lib/$triplet")
fi
for f in usr/bin/ember "usr/lib/$triplet/libember.so.1" "usr/lib/$triplet/libember.so" \
  usr/include/ember.h "usr/lib/$triplet/pkgconfig/ember.pc" \
  "usr/lib/$triplet/cmake/ember/emberConfig.cmake" usr/share/man/man1/ember.1.gz \
  usr/share/doc/ember/copyright; do
  [ -e "$root/$f" ] || fail "the packages do not install /$f"
done

export EMBER_CACHE_DIR="$tmp/cache"  # ember's bandwidth measurement, not the user's
step "ember --version / info / run"
"${run[@]}" "$root/usr/bin/ember" --version | tee "$tmp/version.txt"
grep -q "^ember $(dpkg-deb -f "${debs[0]}" Version | sed 's/-[^-]*$//') " "$tmp/version.txt" ||
  fail "ember --version does not say the package version"
"${run[@]}" "$root/usr/bin/ember" info -m "$model" >"$tmp/info.txt"
grep -E "^(architecture|parameters):" "$tmp/info.txt"
grep -q "ember runs it" "$tmp/info.txt" || fail "ember info: $(cat "$tmp/info.txt")"
"${run[@]}" "$root/usr/bin/ember" run -m "$model" -p "Once upon a time" -n 8 -t 1 --temp 0 \
  >"$tmp/run.txt" 2>&1 || { cat "$tmp/run.txt"; fail "ember run"; }
cat "$tmp/run.txt"
grep -q "generated 8 tokens" "$tmp/run.txt" || fail "ember run did not generate 8 tokens"
zcat "$root/usr/share/man/man1/ember.1.gz" >"$tmp/ember.1"
grep -q '^\.SS "ember serve"' "$tmp/ember.1" ||
  fail "the man page has no section for ember serve"

step "a C program against the installed ember.h, ember.pc and libember.so"
pc="$(PKG_CONFIG_LIBDIR="$root/usr/lib/$triplet/pkgconfig" PKG_CONFIG_PATH= \
  pkg-config --cflags --libs ember)"
echo "pkg-config --cflags --libs ember: $pc"
# shellcheck disable=SC2086  # $pc is a list of flags
"$cc" -std=c99 -Wall -Wextra -pedantic -Werror "$src/examples/stream.c" $pc \
  -Wl,-rpath-link,"$root/lib/$triplet:$root/usr/lib/$triplet" -o "$tmp/stream"
"${run[@]}" "$tmp/stream" "$model" "Once upon a time" 8 >"$tmp/stream.txt" 2>&1 ||
  { cat "$tmp/stream.txt"; fail "examples/stream.c against the packages"; }
head -c 300 "$tmp/stream.txt"
echo
grep -q "^Once upon a time" "$tmp/stream.txt" || fail "stream did not stream the completion"

static="$build/bin/ember-static"
if [ -x "$static" ]; then
  # (Outputs go to variables first: grep -q ending a pipe early is a failure under pipefail.)
  kind="$(file -b "$static")"
  step "the static CLI: $(cut -d, -f1,2,4 <<<"$kind")"
  [[ "$kind" == *"statically linked"* ]] || fail "$static is not statically linked: $kind"
  deps="$(ldd "$static" 2>&1 || true)"
  echo "ldd: $deps"
  [[ "$deps" == *"not a dynamic executable"* ]] || fail "ldd lists libraries of $static"
  if [ ${#qemu[@]} -gt 0 ]; then
    srun=(timeout 600 "${qemu[@]}")  # no -L, no sysroot: nothing to load
  else
    srun=()
  fi
  "${srun[@]}" "$static" --version
  "${srun[@]}" "$static" run -m "$model" -p "Once upon a time" -n 8 -t 1 --temp 0 \
    >"$tmp/static.txt" 2>&1 || { cat "$tmp/static.txt"; fail "ember-static run"; }
  cat "$tmp/static.txt"
  grep -q "generated 8 tokens" "$tmp/static.txt" || fail "ember-static run did not generate 8 tokens"
  # SentencePiece vocabularies too (ember's own merge code, no libsentencepiece):
  # llama.cpp's ids for "Hello world" in its llama-spm test vocabulary.
  spm="$PWD/../shared/vocab/ggml-vocab-llama-spm.gguf"  # (the cwd is the repository)
  if [ -f "$spm" ]; then
    ids="$("${srun[@]}" "$static" tokenize -m "$spm" -p "Hello world" 2>&1)" ||
      { echo "$ids"; fail "ember-static tokenize"; }
    step "the static CLI tokenizes with a SentencePiece vocabulary: $ids"
    [ "$ids" = "1 15043 3186" ] || fail "ember-static tokenize gave '$ids', want '1 15043 3186'"
  else
    echo "package-smoke: $spm not found: the static CLI's SentencePiece check skipped"
  fi
fi
echo "package-smoke $arch: OK (${#debs[@]} packages)"
