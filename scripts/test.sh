#!/usr/bin/env bash
# ember's test command (the one README.md names and .ci/run calls).
#
#   scripts/test.sh          native Release build (warnings are errors) + all tests
#   scripts/test.sh --full   also: an ASan/UBSan build running the tests, the
#                            aarch64 / armhf cross builds (library, CLI, static
#                            CLI) running the kernel tests under qemu, the .deb
#                            packages of amd64 / arm64 / armhf built and run from
#                            a dpkg -x root (scripts/package-smoke.sh), and a
#                            fuzz smoke: each libFuzzer target
#                            (tests/fuzz, clang) for EMBER_FUZZ_SECONDS [8] on
#                            its seed corpus, and a ThreadSanitizer build running
#                            the concurrency tests (CI runs this)
#
# Tests that need the real models (scripts/fetch-models.sh) run when the models
# are in the cache and are reported as skipped (with the reason) otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

full=0
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "test.sh: error: unknown option '$a'" >&2; exit 2 ;;
  esac
done

jobs="${EMBER_JOBS:-$(nproc)}"
status=0

# A compiler cache for every build below (ccache, scripts/setup.sh; off with
# EMBER_CCACHE=0). The six builds of --full compile ~3400 CPU-seconds of
# sources, most of the run on 2 cores, and CI builds a fresh clone whose
# sources mostly did not change since the last run. Paths are hashed relative
# to the tree (CCACHE_BASEDIR; the tests' absolute paths are compiled into
# tests/support/test_paths.cpp alone), so a clone elsewhere hits too; the
# sloppiness is what ccache asks for precompiled headers (the tests' Catch2
# PCH), and no source uses __DATE__ or __TIME__. Depend mode (the compiler's
# own -MD list, no extra preprocessor run): a cold native build took 448 s
# against 402 s without ccache, 490 s in ccache's default mode; warm, 40 s.
launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_C_COMPILER_LAUNCHER=)
if [ "${EMBER_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_DEPEND=true
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  ccache --zero-stats >/dev/null
fi
ccache_stats() {  # what the cache served, after the builds
  if [ "${launcher[0]}" = -DCMAKE_CXX_COMPILER_LAUNCHER=ccache ]; then
    echo "=== ccache: $(ccache --print-stats | awk -F'\t' '
      $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hit += $2 }
      $1 == "cache_miss" { miss = $2 } $1 == "could_not_use_precompiled_header" { pch = $2 }
      END { printf "%d hits, %d misses, %d not cacheable (precompiled header)", hit, miss, pch }')"
  fi
}

# Runs that go at once (one per core), their output after: start each with
# `at_once LABEL LOG command...`, then `at_once_wait` prints "--- LABEL:" and
# the log of each, in the order they began; a failed run fails the whole.
at_once_pids=() at_once_labels=() at_once_logs=()
at_once() {  # label log command...
  at_once_labels+=("$1") at_once_logs+=("$2")
  shift 2
  "$@" >"${at_once_logs[-1]}" 2>&1 &
  at_once_pids+=($!)
}
at_once_wait() {
  local i
  for i in "${!at_once_pids[@]}"; do
    echo "--- ${at_once_labels[$i]}:"
    wait "${at_once_pids[$i]}" || status=1
    cat "${at_once_logs[$i]}"
  done
  at_once_pids=() at_once_labels=() at_once_logs=()
}

run_suite() {  # name build-dir [cmake args...]
  local name="$1" dir="$2"
  shift 2
  echo "=== $name: configure + build ($dir)"
  cmake -S . -B "$dir" -G Ninja -DEMBER_WERROR=ON "${launcher[@]}" "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j "$jobs"
  echo "=== $name: tests"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 900)
}

mkdir -p build
# Prefix /usr: the library's folder is then /usr/lib/<triplet>, as the Debian
# packages (cpack, --full) want it; the build itself is the same.
native_ok=1
run_suite native build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr ||
  { status=1; native_ok=0; }

