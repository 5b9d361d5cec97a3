// The specification of the quantized GEMM kernels: plain C++, never optimised.
// The SIMD variants must produce the same integer group sums and apply the
// scales in the same order:
//   acc = fma(float(isum_g), d_w * d_a, acc)  (isum_g with the offset taken off)
//   acc = fma(m_w, sm_a, acc)                 (layouts with stored mins)
// group by group, per output element (so the variants agree bit for bit).
// IQ4x16's quants are the grid values kIq4Grid[index] (signed, -127..113):
//   isum_g = sum(grid[q] a), no offset
// (a SIMD variant may look up grid + 128 and take 128 qsum off: the same
// integer).
// The K layouts (Q4Kx16, Q5Kx16: w = d sc_j q - dmin m_j) apply the 6-bit
// scale and min of each group exactly and d, dmin once per super-group of 256:
//   sd = fma(float(sc_j isum_j), d_a_j, sd)    (j = 0..7, in order)
//   sm = fma(float(m_j qsum_j), d_a_j, sm)
//   acc = fma(d_w, sd, acc); acc = fma(-dmin_w, sm, acc)
// sc_j isum_j and m_j qsum_j are exact integers below 2^23 (63 * 32 * 31 *
// 127), so each fma rounds once; a variant may also compute either product as
// float(isum_j) * (float(sc_j) d_a_j), or float(m_j) * dqsum_j (QuantizedActs:
// d_a_j float(qsum_j)): sc_j d_a_j (6 by 11 significant bits) and dqsum_j (12
// by 11) are exact, and the fma sees the same exact product.
// Q3Kx16 and Q2Kx16 have a scale (and Q2_K a min) per 16 columns: per group j
// and half h (columns 16h..16h+15, sub-block b = 2j + h), in integers,
//   Q3Kx16: isum_j = sc_b0 (isum_h0 - 4 qsum16_h0) + sc_b1 (isum_h1 - 4 qsum16_h1)
//   Q2Kx16: isum_j = sc_b0 isum_h0 + sc_b1 isum_h1, msum_j = m_b0 qsum16_h0 + m_b1 qsum16_h1
// (|isum_j| <= 2 * 32 * 16 * 4 * 127, |msum_j| <= 2 * 15 * 16 * 127: exact
// in float), then as above: sd = fma(float(isum_j), d_a_j, sd), sm =
// fma(float(msum_j), d_a_j, sm), and per super-group acc = fma(d_w, sd, acc)
// (and acc = fma(-dmin_w, sm, acc) for Q2Kx16).
// Q6Kx16 (Q6_K in Q3Kx16's super-groups) is Q3Kx16's arithmetic with Q6_K's
// offset: isum_j = sc_b0 (isum_h0 - 32 qsum16_h0) + sc_b1 (isum_h1 - 32
// qsum16_h1). A half's |sum((q - 32) a)| <= 16 * 32 * 127 = 65024 and |sc_b|
// <= 128, so |isum_j| <= 2 * 128 * 65024 = 16646144 < 2^24 = 16777216: exact
// in int32 and in float (the bound is tight: 2^24 is 1.008 times it; it uses
// |a| <= 127, which QuantizeActs guarantees). Then sd = fma(float(isum_j),
// d_a_j, sd) through the 8 groups and acc = fma(d_w, sd, acc) per super-group.
#include <cmath>
#include <cstring>

#include "ops/qgemm.h"
#include "quant/blocks.h"
#include "quant/fp16.h"

namespace ember {

void QuantizeActs_ref(const float* x, int64_t m, int64_t k, QuantizedActs* a) {
  QuantizeActs(QuantizeActRows_ref, x, m, k, a);
}

void QuantizeActRows_ref(const float* x, int64_t t0, int64_t t1, QuantizedActs* a) {
  const int64_t k = a->k;
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t g = 0; g < k / 32; ++g) {
      const float* xg = x + t * k + g * 32;
      float amax = 0.0f;
      bool finite = true;
      for (int j = 0; j < 32; ++j) {
        amax = std::fmax(amax, std::fabs(xg[j]));
        finite = finite && std::isfinite(xg[j]);
      }
      if (!finite) {
        a->SetNonFinite(t, g);
        continue;
      }
      // As ggml's Q8_0/Q8_1 activations (its x86 quantizer): q from the
      // exact inverse scale 127 / amax, the scale stored rounded to fp16 (so
      // the integer sums match llama.cpp's). 127 / amax and 1 / (amax / 127)
      // differ in the last bit for some amax, which moves a q at a .5 tie.
      const float d_exact = amax / 127.0f;
      const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
      const float d = Fp16ToFp32(Fp32ToFp16(d_exact));
      int sum = 0, sum16[2] = {0, 0};
      int8_t* q = a->q.data() + t * k + g * 32;
      for (int j = 0; j < 32; ++j) {
        q[j] = static_cast<int8_t>(std::nearbyint(xg[j] * id));
        sum += q[j];
        sum16[j / 16] += q[j];
      }
      a->qsum16[t * (k / 16) + 2 * g] = sum16[0];
      a->qsum16[t * (k / 16) + 2 * g + 1] = sum16[1];
      a->d[t * (k / 32) + g] = d;
      a->qsum[t * (k / 32) + g] = sum;
      a->dqsum[t * (k / 32) + g] = d * static_cast<float>(sum);
      a->sm[t * (k / 32) + g] = Fp16ToFp32(Fp32ToFp16(d_exact * static_cast<float>(sum)));
    }
  }
}

