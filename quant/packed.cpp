#include "quant/packed.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "platform/mapped_file.h"
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/quantize.h"

namespace ember {
namespace {

void FreeAligned(uint8_t* p) { std::free(p); }
void KeepStorage(uint8_t*) {}  // the caller's storage (Repack's `storage`)

uint8_t* AllocAligned(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<uint8_t*>(p);
}

// Where the pieces of a TileGroup sit.
struct GroupView {
  uint8_t* qs;
  uint8_t* qh;  // Q5x16's high-bit plane, else nullptr
  uint16_t* d;
  uint16_t* m;  // nullptr without mins
};

GroupView View(const PackedMatrix& w, uint8_t* base, int64_t tile, int64_t group) {
  uint8_t* g =
      base + static_cast<size_t>(tile) * w.tile_bytes + static_cast<size_t>(group) * w.group_bytes;
  const size_t q_bytes = PackedQuantBytes(w.layout);
  GroupView v{g, w.layout == PackedLayout::kQ5x16 ? g + 256 : nullptr,
              reinterpret_cast<uint16_t*>(g + q_bytes), nullptr};
  if (w.has_min) v.m = reinterpret_cast<uint16_t*>(g + q_bytes + 32);
  return v;
}

// One row's group of 32 weights in a native layout's terms, before the rows
// are interleaved. Q4 / Q5: value = q * d + m (m ignored without mins, q in
// 0..15 / 0..31); IQ4: d * kIq4Grid[q] (q in 0..15, m unused); Q8: q * d.
struct Q4Group {
  uint8_t q[kGroupCols];
  uint16_t d, m;
};
struct Q8Group {
  int8_t q[kGroupCols];
  uint16_t d;
};

// The low 4 bits of a row's 32 quants into Q4x16's nibbles.
void StoreNibbles(uint8_t* qs, int64_t lane, const uint8_t* q) {
  for (int s = 0; s < 4; ++s) {
    for (int b = 0; b < 4; ++b) {
      qs[s * 64 + lane * 4 + b] =
          static_cast<uint8_t>((q[8 * s + b] & 0x0F) | ((q[8 * s + 4 + b] & 0x0F) << 4));
    }
  }
}

void Store(const GroupView& v, int64_t lane, const Q4Group& g) {
  if (v.d != nullptr) v.d[lane] = g.d;  // K layouts: scales in the super-group's header
  if (v.m != nullptr) v.m[lane] = g.m;
  StoreNibbles(v.qs, lane, g.q);
  if (v.qh == nullptr) return;
  // Bit c / 4 of byte 4r + c % 4: column c's bit 4 of row r (quant/packed.h).
  for (int c = 0; c < kGroupCols; ++c) {
    uint8_t& byte = v.qh[lane * 4 + c % 4];
    byte = static_cast<uint8_t>(byte | (((g.q[c] >> 4) & 1) << (c / 4)));
  }
}

void Store(const GroupView& v, int64_t lane, const Q8Group& g) {
  v.d[lane] = g.d;
  for (int s = 0; s < 8; ++s) std::memcpy(v.qs + s * 64 + lane * 4, g.q + 4 * s, 4);
}

Status NotFp16(const char* what, float value) {
  return InvalidArgument(std::string(what) + " " + std::to_string(value) +
                         " does not fit an fp16 scale");
}

// ---- Exact and near-exact sources: the quants are kept, scales converted. ----

// Q4_0 / Q4_1 nibbles (byte j: weight j low, weight j + 16 high) -> q[32].
void UnpackNibbles32(const uint8_t* qs, uint8_t* q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = qs[j] & 0x0F;
    q[j + 16] = qs[j] >> 4;
  }
}

// Q4_0, Q4_1 -> Q4 groups; Q5_0, Q5_1 -> Q5 groups; IQ4_NL, IQ4_XS -> IQ4
// groups (grid indices).
Status RowToQ4(GgmlType type, const uint8_t* row, int64_t n_groups, Q4Group* out) {
  if (type == GgmlType::kIQ4_NL || type == GgmlType::kIQ4_XS) {
    // d * grid[q]: the same indices (nibbles ordered as Q4_0's) and scale,
    // exact for IQ4_NL; IQ4_XS's sub-block scale d * (ls - 32) (exact in
    // float: 11-bit times 6-bit significands) is rounded to fp16, a relative
    // 2^-11 of it, as Q4_K's scales (plus 2^-25 where it is an fp16 subnormal).
    for (int64_t g = 0; g < n_groups; ++g) {
      const uint8_t* qs;
      if (type == GgmlType::kIQ4_NL) {
        const auto& b = reinterpret_cast<const BlockIQ4_NL*>(row)[g];
        out[g].d = b.d;
        qs = b.qs;
      } else {
        const auto& b = reinterpret_cast<const BlockIQ4_XS*>(row)[g / 8];
        const int j = static_cast<int>(g % 8);
        const float dl = Fp16ToFp32(b.d) * static_cast<float>(UnpackScaleIQ4_XS(b, j) - 32);
        if (!(std::fabs(dl) <= 65504.0f)) return NotFp16("IQ4_XS sub-block scale", dl);
        out[g].d = Fp32ToFp16(dl);
        qs = b.qs + 16 * j;
      }
      out[g].m = 0;
      UnpackNibbles32(qs, out[g].q);
    }
    return Status::Ok();
  }
  if (type == GgmlType::kQ4_0) {
    for (int64_t g = 0; g < n_groups; ++g) {
      const auto& b = reinterpret_cast<const BlockQ4_0*>(row)[g];
      UnpackNibbles32(b.qs, out[g].q);
      out[g].d = b.d;  // (q - 8) d = q d + (-8 d): the kernels' no-min form
      out[g].m = 0;
    }
    return Status::Ok();
  }
  if (type == GgmlType::kQ4_1) {
    for (int64_t g = 0; g < n_groups; ++g) {
      const auto& b = reinterpret_cast<const BlockQ4_1*>(row)[g];
      UnpackNibbles32(b.qs, out[g].q);
      out[g].d = b.d;
      out[g].m = b.m;
    }
    return Status::Ok();
  }
  if (type == GgmlType::kQ5_0 || type == GgmlType::kQ5_1) {
    // Q5_0: (q - 16) d, the no-min form of Q5x16; Q5_1: q d + m. Same quants,
    // scale and min.
    const size_t block_bytes = type == GgmlType::kQ5_0 ? sizeof(BlockQ5_0) : sizeof(BlockQ5_1);
    for (int64_t g = 0; g < n_groups; ++g) {
      const uint8_t* blk = row + static_cast<size_t>(g) * block_bytes;
      const uint8_t *qh_bytes, *qs;
      if (type == GgmlType::kQ5_0) {
        const auto& b = *reinterpret_cast<const BlockQ5_0*>(blk);
        out[g].d = b.d;
        out[g].m = 0;
        qh_bytes = b.qh;
        qs = b.qs;
      } else {
        const auto& b = *reinterpret_cast<const BlockQ5_1*>(blk);
        out[g].d = b.d;
        out[g].m = b.m;
        qh_bytes = b.qh;
        qs = b.qs;
      }
      uint32_t qh;
      std::memcpy(&qh, qh_bytes, 4);
      UnpackNibbles32(qs, out[g].q);  // byte j: weight j (low nibble), j + 16 (high)
      for (int j = 0; j < 32; ++j) out[g].q[j] |= static_cast<uint8_t>(((qh >> j) & 1) << 4);
    }
    return Status::Ok();
  }
  return Unsupported(std::string("no Q4 groups from ") + GgmlTypeName(type));
}

// ---- K layouts: Q4_K and Q5_K, their numbers unchanged. ----

// One row's super-block in a K layout's terms, before the rows are interleaved:
// group j's weight l is d * sc[j] * q[32 j + l] - dmin * m[j].
struct KSuper {
  uint16_t d, dmin;
  uint8_t sc[kSuperGroups], m[kSuperGroups];
  uint8_t q[kSuperCols];
};

// A super-block's fp16 d or dmin that is inf or nan: every weight it scales
// would be too (the exact layouts keep the bits; ggml would compute nan).
bool NotFinite(uint16_t fp16) { return (fp16 & 0x7C00) == 0x7C00; }

Status NotFiniteScale(GgmlType type, const char* which, uint16_t fp16) {
  return InvalidArgument(std::string("a weight is not finite (") + GgmlTypeName(type) +
                         " super-block " + which + " = " + std::to_string(Fp16ToFp32(fp16)) + ")");
}

Status RowToK(GgmlType type, const uint8_t* row, int64_t n_supers, KSuper* out) {
  const bool k5 = type == GgmlType::kQ5_K;
  for (int64_t s = 0; s < n_supers; ++s) {
    const uint8_t *scales, *qs, *qh = nullptr;
    KSuper& o = out[s];
    if (k5) {
      const auto& b = reinterpret_cast<const BlockQ5_K*>(row)[s];
      o.d = b.d, o.dmin = b.dmin, scales = b.scales, qs = b.qs, qh = b.qh;
    } else {
      const auto& b = reinterpret_cast<const BlockQ4_K*>(row)[s];
      o.d = b.d, o.dmin = b.dmin, scales = b.scales, qs = b.qs;
    }
    if (NotFinite(o.d)) return NotFiniteScale(type, "d", o.d);
    if (NotFinite(o.dmin)) return NotFiniteScale(type, "dmin", o.dmin);
    for (int j = 0; j < kSuperGroups; ++j) {
      int sc, m;
      UnpackScaleMinK4(scales, j, &sc, &m);
      o.sc[j] = static_cast<uint8_t>(sc);
      o.m[j] = static_cast<uint8_t>(m);
      for (int l = 0; l < kGroupCols; ++l) {
        // Sub-block j's weight l: the low (even j) or high (odd j) nibble of
        // qs[32 (j / 2) + l]; Q5_K's bit 4 is bit j of qh[l].
        const uint8_t byte = qs[32 * (j / 2) + l];
        int q = j % 2 == 0 ? (byte & 0x0F) : (byte >> 4);
        if (k5) q |= ((qh[l] >> j) & 1) << 4;
        o.q[32 * j + l] = static_cast<uint8_t>(q);
      }
    }
  }
  return Status::Ok();
}

// Row `lane` of super-group s of a tile at `tile`.
void StoreK(const PackedMatrix& w, uint8_t* tile, int64_t lane, int64_t s, const KSuper& k) {
  uint8_t* sg = tile + static_cast<size_t>(s) * w.super_bytes;
  std::memcpy(sg + 2 * lane, &k.d, 2);
  std::memcpy(sg + kKDminOffset + 2 * lane, &k.dmin, 2);
  for (int j = 0; j < kSuperGroups; ++j) {
    sg[kKScaleOffset + 16 * j + lane] = k.sc[j];
    sg[kKMinOffset + 16 * j + lane] = k.m[j];
    Q4Group g{};  // Q4x16's nibbles (and Q5x16's high bits) of the group
    std::memcpy(g.q, k.q + 32 * j, kGroupCols);
    uint8_t* gq = sg + KHeaderBytes(w.layout) + j * KGroupBytes(w.layout);
    Store(GroupView{gq, w.layout == PackedLayout::kQ5Kx16 ? gq + 256 : nullptr, nullptr, nullptr},
          lane, g);
  }
}

// ---- K layouts with scales per 16: Q3_K, Q2_K and Q6_K, their numbers unchanged. ----

// One row's super-block: per sub-block b of 16 weights, Q3_K's scale minus 32
// (as int8 bits), Q2_K's byte (scale | min << 4) or Q6_K's int8 scale (as
// bits); q[i] in 0..7 (Q3_K: value d * sc_b * (q - 4)), 0..3 (Q2_K: d * sc_b *
// q - dmin * m_b) or 0..63 (Q6_K: d * sc_b * (q - 32)).
struct K16Super {
  uint16_t d, dmin;
  uint8_t scb[16];
  uint8_t q[kSuperCols];
};

Status RowToK16(GgmlType type, const uint8_t* row, int64_t n_supers, K16Super* out) {
  for (int64_t s = 0; s < n_supers; ++s) {
    K16Super& o = out[s];
    const uint8_t* qs;
    if (type == GgmlType::kQ3_K) {
      const auto& b = reinterpret_cast<const BlockQ3_K*>(row)[s];
      o.d = b.d, o.dmin = 0, qs = b.qs;
      for (int j = 0; j < 16; ++j) {
        o.scb[j] = static_cast<uint8_t>(static_cast<int8_t>(UnpackScaleQ3_K(b.scales, j) - 32));
      }
      // Weight i's bit 2 is bit i / 32 of hmask[i % 32]; set means q - 4 = low
      // 2 bits, clear means low 2 bits - 4 (quant/blocks.h).
      for (int i = 0; i < kSuperCols; ++i)
        o.q[i] = static_cast<uint8_t>(((b.hmask[i % 32] >> (i / 32)) & 1) << 2);
    } else if (type == GgmlType::kQ6_K) {
      const auto& b = reinterpret_cast<const BlockQ6_K*>(row)[s];
      o.d = b.d, o.dmin = 0;
      std::memcpy(o.scb, b.scales, 16);
      if (NotFinite(o.d)) return NotFiniteScale(type, "d", o.d);
      // Weight 128 h + 32 p + l takes its low 4 bits from ql[64 h + 32 (p % 2)
      // + l] (low nibble for p < 2, high for p >= 2) and its top 2 from qh[32
      // h + l] at bit 2 p (quant/blocks.h, as DequantizeRowQ6_K).
      for (int i = 0; i < kSuperCols; ++i) {
        const int h = i / 128, p = (i % 128) / 32, l = i % 32;
        const int low = (b.ql[64 * h + 32 * (p % 2) + l] >> (p < 2 ? 0 : 4)) & 0x0F;
        const int top = (b.qh[32 * h + l] >> (2 * p)) & 3;
        o.q[i] = static_cast<uint8_t>(low | top << 4);
      }
      continue;
    } else {
      const auto& b = reinterpret_cast<const BlockQ2_K*>(row)[s];
      o.d = b.d, o.dmin = b.dmin, qs = b.qs;
      std::memcpy(o.scb, b.scales, 16);
      std::memset(o.q, 0, sizeof(o.q));
    }
    if (NotFinite(o.d)) return NotFiniteScale(type, "d", o.d);
    if (NotFinite(o.dmin)) return NotFiniteScale(type, "dmin", o.dmin);
    // The low 2 bits: weight 128 h + 32 p + l at bits 2p, 2p+1 of qs[32 h + l].
    for (int i = 0; i < kSuperCols; ++i) {
      o.q[i] = static_cast<uint8_t>(o.q[i] |
                                    ((qs[32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3));
    }
  }
  return Status::Ok();
}

// Bits `shift`, `shift` + 1 of a row's 32 quants as crumbs (Q3_K's and Q2_K's
// low 2 bits, Q6_K's top 2): column c is byte 4 lane + c % 4 of unpacked
// vector c / 4, whose bits go to bits 2k, 2k+1 (k = (c / 4) % 4) of that byte
// of crumb vector c / 16.
void StoreCrumbs(uint8_t* qc, int64_t lane, const uint8_t* q, int shift) {
  for (int c = 0; c < kGroupCols; ++c) {
    uint8_t& byte = qc[(c / 16) * 64 + lane * 4 + c % 4];
    byte = static_cast<uint8_t>(byte | (((q[c] >> shift) & 3) << (2 * ((c / 4) % 4))));
  }
}

void StoreK16(const PackedMatrix& w, uint8_t* tile, int64_t lane, int64_t s, const K16Super& k) {
  uint8_t* sg = tile + static_cast<size_t>(s) * w.super_bytes;
  std::memcpy(sg + 2 * lane, &k.d, 2);
  if (w.layout == PackedLayout::kQ2Kx16) std::memcpy(sg + kKDminOffset + 2 * lane, &k.dmin, 2);
  for (int b = 0; b < 16; ++b) sg[K16ScaleOffset(w.layout) + 16 * b + lane] = k.scb[b];
  for (int j = 0; j < kSuperGroups; ++j) {
    uint8_t* gq = sg + KHeaderBytes(w.layout) + j * KGroupBytes(w.layout);
    const uint8_t* q = k.q + 32 * j;
    if (w.layout == PackedLayout::kQ6Kx16) {  // the nibbles, then the crumbs
      StoreNibbles(gq, lane, q);
      StoreCrumbs(gq + kQ6CrumbOffset, lane, q, 4);
      continue;
    }
    StoreCrumbs(gq, lane, q, 0);
    if (w.layout != PackedLayout::kQ3Kx16) continue;
    // Bit 2 of column c: bit c / 4 (its unpacked vector) of byte 4 lane + c % 4.
    for (int c = 0; c < kGroupCols; ++c) {
      uint8_t& byte = gq[kQ3HighOffset + lane * 4 + c % 4];
      byte = static_cast<uint8_t>(byte | (((q[c] >> 2) & 1) << (c / 4)));
    }
  }
}

// ---- Q8x16 sources. ----

// Round half to even, as std::nearbyint in the default rounding mode, for
// |x| < 2^22: adding 1.5 * 2^23 leaves no fraction bits. (Without SSE4.1,
// nearbyint is a libm call per weight that saves and restores the FP state.)
float RoundHalfEven(float x) {
  constexpr float kMagic = 12582912.0f;
  return (x + kMagic) - kMagic;
}

// 32 floats -> int8 with one fp16 scale: d = max|v| / 127, rounded to fp16
// and bumped up by one fp16 step when rounding went down, so every |v / d| <=
// 127 and no quant is clamped; q = round-half-even(v / d), so |q d - v| <= d / 2
// (up to the float rounding of v / d). Sets *amax; false when a value is not
// finite (*amax is then inf or nan) or d does not fit fp16.
bool RequantizeQ8(const float* v, Q8Group* g, float* amax) {
  // |v| as bits: non-negative floats order as their bit patterns, inf and nan
  // above all finite values; an integer max vectorizes where a float one may not.
  uint32_t max_bits = 0;
  for (int j = 0; j < kGroupCols; ++j) {
    uint32_t b;
    std::memcpy(&b, &v[j], 4);
    max_bits = std::max(max_bits, b & 0x7FFFFFFFu);
  }
  std::memcpy(amax, &max_bits, 4);
  if (max_bits >= 0x7F800000u) return false;
  uint16_t d16 = Fp32ToFp16(*amax / 127.0f);
  if (Fp16ToFp32(d16) * 127.0f < *amax) ++d16;  // the next fp16 up (d16 >= 0)
  if (d16 >= 0x7C00) return false;
  const float d = Fp16ToFp32(d16);
  g->d = d16;
  for (int j = 0; j < kGroupCols; ++j) {
    g->q[j] = d > 0.0f ? static_cast<int8_t>(RoundHalfEven(v[j] / d)) : 0;
  }
  return true;
}

// `scratch` holds n_groups * 32 floats.
Status RowToQ8(GgmlType type, const uint8_t* row, int64_t n_groups, float* scratch, Q8Group* out) {
  if (type == GgmlType::kQ8_0) {
    for (int64_t g = 0; g < n_groups; ++g) {
      const auto& b = reinterpret_cast<const BlockQ8_0*>(row)[g];
      std::memcpy(out[g].q, b.qs, kGroupCols);
      out[g].d = b.d;
    }
    return Status::Ok();
  }
  // F16, BF16, F32 (with --repack int8): requantize the values.
  DequantizeRow(type, row, scratch, n_groups * kGroupCols);
  for (int64_t g = 0; g < n_groups; ++g) {
    float amax;
    if (!RequantizeQ8(scratch + g * kGroupCols, &out[g], &amax)) {
      if (!std::isfinite(amax)) return InvalidArgument("a weight is " + std::to_string(amax));
      return NotFp16("int8 group scale", amax / 127.0f);
    }
  }
  return Status::Ok();
}

// Sources whose groups carry a min of their own (the others have an offset).
bool HasMins(GgmlType type) { return type == GgmlType::kQ4_1 || type == GgmlType::kQ5_1; }

PackedLayout LayoutFor(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
      return PackedLayout::kQ4x16;
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
      return PackedLayout::kQ5x16;
    case GgmlType::kQ4_K:
      return PackedLayout::kQ4Kx16;
    case GgmlType::kQ5_K:
      return PackedLayout::kQ5Kx16;
    case GgmlType::kQ3_K:
      return PackedLayout::kQ3Kx16;
    case GgmlType::kQ2_K:
      return PackedLayout::kQ2Kx16;
    case GgmlType::kQ6_K:
      return PackedLayout::kQ6Kx16;
    case GgmlType::kIQ4_NL:
    case GgmlType::kIQ4_XS:
      return PackedLayout::kIQ4x16;
    default:
      return PackedLayout::kQ8x16;
  }
}

// Sets a matrix's shape and the byte sizes that follow from it.
void SetGeometry(PackedLayout layout, bool has_min, int64_t n_rows, int64_t n_cols,
                 PackedMatrix* w) {
  w->layout = layout;
  w->has_min = has_min;
  w->n_rows = n_rows;
  w->n_cols = n_cols;
  w->n_tiles = (n_rows + kTileRows - 1) / kTileRows;
  w->n_groups = n_cols / kGroupCols;
  w->group_bytes = PackedGroupBytes(layout, has_min);
  w->super_bytes = IsKLayout(layout) ? KSuperBytes(layout) : 0;
  w->tile_bytes = IsKLayout(layout)
                      ? w->super_bytes * static_cast<size_t>(w->n_groups / kSuperGroups)
                      : w->group_bytes * static_cast<size_t>(w->n_groups);
}

}  // namespace

size_t PackedGroupBytes(PackedLayout layout, bool has_min) {
  if (IsKLayout(layout)) return KGroupBytes(layout);
  return PackedQuantBytes(layout) + 32 + (has_min ? 32 : 0);
}

bool CanRepack(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ4_K:
    case GgmlType::kQ8_0:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kF32:
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
    case GgmlType::kIQ4_NL:
    case GgmlType::kIQ4_XS:
      return true;
    default:
      return false;
  }
}