# The packages' smoke tests run a tiny model with a byte-level BPE vocabulary
# made by the native build (and the static CLI tokenizes with
# ../shared/vocab's llama-spm vocabulary).
package_model=build/package-smoke-qwen2.gguf
package_smoke() {  # build-dir debian-arch
  local t0=$SECONDS
  echo "=== packages $2: cpack, dpkg -x, run ($1)"
  if [ "$native_ok" = 1 ] && [ -s "$package_model" ]; then
    bash scripts/package-smoke.sh "$1" "$2" "$package_model" || status=1
  else
    echo "=== packages $2: FAILED (the native build, which makes the test model, failed)"
    status=1
  fi
  echo "=== packages $2: $((SECONDS - t0)) s"
}

# The builds below are compiled once and run: their runtime and CLI sources in
# batches (EMBER_UNITY, CMakeLists.txt), about a quarter less compile time.
sanitizer_build=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBER_UNITY=ON
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
if [ "$full" = 1 ]; then
  if [ "$native_ok" = 1 ]; then
    build/bin/make_tiny_model "$package_model" qwen2 || status=1
  fi
  package_smoke build amd64
  # The sanitizer builds compile at -O1 with line tables only (-g1: what a
  # sanitizer's stack trace needs): about half the compile time of -O2 -g on
  # the heaviest files (nlohmann/httplib templates), for tests that run a
  # little slower. The bench tools (bench/) are not tests: not built here.
  # The tests of the downloaded models (golden logits and texts against
  # llama.cpp) are skipped here (EMBER_MODELS: an empty folder): under the
  # sanitizers they took minutes for code paths that the tests' own GGUF
  # models (every architecture and quant type) take too.
  mkdir -p build-asan/no-models
  EMBER_MODELS="$PWD/build-asan/no-models" \
    run_suite sanitizers build-asan "${sanitizer_build[@]}" -DEMBER_BUILD_BENCH=OFF \
    -DEMBER_SANITIZE=address,undefined || status=1
  for arch in aarch64-linux-gnu arm-linux-gnueabihf; do
    if command -v "${arch}-g++" >/dev/null && command -v qemu-aarch64-static >/dev/null; then
      # The whole library and CLI, for the packages, with Debian's libraries
      # for the target (scripts/cross-sysroot.sh); of the tests only the
      # kernel tests, which run under qemu. Also the static CLI.
      debarch=arm64
      [ "$arch" = arm-linux-gnueabihf ] && debarch=armhf
      t0=$SECONDS
      echo "=== cross $arch: Debian's $debarch libraries (build-deps/$debarch)"
      if bash scripts/cross-sysroot.sh "$debarch" "build-deps/$debarch"; then
        cross=(-DEMBER_KERNELS_ONLY=OFF -DEMBER_UNITY=ON -DEMBER_DEPS_SYSROOT="$PWD/build-deps/$debarch"
          -DEMBER_RUNTIME_TESTS=OFF -DEMBER_BUILD_BENCH=OFF -DEMBER_STATIC_CLI=ON
          -DCMAKE_INSTALL_PREFIX=/usr)
      else
        echo "=== cross $arch: FAILED to get Debian's $debarch libraries: kernels only, no packages"
        cross=(-DEMBER_KERNELS_ONLY=ON)
        status=1
      fi
      run_suite "cross $arch (qemu)" "build-$arch" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_TOOLCHAIN_FILE="cmake/toolchains/$arch.cmake" "${cross[@]}" || status=1
      echo "=== cross $arch: $((SECONDS - t0)) s"
      if [ "$arch" = aarch64-linux-gnu ]; then
        # ctest ran under -cpu max (i8mm + dotprod). Each ARM kernel path runs
        # somewhere: Cortex-A53 has neither (plain NEON), Cortex-A76 has dotprod.
        # The two runs at once (qemu runs one thread each), their output after.
        echo "=== cross $arch: kernel tests under qemu -cpu cortex-a53 and cortex-a76"
        for cpu in cortex-a53 cortex-a76; do
          at_once "qemu -cpu $cpu" "build-$arch/qemu-$cpu.log" timeout 900 qemu-aarch64-static \
            -cpu "$cpu" -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib \
            "build-$arch/bin/ember_kernel_tests"
        done
        at_once_wait
      fi
      if [ "${cross[0]}" != -DEMBER_KERNELS_ONLY=ON ]; then
        package_smoke "build-$arch" "$debarch"
      fi
    else
      echo "=== cross $arch: skipped (${arch}-g++ or qemu-user-static missing; run scripts/setup.sh)"
    fi
  done
