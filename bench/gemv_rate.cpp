// Decode GEMV rate of the active kernels, one thread: weight bytes per second
// for a matrix that stays in the caches and for one far larger than them. If
// the in-cache rate is well above the machine's memory read bandwidth, decode
// is bound by memory and not by the kernel (docs/PERFORMANCE.md "Bounds").
// With m > 1 tokens (a small batch: draft verification, parallel sequences)
// the same two matrices, times m tokens per weight pass, and the multiply-adds
// per second from memory.
//
//   ember_gemv_rate [k=2048] [seconds per matrix=1] [m=1] [types=all, e.g. Q4_0,Q8_0]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ops/kernels.h"
#include "platform/streamed_memory.h"
#include "quant/blocks.h"
#include "quant/packed.h"
#include "quant/quantize.h"

using namespace ember;

namespace {

// A packed matrix in the memory a model's weights get (huge pages where the
// system gives them, platform/streamed_memory.h).
struct Matrix {
  StreamedBuffer storage;
  PackedMatrix p;
};

// A random Q4_0, Q8_0, Q6_K, IQ4_NL or K-quant matrix [rows, k], repacked to its native
// layout.
Matrix MakeMatrix(GgmlType type, int64_t rows, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> row(static_cast<size_t>(k));
  const size_t row_bytes = GgmlRowBytes(type, static_cast<uint64_t>(k));
  std::vector<uint8_t> gguf(row_bytes * static_cast<size_t>(rows));
  // 2048 distinct rows at most, repeated: the large matrix's rows then cost
  // seconds, not minutes (K-quants fit their scales per row), and repeats far
  // apart are read from memory all the same.
  const int64_t distinct = std::min<int64_t>(rows, 2048);
  for (int64_t r = 0; r < distinct; ++r) {
    for (float& x : row) x = d(rng);
    QuantizeRow(type, row.data(), gguf.data() + static_cast<size_t>(r) * row_bytes, k);
  }
  for (int64_t r = distinct; r < rows; ++r) {
    std::copy_n(gguf.data() + static_cast<size_t>(r % distinct) * row_bytes, row_bytes,
                gguf.data() + static_cast<size_t>(r) * row_bytes);
  }
  Matrix m;
  m.storage = AllocStreamed(RepackedBytes(type, rows, k));
  const Status st = Repack(type, gguf.data(), rows, k, &m.p, {}, m.storage.get());
  if (!st.ok()) {
    std::fprintf(stderr, "gemv_rate: %s\n", st.message().c_str());
    std::exit(1);
  }
  return m;
}

// Calls per second of Y = X W^T for the a.m tokens of `a`: the best of 20
// runs of about seconds / 20 each (the best is the kernel's rate; other
// tenants only slow a run down).
double CallRate(const PackedMatrix& w, const QuantizedActs& a, double seconds) {
  const Kernels& k = Active();
  const QGemmFn fn = k.qgemm_for(w.layout);
  std::vector<float> y(static_cast<size_t>(w.n_rows * a.m));
  fn(w, 0, w.n_tiles, a, y.data(), w.n_rows);  // warm-up
  using Clock = std::chrono::steady_clock;
  double best = 0.0;
  for (int run = 0; run < 20; ++run) {
    const auto t0 = Clock::now();
    int64_t calls = 0;
    double elapsed = 0.0;
    do {
      fn(w, 0, w.n_tiles, a, y.data(), w.n_rows);
      ++calls;
      elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (elapsed < seconds / 20);
    best = std::max(best, static_cast<double>(calls) / elapsed);
  }
  return best;
}

// Weight GB/s of y = W x (one token).
double Rate(const PackedMatrix& w, const QuantizedActs& a, double seconds) {
  return CallRate(w, a, seconds) * static_cast<double>(w.bytes()) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t k = argc > 1 ? std::atoll(argv[1]) : 2048;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
  const int64_t m = argc > 3 ? std::atoll(argv[3]) : 1;
  const std::string only = argc > 4 ? "," + std::string(argv[4]) + "," : "";
  if (k <= 0 || k % 32 != 0 || m <= 0) {
    std::fprintf(stderr, "gemv_rate: k must be a positive multiple of 32, m positive\n");
    return 2;
  }
  std::printf("kernels: %s, k = %lld, m = %lld, one thread\n", IsaName(Active().isa),
              static_cast<long long>(k), static_cast<long long>(m));
  std::mt19937 rng(1);
  std::vector<float> x(static_cast<size_t>(m * k));
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (float& v : x) v = d(rng);
  QuantizedActs a;
  QuantizeActs(Active().quantize_act_rows, x.data(), m, k, &a);
  for (GgmlType type :
       {GgmlType::kQ4_0, GgmlType::kQ5_0, GgmlType::kQ8_0, GgmlType::kQ6_K, GgmlType::kIQ4_NL,
        GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ3_K, GgmlType::kQ2_K}) {
    if (k % FindGgmlType(static_cast<uint32_t>(type))->block_elems != 0) continue;  // K: 256
    if (!only.empty() &&
        only.find("," + std::string(GgmlTypeName(type)) + ",") == std::string::npos) {
      continue;
    }
    // ~128 KiB (L2-resident) and ~256 MiB (far past any L3) of weights.
    const size_t per_row = GgmlRowBytes(type, static_cast<uint64_t>(k));
    const int64_t small_rows = std::max<int64_t>(16, (128 << 10) / per_row / 16 * 16);
    const int64_t large_rows = std::max<int64_t>(16, (int64_t{256} << 20) / per_row / 16 * 16);
    const Matrix small_m = MakeMatrix(type, small_rows, k, rng);
    const Matrix large_m = MakeMatrix(type, large_rows, k, rng);
    const PackedMatrix &small = small_m.p, &large = large_m.p;
    const double small_rate = Rate(small, a, seconds), large_rate = Rate(large, a, seconds);
    std::printf("%-6s in cache (%6.2f MiB): %6.1f GB/s   from memory (%6.1f MiB): %6.1f GB/s",
                GgmlTypeName(type), small.bytes() / 1048576.0, small_rate,
                large.bytes() / 1048576.0, large_rate);
    if (m > 1) {  // and the multiply-adds of all m tokens, from memory
      const double macs_per_byte =
          static_cast<double>(large_rows * k * m) / static_cast<double>(large.bytes());
      std::printf("   %6.1f GMAC/s", large_rate * macs_per_byte);
    }
    std::printf("\n");
  }
  return 0;
}