bool RepackIsExact(GgmlType type) {
  return type == GgmlType::kQ4_0 || type == GgmlType::kQ4_1 || type == GgmlType::kQ8_0 ||
         type == GgmlType::kQ5_0 || type == GgmlType::kQ5_1 || type == GgmlType::kQ2_K ||
         type == GgmlType::kQ3_K || type == GgmlType::kQ4_K || type == GgmlType::kQ5_K ||
         type == GgmlType::kQ6_K || type == GgmlType::kIQ4_NL;
}

uint64_t RepackedBytes(GgmlType type, int64_t n_rows, int64_t n_cols) {
  if (!CanRepack(type) || n_rows <= 0 || n_cols <= 0) return 0;
  const PackedLayout layout = LayoutFor(type);
  const uint64_t n_tiles = (static_cast<uint64_t>(n_rows) + kTileRows - 1) / kTileRows;
  const uint64_t n_groups = static_cast<uint64_t>(n_cols) / kGroupCols;
  const uint64_t tile_bytes = IsKLayout(layout) ? KSuperBytes(layout) * (n_groups / kSuperGroups)
                                                : PackedGroupBytes(layout, HasMins(type)) *
                                                      n_groups;  // < 2^64: n_cols < 2^63
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(tile_bytes, n_tiles, &bytes)) return UINT64_MAX;
  return bytes;
}