fi
if [ "$full" = 1 ]; then
  # ThreadSanitizer on the tests where ember's own threads meet (continuous
  # batching, sessions on several threads, cancellation, the server): only
  # their binary and the CLI are built (ember_concurrency_tests,
  # tests/CMakeLists.txt; ember_cli for `ember serve`). libgomp is not
  # instrumented, so OpenMP teams are held to one thread (OMP_THREAD_LIMIT=1):
  # what is checked is ember's std::thread code. The server's tests run from
  # the native build against the TSan-built server (EMBER_SERVE_BIN): its
  # slots, batcher, queue, cancellation and shutdown; a race there stops the
  # server (halt_on_error) and fails the test. tests/tsan.supp: cpp-httplib
  # itself is not instrumented.
  echo "=== thread sanitizer: configure + build (build-tsan)"
  tsan_options="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp"
  if cmake -S . -B build-tsan -G Ninja -DEMBER_WERROR=ON "${launcher[@]}" "${sanitizer_build[@]}" \
    -DEMBER_SANITIZE=thread >build-tsan.configure.log 2>&1 &&
    cmake --build build-tsan -j "$jobs" --target ember_concurrency_tests ember_cli; then
    echo "=== thread sanitizer: tests"
    # Two processes at once, one per core (each case holds OpenMP to one
    # thread): the real model's cases ([real], ~125 of ~220 s) and the rest.
    at_once "[real]" build-tsan/tests-real.log env OMP_THREAD_LIMIT=1 TSAN_OPTIONS="$tsan_options" \
      timeout 900 build-tsan/bin/ember_concurrency_tests '[real]'
    at_once "~[real]" build-tsan/tests-rest.log env OMP_THREAD_LIMIT=1 TSAN_OPTIONS="$tsan_options" \
      timeout 900 build-tsan/bin/ember_concurrency_tests '~[real]'
    at_once_wait
    echo "=== thread sanitizer: ember serve (the server's concurrency tests)"
    OMP_THREAD_LIMIT=1 TSAN_OPTIONS="$tsan_options" EMBER_SERVE_BIN="$PWD/build-tsan/bin/ember" \
      timeout 900 build/bin/ember_serve_tests \
      "serve: concurrent clients get what each gets alone*,serve: a client that hangs up*,serve: a non-streamed client that hangs up*,serve: SIGTERM*,serve: --draft-model*,serve: a resent conversation*" ||
      status=1
  else
    cat build-tsan.configure.log
    status=1
  fi
  if command -v clang++-14 >/dev/null; then
    echo "=== fuzz smoke: configure + build (build-fuzz)"
    if CXX=clang++-14 cmake -S tests/fuzz -B build-fuzz -G Ninja "${launcher[@]}" \
      >build-fuzz.configure.log 2>&1 &&
      cmake --build build-fuzz -j "$jobs"; then
      # Each target for a few seconds on its seeds (scripts/fuzz.sh), new
      # inputs in a scratch folder, one target per core: 8 targets x 8 s (and
      # their start-up) stay within ~45 s on 2 cores.
      seconds="${EMBER_FUZZ_SECONDS:-8}"
      scratch="$(mktemp -d)"
      if EMBER_FUZZ_DIR="$scratch" scripts/fuzz.sh --seconds "$seconds" --jobs "$jobs"; then
        rm -rf "$scratch"
      else
        for log in "$scratch"/*.log; do
          if grep -q "Test unit written to" "$log"; then tail -n 60 "$log"; fi
        done
        echo "=== fuzz smoke: FAILED (the crashing input is in the log above; kept in $scratch)"
        status=1
      fi
    else
      cat build-fuzz.configure.log
      status=1
    fi
  else
    echo "=== fuzz smoke: skipped (clang++-14 missing; run scripts/setup.sh)"
  fi
fi
ccache_stats
exit $status
