// Float GEMM paths side by side (docs/FLOAT.md): ember's own kernel
// (ops/fgemm.h) and each float library of this build (ops/fgemm_library.h)
// on one TinyLlama-1.1B layer's matrices (q, k, v, o, gate, up, down: 44 M
// weights, 88 MB in F16, so decode reads them from memory), for batch sizes
// m and thread counts. The paths alternate within each repetition and the
// median is printed; MatMul's crossover (FloatLibrary::from_m) comes from here.
//
//   ember_fgemm_bench [--types f16,bf16,f32] [--m 1,2,4,...] [--threads 1,2] [--reps 5]
// Output: one line per (type, threads, m): ms per layer and GFLOP/s per path.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ops/fgemm_library.h"
#include "ops/kernels.h"
#include "quant/fp16.h"

using namespace ember;

namespace {

struct Matrix {
  std::vector<uint8_t> bytes;
  FloatMatrix w;
};

Matrix Make(FloatWeight type, int64_t n, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 0.02f);
  Matrix m;
  const size_t eb = type == FloatWeight::kF32 ? 4 : 2;
  m.bytes.resize(static_cast<size_t>(n * k) * eb);
  for (int64_t i = 0; i < n * k; ++i) {
    const float v = d(rng);
    if (type == FloatWeight::kF32) {
      std::memcpy(&m.bytes[4 * i], &v, 4);
    } else {
      const uint16_t h = type == FloatWeight::kF16 ? Fp32ToFp16(v) : Fp32ToBf16(v);
      std::memcpy(&m.bytes[2 * i], &h, 2);
    }
  }
  m.w = FloatMatrix{type, m.bytes.data(), n, k};
  return m;
}

// ops/matmul.cpp's own path: rows split over threads in blocks of 16.
void Own(const FloatMatrix& w, const float* x, int64_t m, float* y, int threads) {
  const FGemmFn fn = Active().fgemm;
  const int64_t blocks = (w.n_rows + 15) / 16;
#pragma omp parallel for num_threads(threads) schedule(static, 1) if (threads > 1)
  for (int c = 0; c < threads; ++c) {
    const int64_t b = std::min(w.n_rows, 16 * (blocks * c / threads));
    const int64_t e = std::min(w.n_rows, 16 * (blocks * (c + 1) / threads));
    fn(w, b, e, x, m, y, w.n_rows);
  }
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string types = "f16,bf16,f32", ms = "1,2,4,8,16,32,64,128,512", threads = "1,2";
  std::string lib_names = "onednn,xnnpack";
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--types")
      types = v;
    else if (a == "--m")
      ms = v;
    else if (a == "--threads")
      threads = v;
    else if (a == "--libs")
      lib_names = v;
    else if (a == "--reps")
      reps = std::atoi(v.c_str());
    else {
      std::fprintf(stderr,
                   "usage: %s [--types f16,bf16,f32] [--m 1,2,..] [--threads 1,2] "
                   "[--reps 5] [--libs onednn,xnnpack|none]\n",
                   argv[0]);
      return 2;
    }
  }
  std::vector<const FloatLibrary*> libs;
  for (const std::string& name : Split(lib_names)) {
    if (const FloatLibrary* l = FindFloatLibrary(name.c_str())) libs.push_back(l);
  }
  std::printf("isa %s; paths: own", IsaName(Active().isa));
  for (const FloatLibrary* l : libs) std::printf(", %s", l->name);
  std::printf("\n%-5s %3s %4s %10s", "type", "thr", "m", "own ms");
  for (const FloatLibrary* l : libs) std::printf(" %10s", (std::string(l->name) + " ms").c_str());
  std::printf("   GFLOP/s own");
  for (const FloatLibrary* l : libs) std::printf(" / %s", l->name);
  std::printf("\n");
  std::mt19937 rng(1);
  const int64_t E = 2048, F = 5632, KV = 256;
  const std::pair<int64_t, int64_t> shapes[] = {{E, E}, {KV, E}, {KV, E}, {E, E},
                                                {F, E}, {F, E},  {E, F}};
  int64_t layer_weights = 0;
  for (auto [n, k] : shapes) layer_weights += n * k;
  for (const std::string& ts : Split(types)) {
    const FloatWeight type = ts == "f32"    ? FloatWeight::kF32
                             : ts == "bf16" ? FloatWeight::kBF16
                                            : FloatWeight::kF16;
    std::vector<Matrix> layer;
    for (auto [n, k] : shapes) layer.push_back(Make(type, n, k, rng));
    for (const std::string& th : Split(threads)) {
      const int nt = std::atoi(th.c_str());
      for (const std::string& mstr : Split(ms)) {
        const int64_t m = std::atoll(mstr.c_str());
        std::vector<float> x(static_cast<size_t>(m * F)), y(static_cast<size_t>(m * F));
        std::normal_distribution<float> d(0.0f, 1.0f);
        for (float& v : x) v = d(rng);
        const size_t n_paths = 1 + libs.size();
        std::vector<std::vector<double>> times(n_paths);
        for (int r = 0; r <= reps; ++r) {
          for (size_t p = 0; p < n_paths; ++p) {
            const auto t0 = std::chrono::steady_clock::now();
            for (const Matrix& mat : layer) {
              if (p == 0) {
                Own(mat.w, x.data(), m, y.data(), nt);
              } else if (!libs[p - 1]->gemm(mat.w, x.data(), m, y.data(), mat.w.n_rows, nt).ok()) {
                std::fprintf(stderr, "%s failed\n", libs[p - 1]->name);
                return 1;
              }
            }
            const double ms_taken =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
            if (r > 0) times[p].push_back(ms_taken);  // the first is a warm-up
          }
        }
        std::printf("%-5s %3d %4lld", ts.c_str(), nt, static_cast<long long>(m));
        std::vector<double> med(n_paths);
        for (size_t p = 0; p < n_paths; ++p) {
          std::sort(times[p].begin(), times[p].end());
          med[p] = times[p][times[p].size() / 2];
          std::printf(" %10.3f", med[p]);
        }
        std::printf("  ");
        for (size_t p = 0; p < n_paths; ++p) {
          std::printf(" %7.1f", 2.0 * static_cast<double>(layer_weights * m) / med[p] / 1e6);
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
