// ember's native weight layouts (docs/DESIGN.md §4): integer groups of 32
// columns with fp16 scales (and mins), 16 rows interleaved so that one 64-byte
// load feeds 16 output rows.
//
// Matrix W [n_rows, n_cols] (n_cols % 32 == 0). Rows are padded to a multiple
// of 16 with zero rows. Storage: for each tile of 16 rows, for each group of 32
// columns, one TileGroup, contiguous, so a thread streams its tiles linearly.
//
// Q4x16 TileGroup (int4, value = q * d + m, q in [0, 15]):
//   uint8  qs[4][64]  sub-chunk s covers columns 8s .. 8s+7 of the group. In it,
//                     bytes 4r .. 4r+3 belong to row r; byte b holds column 8s+b
//                     in its low nibble and column 8s+4+b in its high nibble.
//   fp16   d[16]      per-row scales
//   fp16   m[16]      per-row mins (only when has_min; else m = -8 d, as Q4_0)
// Q5x16 TileGroup (int5, value = q * d + m, q in [0, 31]): Q4x16's nibbles plus
// a plane of high bits, so 5-bit sources keep their 5.5 (6 with mins) bits:
//   uint8  qs[4][64]  as Q4x16: the low 4 bits of each quant
//   uint8  qh[64]     bit v of byte 4r + b is bit 4 of row r, column 4v + b.
//                     Unpacking sub-chunk s of qs gives two 64-byte vectors,
//                     columns 8s..8s+3 (low nibbles) and 8s+4..8s+7 (high
//                     nibbles): vectors v = 2s and 2s + 1, and bit v of qh[i]
//                     belongs to byte i of vector v, in every ISA's unpacking
//                     (as Q3Kx16's plane): a shift and a mask move a whole
//                     vector's high bits to bit 4.
//   fp16   d[16], m[16] (only when has_min; else m = -16 d, as Q5_0)
// IQ4x16 TileGroup (IQ4_NL / IQ4_XS kept at 4.5 bits: value = d * grid[q], q
// in [0, 15], grid = kIq4Grid (quant/blocks.h), the format's fixed int8 values
// in [-127, 113]), 288 bytes:
//   uint8  qs[4][64]  as Q4x16: the 4-bit grid indices
//   fp16   d[16]      per-row scales (IQ4_NL's d; IQ4_XS's d * (ls - 32))
//                     The kernels look the indices up in the grid (vpshufb,
//                     tbl) and multiply the int8 values as Q8x16's.
// Q8x16 TileGroup (int8, value = q * d):
//   int8   qs[8][64]  sub-chunk s covers columns 4s .. 4s+3; bytes 4r .. 4r+3
//                     are row r's four columns.
//   fp16   d[16]
//
// K layouts: Q4_K and Q5_K kept exact at their own scales. A tile's storage is
// a run of super-groups of 256 columns (a K-quant super-block: 8 groups of
// 32), each a header and then the 8 groups' quants, so the super-block's d
// and dmin are stored once and applied once:
// Q4Kx16 / Q5Kx16 super-group (value = d * sc_j * q - dmin * m_j for group j,
// q in [0, 15] / [0, 31]; Q4_K's / Q5_K's own numbers), 2368 / 2880 bytes:
//   fp16   d[16]      row r's super-block d          (offset 0)
//   fp16   dmin[16]   row r's super-block dmin       (offset 32)
//   uint8  sc[8][16]  sc[j][r]: row r's 6-bit scale of group j  (offset 64)
//   uint8  m[8][16]   m[j][r]: row r's 6-bit min of group j     (offset 192)
//   then group j = 0..7 at 320 + j * KGroupBytes: Q4x16's qs[4][64] (and for
//   Q5Kx16 Q5x16's qh[8] after them), the quants without scales.
// 148 / 180 bytes per row and 256 columns: 4.625 / 5.625 bits per weight
// (Q4_K's 4.5 and Q5_K's 5.5 plus a byte instead of 6 bits per scale and min).
// Q3Kx16 super-group (Q3_K: value = d * sc_b * (q - 4) for sub-block b of 16
// columns, q in [0, 7], sc_b Q3_K's 6-bit scale minus 32), 1824 bytes:
//   fp16   d[16]       row r's super-block d                        (offset 0)
//   int8   sc[16][16]  sc[b][r]: row r's scale of columns 16b..16b+15 (offset 32)
//   then group j = 0..7 at 288 + 192 j: the quants as 2-bit crumbs (the low
//   2 bits) and a plane of high bits:
//     uint8 qc[2][64]  bits 2k, 2k+1 of byte i of qc[c]: bits 0-1 of byte i
//                      of unpacked vector 4c + k (vectors as in Q5x16: v =
//                      columns 4v..4v+3, byte 4r + b = row r, column 4v + b)
//     uint8 qh[64]     bit v of byte i: bit 2 of byte i of unpacked vector v
// 114 bytes per row and 256 columns: 3.5625 bits per weight (Q3_K's 3.4375
// plus a byte instead of 6 bits per scale).
// Q2Kx16 super-group (Q2_K: value = d * sc_b * q - dmin * m_b, q in [0, 3],
// 4-bit sc_b and m_b per 16 columns), 1344 bytes:
//   fp16   d[16], dmin[16]                                   (offsets 0, 32)
//   uint8  scm[16][16]  scm[b][r] = sc_b | m_b << 4 of row r (Q2_K's bytes) (64)
//   then group j = 0..7 at 320 + 128 j: qc[2][64] as Q3Kx16's, the whole quant.
// 84 bytes per row and 256 columns: 2.625 bits per weight, Q2_K's own size.
// Q6Kx16 super-group (Q6_K: value = d * sc_b * (q - 32) for sub-block b of 16
// columns, q in [0, 63], sc_b Q6_K's int8 scale), 3360 bytes:
//   fp16   d[16]       row r's super-block d                        (offset 0)
//   int8   sc[16][16]  sc[b][r]: row r's scale of columns 16b..16b+15 (offset 32)
//   then group j = 0..7 at 288 + 384 j, the quants:
//     uint8 qs[4][64]  Q4x16's nibbles: the low 4 bits
//     uint8 qh[2][64]  the top 2 bits as crumbs, as Q3Kx16's qc: bits 2k,
//                      2k+1 of byte i of qh[c] are bits 4, 5 of byte i of
//                      unpacked vector 4c + k. qh[0] covers columns 0-15,
//                      qh[1] columns 16-31: one crumb vector per sub-block.
// 210 bytes per row and 256 columns: 6.5625 bits per weight, Q6_K's own size.
// (Until Q6Kx16, Q6x16 kept these planes, sc[2][16] and an fp16 d per row in
// every group of 32: 7 bits per weight. Its native type id is retired.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "platform/status.h"
#include "quant/ggml_type.h"

