#include "quant/packed.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "quant/blocks.h"
#include "quant/fp16.h"

namespace ember {
namespace {

void FreeAligned(uint8_t* p) { std::free(p); }

uint8_t* AllocAligned(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<uint8_t*>(p);
}

// Where the pieces of a TileGroup sit.
struct GroupView {
  uint8_t* qs;
  uint16_t* d;
  uint16_t* m;  // nullptr without mins
};

GroupView View(const PackedMatrix& w, uint8_t* base, int64_t tile, int64_t group) {
  uint8_t* g = base + static_cast<size_t>(tile) * w.tile_bytes +
               static_cast<size_t>(group) * w.group_bytes;
  const size_t q_bytes = w.layout == PackedLayout::kQ4x16 ? 256 : 512;
  GroupView v{g, reinterpret_cast<uint16_t*>(g + q_bytes), nullptr};
  if (w.has_min) v.m = reinterpret_cast<uint16_t*>(g + q_bytes + 32);
  return v;
}

}  // namespace

size_t PackedGroupBytes(PackedLayout layout, bool has_min) {
  return layout == PackedLayout::kQ4x16 ? 256 + 32 + (has_min ? 32 : 0) : 512 + 32;
}

bool CanRepack(GgmlType type) {
  return type == GgmlType::kQ4_0 || type == GgmlType::kQ4_1 || type == GgmlType::kQ8_0;
}

Status Repack(GgmlType type, const uint8_t* src, int64_t n_rows, int64_t n_cols,
              PackedMatrix* out) {
  if (!CanRepack(type)) {
    return Unsupported(std::string("tensor type ") + GgmlTypeName(type) +
                       " has no native layout yet");
  }
  if (n_rows <= 0 || n_cols <= 0 || n_cols % kGroupCols != 0) {
    return InvalidArgument("cannot repack a [" + std::to_string(n_rows) + ", " +
                           std::to_string(n_cols) + "] matrix (columns must be a multiple of 32)");
  }
  PackedMatrix& w = *out;
  w.layout = type == GgmlType::kQ8_0 ? PackedLayout::kQ8x16 : PackedLayout::kQ4x16;
  w.has_min = type == GgmlType::kQ4_1;
  w.n_rows = n_rows;
  w.n_cols = n_cols;
  w.n_tiles = (n_rows + kTileRows - 1) / kTileRows;
  w.n_groups = n_cols / kGroupCols;
  w.group_bytes = PackedGroupBytes(w.layout, w.has_min);
  w.tile_bytes = w.group_bytes * static_cast<size_t>(w.n_groups);
  w.data = {AllocAligned(w.bytes()), FreeAligned};
  std::memset(w.data.get(), 0, w.bytes());  // padding rows: d = m = 0, q = 0
  const size_t row_bytes = GgmlRowBytes(type, static_cast<uint64_t>(n_cols));

  for (int64_t r = 0; r < n_rows; ++r) {
    const uint8_t* row = src + static_cast<size_t>(r) * row_bytes;
    const int64_t tile = r / kTileRows, lane = r % kTileRows;
    for (int64_t g = 0; g < w.n_groups; ++g) {
      GroupView v = View(w, w.data.get(), tile, g);
      uint8_t q[kGroupCols];  // unpacked quants of this row and group
      if (type == GgmlType::kQ8_0) {
        const auto* b = reinterpret_cast<const BlockQ8_0*>(row) + g;
        std::memcpy(q, b->qs, kGroupCols);
        v.d[lane] = b->d;
        for (int s = 0; s < 8; ++s) std::memcpy(v.qs + s * 64 + lane * 4, q + 4 * s, 4);
        continue;
      }
      const uint8_t* qs;
      if (type == GgmlType::kQ4_0) {
        const auto* b = reinterpret_cast<const BlockQ4_0*>(row) + g;
        qs = b->qs;
        v.d[lane] = b->d;
      } else {
        const auto* b = reinterpret_cast<const BlockQ4_1*>(row) + g;
        qs = b->qs;
        v.d[lane] = b->d;
        v.m[lane] = b->m;
      }
      for (int j = 0; j < 16; ++j) {  // GGUF: byte j = column j (low), column j + 16 (high)
        q[j] = qs[j] & 0x0F;
        q[j + 16] = qs[j] >> 4;
      }
      for (int s = 0; s < 4; ++s) {
        for (int b = 0; b < 4; ++b) {
          v.qs[s * 64 + lane * 4 + b] = static_cast<uint8_t>(q[8 * s + b] | (q[8 * s + 4 + b] << 4));
        }
      }
    }
  }
  return Status::Ok();
}

float PackedWeight(const PackedMatrix& w, int64_t row, int64_t col) {
  const int64_t tile = row / kTileRows, lane = row % kTileRows;
  const int64_t g = col / kGroupCols, c = col % kGroupCols;
  GroupView v = View(w, w.data.get(), tile, g);
  const float d = Fp16ToFp32(v.d[lane]);
  if (w.layout == PackedLayout::kQ8x16) {
    return static_cast<float>(static_cast<int8_t>(v.qs[(c / 4) * 64 + lane * 4 + c % 4])) * d;
  }
  const int s = static_cast<int>(c / 8), k = static_cast<int>(c % 8);
  const uint8_t byte = v.qs[s * 64 + lane * 4 + (k % 4)];
  const int q = k < 4 ? (byte & 0x0F) : (byte >> 4);
  const float m = w.has_min ? Fp16ToFp32(v.m[lane]) : -8.0f * d;
  return static_cast<float>(q) * d + m;
}

}  // namespace ember