Status Repack(GgmlType type, const uint8_t* src, int64_t n_rows, int64_t n_cols, PackedMatrix* out,
              const RepackConsumedFn& consumed, uint8_t* storage) {
  if (!CanRepack(type)) {
    return Unsupported(std::string("tensor type ") + GgmlTypeName(type) +
                       " has no native layout yet");
  }
  const int64_t block = FindGgmlType(static_cast<uint32_t>(type))->block_elems;
  if (n_rows <= 0 || n_cols <= 0 || n_cols % kGroupCols != 0 || n_cols % block != 0) {
    return InvalidArgument("cannot repack a [" + std::to_string(n_rows) + ", " +
                           std::to_string(n_cols) + "] " + GgmlTypeName(type) +
                           " matrix (columns must be a multiple of 32 and of the block size)");
  }
  // The size in 64 bits first: on a 32-bit target size_t would wrap.
  if (const uint64_t bytes = RepackedBytes(type, n_rows, n_cols); bytes > kAddressSpaceLimit) {
    return Unsupported("a [" + std::to_string(n_rows) + ", " + std::to_string(n_cols) + "] " +
                       GgmlTypeName(type) + " matrix repacks to " + std::to_string(bytes) +
                       " bytes, more than this process can address");
  }
  PackedMatrix w;
  SetGeometry(LayoutFor(type), HasMins(type), n_rows, n_cols, &w);
  if (storage != nullptr) {
    w.data = {storage, KeepStorage};
  } else {
    w.data = {AllocAligned(w.bytes()), FreeAligned};
  }
  std::memset(w.data.get(), 0, w.bytes());  // padding rows: d = m = 0, q = 0
  const size_t row_bytes = GgmlRowBytes(type, static_cast<uint64_t>(n_cols));
  // Tells `consumed` about every MiB of source rows read, and about the last.
  const int64_t report_rows =
      std::max<int64_t>(1, static_cast<int64_t>((size_t{1} << 20) / row_bytes));
  auto read = [&](int64_t r) {
    if (consumed && ((r + 1) % report_rows == 0 || r + 1 == n_rows)) consumed(r + 1);
  };

  if (IsK16Layout(w.layout)) {
    const int64_t n_supers = n_cols / kSuperCols;
    std::vector<K16Super> k(static_cast<size_t>(n_supers));
    for (int64_t r = 0; r < n_rows; ++r) {
      EMBER_RETURN_IF_ERROR(
          RowToK16(type, src + static_cast<size_t>(r) * row_bytes, n_supers, k.data()));
      uint8_t* tile = w.data.get() + static_cast<size_t>(r / kTileRows) * w.tile_bytes;
      for (int64_t s = 0; s < n_supers; ++s) StoreK16(w, tile, r % kTileRows, s, k[s]);
      read(r);
    }
    *out = std::move(w);
    return Status::Ok();
  }
  if (IsKLayout(w.layout)) {
    const int64_t n_supers = n_cols / kSuperCols;
    std::vector<KSuper> k(static_cast<size_t>(n_supers));
    for (int64_t r = 0; r < n_rows; ++r) {
      EMBER_RETURN_IF_ERROR(
          RowToK(type, src + static_cast<size_t>(r) * row_bytes, n_supers, k.data()));
      uint8_t* tile = w.data.get() + static_cast<size_t>(r / kTileRows) * w.tile_bytes;
      for (int64_t s = 0; s < n_supers; ++s) StoreK(w, tile, r % kTileRows, s, k[s]);
      read(r);
    }
    *out = std::move(w);
    return Status::Ok();
  }

  const size_t n_groups = static_cast<size_t>(w.n_groups);
  const bool int8 = w.layout == PackedLayout::kQ8x16;
  std::vector<Q4Group> q4(int8 ? 0 : n_groups);
  std::vector<Q8Group> q8(int8 ? n_groups : 0);
  std::vector<float> scratch(int8 ? n_groups * kGroupCols : 0);
  for (int64_t r = 0; r < n_rows; ++r) {
    const uint8_t* row = src + static_cast<size_t>(r) * row_bytes;
    const int64_t tile = r / kTileRows, lane = r % kTileRows;
    if (!int8) {
      EMBER_RETURN_IF_ERROR(RowToQ4(type, row, w.n_groups, q4.data()));
      for (int64_t g = 0; g < w.n_groups; ++g) Store(View(w, w.data.get(), tile, g), lane, q4[g]);
    } else {
      EMBER_RETURN_IF_ERROR(RowToQ8(type, row, w.n_groups, scratch.data(), q8.data()));
      for (int64_t g = 0; g < w.n_groups; ++g) Store(View(w, w.data.get(), tile, g), lane, q8[g]);
    }
    read(r);
  }
  *out = std::move(w);
  return Status::Ok();
}