namespace {

// The quant of row `lane`, column c of a TileGroup at gp (quant/packed.h).
int Quant(PackedLayout layout, const uint8_t* gp, int lane, int c) {
  if (layout == PackedLayout::kQ8x16) {
    return static_cast<int8_t>(gp[(c / 4) * 64 + lane * 4 + c % 4]);
  }
  const uint8_t byte = gp[(c / 8) * 64 + lane * 4 + c % 4];
  int q = c % 8 < 4 ? (byte & 0x0F) : (byte >> 4);
  if (layout == PackedLayout::kQ5x16) q |= Q5HighBit(gp + 256, lane, c) << 4;
  if (layout == PackedLayout::kIQ4x16) return kIq4Grid[q];  // the index's grid value
  return q;
}

void QGemm_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
               float* y, int64_t ldy) {
  const size_t q_bytes = PackedQuantBytes(w.layout);
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int64_t t = 0; t < a.m; ++t) {
      const int8_t* aq = a.q_row(t);
      for (int lane = 0; lane < kTileRows; ++lane) {
        const int64_t row = tile * kTileRows + lane;
        if (row >= w.n_rows) break;
        float acc = 0.0f;
        for (int64_t g = 0; g < w.n_groups; ++g) {
          const uint8_t* gp = w.tile(tile) + static_cast<size_t>(g) * w.group_bytes;
          const auto* dp = reinterpret_cast<const uint16_t*>(gp + q_bytes);
          const int8_t* ag = aq + g * 32;
          int32_t isum = 0;
          for (int c = 0; c < 32; ++c) isum += Quant(w.layout, gp, lane, c) * ag[c];
          // Without stored mins, the offset (q - 8 or q - 16) comes off the
          // integer sum exactly: sum((q - o) a) = sum(q a) - o sum(a).
          if (!w.has_min) isum += PackedOffset(w.layout) * a.qsum_row(t)[g];
          const float dw = Fp16ToFp32(dp[lane]);
          const float da = a.d_row(t)[g];
          // One or two fused multiply-adds, in this order, as the SIMD kernels.
          acc = std::fma(static_cast<float>(isum), dw * da, acc);
          if (w.has_min) acc = std::fma(Fp16ToFp32(dp[16 + lane]), a.sm_row(t)[g], acc);
        }
        y[t * ldy + row] = acc;
      }
    }
  }
}

// The K layouts (quant/packed.h): per row and token, the super-groups' sums
// with d and dmin applied once each, as above.
void QGemmK_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
                float* y, int64_t ldy) {
  const PackedLayout quants =
      w.layout == PackedLayout::kQ5Kx16 ? PackedLayout::kQ5x16 : PackedLayout::kQ4x16;
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int64_t t = 0; t < a.m; ++t) {
      for (int lane = 0; lane < kTileRows; ++lane) {
        const int64_t row = tile * kTileRows + lane;
        if (row >= w.n_rows) break;
        float acc = 0.0f;
        for (int64_t s = 0; s < n_supers; ++s) {
          const uint8_t* sg = w.tile(tile) + static_cast<size_t>(s) * w.super_bytes;
          float sd = 0.0f, sm = 0.0f;
          for (int j = 0; j < kSuperGroups; ++j) {
            const int64_t g = s * kSuperGroups + j;
            const uint8_t* gq = sg + KHeaderBytes(w.layout) + j * w.group_bytes;
            const int8_t* ag = a.q_row(t) + g * 32;
            int32_t isum = 0;
            for (int c = 0; c < 32; ++c) isum += Quant(quants, gq, lane, c) * ag[c];
            const int32_t sc = sg[kKScaleOffset + 16 * j + lane];
            const int32_t m = sg[kKMinOffset + 16 * j + lane];
            const float da = a.d_row(t)[g];
            sd = std::fma(static_cast<float>(sc * isum), da, sd);
            sm = std::fma(static_cast<float>(m * a.qsum_row(t)[g]), da, sm);
          }
          uint16_t d, dmin;
          std::memcpy(&d, sg + 2 * lane, 2);
          std::memcpy(&dmin, sg + kKDminOffset + 2 * lane, 2);
          acc = std::fma(Fp16ToFp32(d), sd, acc);
          acc = std::fma(-Fp16ToFp32(dmin), sm, acc);
        }
        y[t * ldy + row] = acc;
      }
    }
  }
}