namespace ember {

constexpr int kTileRows = 16;
constexpr int kGroupCols = 32;

enum class PackedLayout {
  kQ4x16,   // int4 with scale (+ min)
  kQ5x16,   // int5 (int4 + a high-bit plane) with scale (+ min)
  kQ8x16,   // int8 with scale
  kIQ4x16,  // 4-bit indices into the IQ4 grid (int8 values) with scale
  kQ4Kx16,  // Q4_K: int4 in super-groups of 256 with 6-bit scales and mins per 32
  kQ5Kx16,  // Q5_K: int5 (Q5x16's planes) in Q4Kx16's super-groups
  kQ3Kx16,  // Q3_K: int3 (crumbs + a high-bit plane), int8 scales per 16, d per 256
  kQ2Kx16,  // Q2_K: int2 (crumbs), 4-bit scales and mins per 16, d and dmin per 256
  kQ6Kx16,  // Q6_K: int6 (int4 + a plane of 2-bit crumbs), int8 scales per 16, d per 256
};
constexpr int kPackedLayoutCount = 9;

// Whether a layout stores super-groups of 256 columns with a header (the K
// layouts) rather than self-contained TileGroups of 32.
constexpr bool IsKLayout(PackedLayout layout) {
  return layout == PackedLayout::kQ4Kx16 || layout == PackedLayout::kQ5Kx16 ||
         layout == PackedLayout::kQ3Kx16 || layout == PackedLayout::kQ2Kx16 ||
         layout == PackedLayout::kQ6Kx16;
}

// The K layouts whose header holds scales per 16 columns (sub-blocks) rather
// than per 32: Q3Kx16, Q2Kx16, Q6Kx16.
constexpr bool IsK16Layout(PackedLayout layout) {
  return layout == PackedLayout::kQ3Kx16 || layout == PackedLayout::kQ2Kx16 ||
         layout == PackedLayout::kQ6Kx16;
}

constexpr int kSuperCols = 256;  // columns of a K layout's super-group
constexpr int kSuperGroups = 8;  // groups of 32 in a super-group

// K layouts: bytes of a super-group's header, and of one group's quants.
constexpr size_t KHeaderBytes(PackedLayout layout) {
  return layout == PackedLayout::kQ3Kx16 || layout == PackedLayout::kQ6Kx16 ? 288 : 320;
}
constexpr size_t KGroupBytes(PackedLayout layout) {
  switch (layout) {
    case PackedLayout::kQ5Kx16:
      return 320;
    case PackedLayout::kQ3Kx16:
      return 192;
    case PackedLayout::kQ2Kx16:
      return 128;
    case PackedLayout::kQ6Kx16:
      return 384;
    default:
      return 256;
  }
}
constexpr size_t KSuperBytes(PackedLayout layout) {
  return KHeaderBytes(layout) + kSuperGroups * KGroupBytes(layout);
}
// Where the pieces of a K layout's header start: dmin (Q4Kx16, Q5Kx16,
// Q2Kx16), the scales and mins per 32 (Q4Kx16, Q5Kx16), the scales per 16
// (Q3Kx16's and Q6Kx16's int8 sc, Q2Kx16's scm).
constexpr size_t kKDminOffset = 32;
constexpr size_t kKScaleOffset = 64;
constexpr size_t kKMinOffset = 192;
constexpr size_t K16ScaleOffset(PackedLayout layout) {
  return layout == PackedLayout::kQ3Kx16 || layout == PackedLayout::kQ6Kx16 ? 32 : 64;
}
// Where a Q3Kx16 group's high-bit plane starts (after the crumbs).
constexpr size_t kQ3HighOffset = 128;

// Bytes of one TileGroup before its fp16 scales d[16]: the quants.
constexpr size_t PackedQuantBytes(PackedLayout layout) {
  switch (layout) {
    case PackedLayout::kQ4x16:
    case PackedLayout::kIQ4x16:
      return 256;
    case PackedLayout::kQ5x16:
      return 320;
    default:
      return 512;
  }
}

// Where a Q6Kx16 group's crumb planes start (after the nibbles).
constexpr size_t kQ6CrumbOffset = 256;

// The offset of a layout's unsigned quants without stored mins: value = (q +
// offset) * d (Q4_0: q - 8, Q5_0: q - 16, Q6_K: q - 32; Q8x16's quants are
// signed, and IQ4x16's grid values too: 0).
// Bit 4 of row `lane`, column c (0..31) of a Q5x16 / Q5Kx16 group, from its
// high-bit plane qh (above).
inline int Q5HighBit(const uint8_t* qh, int64_t lane, int64_t c) {
  return (qh[lane * 4 + c % 4] >> (c / 4)) & 1;
}

constexpr int PackedOffset(PackedLayout layout) {
  switch (layout) {
    case PackedLayout::kQ4x16:
      return -8;
    case PackedLayout::kQ5x16:
      return -16;
    case PackedLayout::kQ6Kx16:
      return -32;
    default:
      return 0;
  }
}

struct PackedMatrix {
  PackedLayout layout = PackedLayout::kQ4x16;
  bool has_min = false;  // Q4x16 and Q5x16 only
  int64_t n_rows = 0;
  int64_t n_cols = 0;
  int64_t n_tiles = 0;     // ceil(n_rows / 16)
  int64_t n_groups = 0;    // n_cols / 32
  size_t group_bytes = 0;  // bytes of one TileGroup (K layouts: of one group's quants)
  size_t super_bytes = 0;  // K layouts: bytes of one super-group (header + 8 groups); else 0
  size_t tile_bytes = 0;   // group_bytes * n_groups (K layouts: super_bytes * n_groups / 8)
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> data{nullptr, nullptr};