namespace {

// The native tensor types and what they hold.
struct NativeType {
  GgmlType type;
  PackedLayout layout;
  bool has_min;
};
constexpr NativeType kNativeTypes[] = {
    {GgmlType::kEmberQ4x16, PackedLayout::kQ4x16, false},
    {GgmlType::kEmberQ4x16Min, PackedLayout::kQ4x16, true},
    {GgmlType::kEmberQ5x16, PackedLayout::kQ5x16, false},
    {GgmlType::kEmberQ5x16Min, PackedLayout::kQ5x16, true},
    {GgmlType::kEmberQ8x16, PackedLayout::kQ8x16, false},
    {GgmlType::kEmberIQ4x16, PackedLayout::kIQ4x16, false},
    {GgmlType::kEmberQ4Kx16, PackedLayout::kQ4Kx16, false},
    {GgmlType::kEmberQ5Kx16, PackedLayout::kQ5Kx16, false},
    {GgmlType::kEmberQ3Kx16, PackedLayout::kQ3Kx16, false},
    {GgmlType::kEmberQ2Kx16, PackedLayout::kQ2Kx16, false},
    {GgmlType::kEmberQ6Kx16, PackedLayout::kQ6Kx16, false},
};

const NativeType* FindNative(GgmlType type) {
  for (const NativeType& n : kNativeTypes) {
    if (n.type == type) return &n;
  }
  return nullptr;
}

}  // namespace

