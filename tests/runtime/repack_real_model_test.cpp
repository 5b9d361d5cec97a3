// Repacking a real model's K-quant tensors: every Q4_K and Q6_K matrix of
// Gemma 3 270M (Q4_K_M; the tensors are read with the GGUF reader) against
// its GGUF dequantized values (both exact: Q4Kx16 and Q6Kx16). The figures
// in docs/FORMATS.md come from this file's model; this test keeps them true.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "quant/packed.h"
#include "quant/quantize.h"
#include "runtime/gguf/gguf.h"
#include "support/test_paths.h"

using namespace ember;

TEST_CASE("repack: Gemma 3 270M Q4_K and Q6_K tensors repack exactly", "[quant][real-model]") {
  const std::string path = test::ModelPath("gemma-3-270m-q4_k_m.gguf");
  if (path.empty()) EMBER_SKIP("gemma-3-270m-q4_k_m.gguf not in the model cache");
  std::unique_ptr<GgufFile> f;
  REQUIRE(GgufFile::Open(path, &f).ok());
  int n_q4k = 0, n_q6k = 0;
  for (const GgufTensorInfo& t : f->tensors()) {
    if (t.n_dims != 2 || (t.type != GgmlType::kQ4_K && t.type != GgmlType::kQ6_K)) continue;
    (t.type == GgmlType::kQ4_K ? n_q4k : n_q6k)++;
    const int64_t cols = static_cast<int64_t>(t.ne[0]), rows = static_cast<int64_t>(t.ne[1]);
    PackedMatrix w;
    REQUIRE(Repack(t.type, t.data, rows, cols, &w).ok());
    const size_t rb = GgmlRowBytes(t.type, t.ne[0]);
    std::vector<float> row(static_cast<size_t>(cols));
    double max_w = 0, max_err = 0;
    for (int64_t r = 0; r < rows; ++r) {
      DequantizeRow(t.type, t.data + static_cast<size_t>(r) * rb, row.data(), cols);
      for (int64_t c = 0; c < cols; ++c) {
        max_w = std::max(max_w, double(std::fabs(row[c])));
        max_err = std::max(max_err, std::fabs(double(PackedWeight(w, r, c)) - row[c]));
      }
    }
    INFO(t.name << " " << GgmlTypeName(t.type) << " max|err| " << max_err << " max|w| " << max_w);
    // Both layouts keep the quants, scales (and mins) and d (and dmin) as
    // stored. (Q4_K through Q4x16's fp16 scale and min per 32 was off by up to
    // 8.1e-4 of the tensor's max |w|.)
    CHECK(w.layout == (t.type == GgmlType::kQ4_K ? PackedLayout::kQ4Kx16 : PackedLayout::kQ6Kx16));
    CHECK(max_err == 0.0);
    CHECK(max_w > 0.0);
  }
  CHECK(n_q4k == 27);
  CHECK(n_q6k == 9);
}