  const uint8_t* tile(int64_t t) const { return data.get() + static_cast<size_t>(t) * tile_bytes; }
  size_t bytes() const { return tile_bytes * static_cast<size_t>(n_tiles); }
};

// Size of one TileGroup (K layouts: of one group's quants, KGroupBytes).
size_t PackedGroupBytes(PackedLayout layout, bool has_min);

// Whether GGUF rows of `type` can be repacked into a native layout:
//   Q4_0, Q4_1 -> Q4x16 (Q4_1 with mins); Q4_K -> Q4Kx16;
//   Q5_0, Q5_1 -> Q5x16 (Q5_1 with mins); Q5_K -> Q5Kx16;
//   Q6_K -> Q6Kx16; Q3_K -> Q3Kx16; Q2_K -> Q2Kx16;
//   IQ4_NL, IQ4_XS -> IQ4x16;
//   Q8_0, F16, BF16, F32 -> Q8x16.
bool CanRepack(GgmlType type);

// Whether repacking `type` keeps every weight's GGUF dequantized value bit for
// bit (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL).
// The others are near-exact or lossy:
//   IQ4_XS: the per-32 scale d * (ls - 32) is rounded to fp16 (|error| <=
//     2^-11 * 127 |d (ls - 32)|, plus subnormals as above);
//   F16, BF16, F32 (with --repack int8): the group of 32 is requantized to int8,
//     |error| <= d / 2 with d = max|w| / 127 rounded up to fp16
//     (docs/FORMATS.md has the measured errors).
bool RepackIsExact(GgmlType type);

// The bytes Repack makes of an [n_rows, n_cols] matrix of `type` (rows padded
// to a multiple of 16), computed in 64-bit arithmetic so that a caller can
// check it against the address space before allocating: UINT64_MAX when even
// that overflows, 0 for a type or shape that cannot be repacked.
uint64_t RepackedBytes(GgmlType type, int64_t n_rows, int64_t n_cols);

// Repacks a GGUF matrix (n_rows rows of n_cols elements of `type`, contiguous)
// into `out`, exactly or within the bounds above. Errors: Unsupported when
// !CanRepack(type) and for a result larger than the address space
// (RepackedBytes); InvalidArgument for columns that are not whole blocks (or
// groups of 32), for weights that are not finite (requantized types; for the
// K layouts, a super-block d or dmin that is inf or nan), and for scales
// beyond fp16.
//
// `consumed`, when given, is called as the rows are read, in order, with the
// number of rows of `src` read so far (about every MiB of source, and once
// with n_rows at the end): rows below it are not read again, so a caller
// that maps a file can drop their pages while the rest repacks. A large
// matrix then costs its packed copy plus about a MiB of source at the peak
// of loading, not both whole (Gemma 3's 171 MiB tied output).
//
// `storage`, when given, is where the packed bytes go: RepackedBytes(type,
// n_rows, n_cols) bytes, 64-byte aligned, owned by the caller and outliving
// *out (a model's one allocation for all its matrices, platform/
// streamed_memory.h). Without it, *out owns memory of its own.
using RepackConsumedFn = std::function<void(int64_t rows_read)>;
Status Repack(GgmlType type, const uint8_t* src, int64_t n_rows, int64_t n_cols, PackedMatrix* out,
              const RepackConsumedFn& consumed = {}, uint8_t* storage = nullptr);

// The GGUF type that stores the layout `type` repacks to (Q4_0 -> kEmberQ4x16,
// Q4_1 -> kEmberQ4x16Min, Q5_0 -> kEmberQ5x16, Q5_1 -> kEmberQ5x16Min, Q4_K ->
// kEmberQ4Kx16, Q5_K -> kEmberQ5Kx16, Q3_K -> kEmberQ3Kx16, Q2_K ->
// kEmberQ2Kx16, Q6_K -> kEmberQ6Kx16, IQ4_NL and IQ4_XS -> kEmberIQ4x16, the rest
// -> kEmberQ8x16); requires CanRepack.
GgmlType NativeTypeFor(GgmlType type);
bool IsNativeType(GgmlType type);

// Wraps a native-layout tensor as stored in a file (`bytes` long, tile-major,
// as Repack lays it out) without copying: `out` points into `data`, which must
// outlive it and be 32-byte aligned (the AVX2 kernels load aligned). Errors:
// InvalidArgument for a type that is not native, rows that are not a multiple
// of 16, columns that are not a multiple of 32 (of 256 for the K layouts), a
// size that does not match, misaligned data.
Status PackedView(GgmlType type, const uint8_t* data, size_t bytes, int64_t n_rows, int64_t n_cols,
                  PackedMatrix* out);

// One weight back as float (for tests and the reference kernels).
float PackedWeight(const PackedMatrix& w, int64_t row, int64_t col);

}  // namespace ember