GgmlType NativeTypeFor(GgmlType type) {
  const PackedLayout layout = LayoutFor(type);
  const bool has_min = layout != PackedLayout::kQ8x16 && HasMins(type);
  for (const NativeType& n : kNativeTypes) {
    if (n.layout == layout && n.has_min == has_min) return n.type;
  }
  return GgmlType::kEmberQ8x16;  // not reached: every layout has a type
}

bool IsNativeType(GgmlType type) { return FindNative(type) != nullptr; }

Status PackedView(GgmlType type, const uint8_t* data, size_t bytes, int64_t n_rows, int64_t n_cols,
                  PackedMatrix* out) {
  const std::string shape = "[" + std::to_string(n_rows) + ", " + std::to_string(n_cols) + "] " +
                            GgmlTypeName(type) + " matrix";
  const NativeType* native = FindNative(type);
  if (native == nullptr) return InvalidArgument(shape + " is not in a native layout");
  const int64_t col_unit = IsKLayout(native->layout) ? kSuperCols : kGroupCols;
  if (n_rows <= 0 || n_cols <= 0 || n_rows % kTileRows != 0 || n_cols % col_unit != 0) {
    return InvalidArgument("cannot map a " + shape +
                           " (rows must be a multiple of 16, columns of " +
                           std::to_string(col_unit) + ")");
  }
  if (reinterpret_cast<uintptr_t>(data) % 32 != 0) {
    return InvalidArgument("the data of a " + shape + " is not 32-byte aligned");
  }
  PackedMatrix w;
  SetGeometry(native->layout, native->has_min, n_rows, n_cols, &w);
  if (w.bytes() != bytes) {
    return InvalidArgument("a " + shape + " takes " + std::to_string(w.bytes()) + " bytes, not " +
                           std::to_string(bytes));
  }
  // Not owned: the deleter does nothing; the file mapping keeps the bytes.
  w.data = {const_cast<uint8_t*>(data), [](uint8_t*) {}};
  *out = std::move(w);
  return Status::Ok();
}

