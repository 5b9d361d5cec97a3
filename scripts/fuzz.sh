#!/usr/bin/env bash
# Runs ember's libFuzzer targets (tests/fuzz) one after another (or --jobs N
# at a time), each for N minutes on one core, keeping a growing corpus per
# target outside the repo.
#
#   scripts/fuzz.sh [--minutes N] [--seconds N] [--jobs N] [target ...]
#
#   targets   default: all (jinja_fuzz gbnf_fuzz gguf_fuzz tokenizer_fuzz
#             json_schema_fuzz sampler_fuzz state_fuzz http_fuzz)
#   --minutes N   time per target [10]; --seconds N for short runs (the smoke
#                 of scripts/test.sh --full)
#   --jobs N      targets run at a time, one core each [1]
#
# Builds the targets in build-fuzz first (clang-14: scripts/setup.sh installs it).
# The corpus of a target is ${EMBER_FUZZ_DIR:-$HOME/.cache/ember/fuzz}/<target>;
# its seeds (read-only) are tests/fuzz/corpus/<target> or ../shared's templates
# and grammars, its dictionary tests/fuzz/dict/<target>.dict when there is one.
# Prints per target the executions, the coverage (cov and ft of libFuzzer's
# last status line) and the findings. Exits 1 on a finding: the crashing (or
# leaking, or slow) input is left in <corpus>/../artifacts/<target>/ and its
# path printed; rerun it with build-fuzz/<target> PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(jinja_fuzz gbnf_fuzz gguf_fuzz tokenizer_fuzz json_schema_fuzz sampler_fuzz state_fuzz http_fuzz)
seconds=600
jobs=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) seconds=$(($2 * 60)); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: error: unknown option '$1'" >&2; exit 2 ;;
    *)
      if [[ ! " ${all[*]} " == *" $1 "* ]]; then
        echo "fuzz.sh: error: unknown target '$1' (targets: ${all[*]})" >&2
        exit 2
      fi
      targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: error: --jobs expects a positive count, got '$jobs'" >&2
  exit 2
fi

seeds_of() {
  case "$1" in
    jinja_fuzz) echo ../shared/templates ;;
    gbnf_fuzz) echo ../shared/grammars ;;
    # Tiny models and state files are made here (make_fuzz_seeds), not kept in the repo.
    gguf_fuzz | state_fuzz) echo "build-fuzz/seeds/$1" ;;
    *) echo "tests/fuzz/corpus/$1" ;;
  esac
}

# The targets are built (incrementally) first, so a run never uses stale binaries.
if [ ! -f build-fuzz/build.ninja ]; then
  CXX=clang++-14 cmake -S tests/fuzz -B build-fuzz -G Ninja >build-fuzz.configure.log 2>&1 ||
    { cat build-fuzz.configure.log; exit 1; }
fi
cmake --build build-fuzz -j "${EMBER_JOBS:-2}" --target "${targets[@]}" make_fuzz_seeds \
  >build-fuzz/fuzz-build.log 2>&1 || { cat build-fuzz/fuzz-build.log; exit 1; }
build-fuzz/make_fuzz_seeds build-fuzz/seeds >build-fuzz/seeds.log 2>&1 ||
  { cat build-fuzz/seeds.log; exit 1; }

root="${EMBER_FUZZ_DIR:-$HOME/.cache/ember/fuzz}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# One target's run; its summary line(s) go to $root/$t.summary, its status is
# the function's.
run_target() {
  local t="$1"
  local corpus="$root/$t" artifacts="$root/artifacts/$t" log="$root/$t.log" summary="$root/$t.summary"
  mkdir -p "$corpus" "$artifacts"
  local args=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$artifacts/")
  [ -f "tests/fuzz/dict/$t.dict" ] && args+=(-dict="tests/fuzz/dict/$t.dict")
  local rc=0
  "build-fuzz/$t" "${args[@]}" "$corpus" $(seeds_of "$t") >"$log" 2>&1 || rc=$?
  local execs rate cov units finding
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)
  units=$(find "$corpus" -type f | wc -l)
  finding=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
  if [ "$rc" != 0 ] || [ -n "$finding" ]; then
    {
      grep -E "^==[0-9]+==ERROR|runtime error|^SUMMARY|_fuzz: |Deadly signal|timeout" "$log" | head -n 8 || true
      echo "$t: ${execs:-?} executions (${rate:-?}/s), ${cov:-no coverage line}, corpus $units files," \
        "FINDING: ${finding:-exit status $rc} (log: $log)"
    } >"$summary"
    return 1
  fi
  echo "$t: ${execs:-?} executions (${rate:-?}/s), ${cov:-no coverage line}, corpus $units files," \
    "findings: none" >"$summary"
}

# --jobs N targets at a time (each on one core), summaries in the targets' order.
mkdir -p "$root"
status=0
pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  echo "=== $t: $seconds s, corpus $root/$t"
  run_target "$t" &
  pids+=($!)
done
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || status=1
  cat "$root/${targets[$i]}.summary"
done
exit $status