// A Q3Kx16 / Q2Kx16 / Q6Kx16 quant: the low 2 bits from the crumbs, Q3Kx16's
// bit 2 from its high-bit plane; Q6Kx16's low 4 bits from Q4x16's nibbles and
// the top 2 from the crumbs (quant/packed.h).
int QuantK16(PackedLayout layout, const uint8_t* gq, int lane, int c) {
  const int crumb_shift = 2 * ((c / 4) % 4);  // crumb k = (c / 4) % 4 of crumb vector c / 16
  if (layout == PackedLayout::kQ6Kx16) {
    const int crumb = (gq[kQ6CrumbOffset + (c / 16) * 64 + lane * 4 + c % 4] >> crumb_shift) & 3;
    return Quant(PackedLayout::kQ4x16, gq, lane, c) | crumb << 4;
  }
  int q = (gq[(c / 16) * 64 + lane * 4 + c % 4] >> crumb_shift) & 3;
  if (layout == PackedLayout::kQ3Kx16)
    q |= ((gq[kQ3HighOffset + lane * 4 + c % 4] >> (c / 4)) & 1) << 2;
  return q;
}

void QGemmK16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                  const QuantizedActs& a, float* y, int64_t ldy) {
  // Q3Kx16 and Q6Kx16: signed scales, an offset and no mins; Q2Kx16: mins.
  const bool mins = w.layout == PackedLayout::kQ2Kx16;
  const int32_t offset = w.layout == PackedLayout::kQ3Kx16 ? -4 : PackedOffset(w.layout);
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int64_t t = 0; t < a.m; ++t) {
      for (int lane = 0; lane < kTileRows; ++lane) {
        const int64_t row = tile * kTileRows + lane;
        if (row >= w.n_rows) break;
        float acc = 0.0f;
        for (int64_t s = 0; s < n_supers; ++s) {
          const uint8_t* sg = w.tile(tile) + static_cast<size_t>(s) * w.super_bytes;
          float sd = 0.0f, sm = 0.0f;
          for (int j = 0; j < kSuperGroups; ++j) {
            const int64_t g = s * kSuperGroups + j;
            const uint8_t* gq = sg + KHeaderBytes(w.layout) + j * w.group_bytes;
            const int8_t* ag = a.q_row(t) + g * 32;
            int32_t isum = 0, msum = 0;
            for (int h = 0; h < 2; ++h) {
              const uint8_t scb = sg[K16ScaleOffset(w.layout) + 16 * (2 * j + h) + lane];
              const int32_t qsum16 = a.qsum16_row(t)[2 * g + h];
              int32_t half = 0;
              for (int c = 16 * h; c < 16 * h + 16; ++c)
                half += QuantK16(w.layout, gq, lane, c) * ag[c];
              if (!mins) {
                isum += static_cast<int8_t>(scb) * (half + offset * qsum16);
              } else {
                isum += (scb & 0x0F) * half;
                msum += (scb >> 4) * qsum16;
              }
            }
            const float da = a.d_row(t)[g];
            sd = std::fma(static_cast<float>(isum), da, sd);
            if (mins) sm = std::fma(static_cast<float>(msum), da, sm);
          }
          uint16_t d;
          std::memcpy(&d, sg + 2 * lane, 2);
          acc = std::fma(Fp16ToFp32(d), sd, acc);
          if (mins) {
            uint16_t dmin;
            std::memcpy(&dmin, sg + kKDminOffset + 2 * lane, 2);
            acc = std::fma(-Fp16ToFp32(dmin), sm, acc);
          }
        }
        y[t * ldy + row] = acc;
      }
    }
  }
}

}  // namespace

void QGemmQ3Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  QGemmK16_ref(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ2Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  QGemmK16_ref(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ6Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  QGemmK16_ref(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ4Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  QGemmK_ref(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5Kx16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  QGemmK_ref(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ4x16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                    const QuantizedActs& a, float* y, int64_t ldy) {
  QGemm_ref(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5x16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                    const QuantizedActs& a, float* y, int64_t ldy) {
  QGemm_ref(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ8x16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                    const QuantizedActs& a, float* y, int64_t ldy) {
  QGemm_ref(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmIQ4x16_ref(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  QGemm_ref(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