float PackedWeight(const PackedMatrix& w, int64_t row, int64_t col) {
  const int64_t tile = row / kTileRows, lane = row % kTileRows;
  const int64_t g = col / kGroupCols, c = col % kGroupCols;
  if (IsK16Layout(w.layout)) {
    const uint8_t* sg = w.tile(tile) + static_cast<size_t>(g / kSuperGroups) * w.super_bytes;
    const uint8_t* gq = sg + KHeaderBytes(w.layout) + (g % kSuperGroups) * KGroupBytes(w.layout);
    const bool q6 = w.layout == PackedLayout::kQ6Kx16;
    const uint8_t crumbs = gq[(q6 ? kQ6CrumbOffset : 0) + (c / 16) * 64 + lane * 4 + c % 4];
    const int q = (crumbs >> (2 * ((c / 4) % 4))) & 3;
    const int b = static_cast<int>(2 * (g % kSuperGroups) + c / 16);  // sub-block of 16
    const uint8_t scb = sg[K16ScaleOffset(w.layout) + 16 * b + lane];
    uint16_t d;
    std::memcpy(&d, sg + 2 * lane, 2);
    if (q6) {
      const uint8_t nibbles = gq[(c / 8) * 64 + lane * 4 + c % 4];
      const int low = c % 8 < 4 ? (nibbles & 0x0F) : (nibbles >> 4);
      // As DequantizeRowQ6_K: (d * sc) * (q - 32), both products exact.
      const float dl = Fp16ToFp32(d) * static_cast<float>(static_cast<int8_t>(scb));
      return dl * static_cast<float>((low | q << 4) - 32);
    }
    if (w.layout == PackedLayout::kQ3Kx16) {
      const int high = (gq[kQ3HighOffset + lane * 4 + c % 4] >> (c / 4)) & 1;
      // As DequantizeRowQ3_K: (d * sc) * (q - 4), both products exact.
      const float dl = Fp16ToFp32(d) * static_cast<float>(static_cast<int8_t>(scb));
      return dl * static_cast<float>(q + 4 * high - 4);
    }
    // As DequantizeRowQ2_K: (d * sc) * q - dmin * m, one rounding.
    uint16_t dmin;
    std::memcpy(&dmin, sg + kKDminOffset + 2 * lane, 2);
    const float dl = Fp16ToFp32(d) * static_cast<float>(scb & 0x0F);
    const float ml = Fp16ToFp32(dmin) * static_cast<float>(scb >> 4);
    return dl * static_cast<float>(q) - ml;
  }
  if (IsKLayout(w.layout)) {
    const uint8_t* sg = w.tile(tile) + static_cast<size_t>(g / kSuperGroups) * w.super_bytes;
    const int j = static_cast<int>(g % kSuperGroups);
    uint16_t d, dmin;
    std::memcpy(&d, sg + 2 * lane, 2);
    std::memcpy(&dmin, sg + kKDminOffset + 2 * lane, 2);
    const uint8_t* gq = sg + KHeaderBytes(w.layout) + j * KGroupBytes(w.layout);
    const uint8_t byte = gq[(c / 8) * 64 + lane * 4 + c % 4];
    int q = c % 8 < 4 ? (byte & 0x0F) : (byte >> 4);
    if (w.layout == PackedLayout::kQ5Kx16) q |= Q5HighBit(gq + 256, lane, c) << 4;
    // As DequantizeRowQ4_K / Q5_K: d * sc and dmin * m exact, (d * sc) * q
    // exact, one rounding in the subtraction.
    const float ds = Fp16ToFp32(d) * static_cast<float>(sg[kKScaleOffset + 16 * j + lane]);
    const float dm = Fp16ToFp32(dmin) * static_cast<float>(sg[kKMinOffset + 16 * j + lane]);
    return ds * static_cast<float>(q) - dm;
  }
  GroupView v = View(w, w.data.get(), tile, g);
  const float d = Fp16ToFp32(v.d[lane]);
  if (w.layout == PackedLayout::kQ8x16) {
    return static_cast<float>(static_cast<int8_t>(v.qs[(c / 4) * 64 + lane * 4 + c % 4])) * d;
  }
  const int s = static_cast<int>(c / 8), k = static_cast<int>(c % 8);
  const uint8_t byte = v.qs[s * 64 + lane * 4 + (k % 4)];
  int q = k < 4 ? (byte & 0x0F) : (byte >> 4);
  // As DequantizeRowIQ4_NL: d * grid[q], exact (an 11-bit times a 7-bit
  // significand).
  if (w.layout == PackedLayout::kIQ4x16) return d * static_cast<float>(kIq4Grid[q]);
  if (v.qh != nullptr) q |= Q5HighBit(v.qh, lane, c) << 4;
  const float m =
      w.has_min ? Fp16ToFp32(v.m[lane]) : static_cast<float>(PackedOffset(w.layout)) * d;
  return static_cast<float>(q) * d + m;
}

}  // namespace ember
