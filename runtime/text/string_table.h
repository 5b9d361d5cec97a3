// Many short strings — a vocabulary's token texts, 32k to 150k of them — in
// one byte pool with 4-byte offsets: about 4 bytes per string plus its bytes,
// against 32 per std::string (and a heap block past 15 bytes) in a
// std::vector<std::string>. SmolLM2's 49k tokens: 0.5 MB instead of 1.6 MB.
// Also a hash index over such a table (text -> first index holding it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

class StringTable {
 public:
  // Room for n strings of `bytes` bytes in all without reallocating.
  void Reserve(size_t n, size_t bytes);
  // Appends s as string size(). False, and nothing added, when the pool would
  // pass 4 GiB (offsets are 32-bit).
  bool Add(std::string_view s);
  std::string_view operator[](size_t i) const {
    return std::string_view(pool_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]);
  }
  size_t size() const { return offsets_.size() - 1; }
  bool empty() const { return size() == 0; }
  // Bytes of all the strings.
  size_t text_bytes() const { return pool_.size(); }
  // Drops every string and frees the memory.
  void Clear();
  // Gives back the room reserved beyond what is held.
  void ShrinkToFit() {
    pool_.shrink_to_fit();
    offsets_.shrink_to_fit();
  }
  // Heap bytes held (for tests and memory accounting).
  size_t bytes() const { return pool_.capacity() + offsets_.capacity() * sizeof(uint32_t); }

 private:
  std::string pool_;                  // every string, back to back
  std::vector<uint32_t> offsets_{0};  // [size + 1]: string i is pool_[offsets_[i], offsets_[i + 1])
};

// text -> the first index i of `table` with table[i] == text. Holds only its
// hash slots (4 bytes each, at most half full): the texts stay in the table,
// which every call passes and which must be the one Build saw, unchanged.
class StringTableIndex {
 public:
  void Build(const StringTable& table);
  // The first index holding key, or -1.
  int32_t Find(const StringTable& table, std::string_view key) const;
  size_t bytes() const { return slots_.capacity() * sizeof(uint32_t); }

 private:
  // The slot of key, or the empty slot it would take.
  size_t Slot(const StringTable& table, std::string_view key) const;
  std::vector<uint32_t> slots_;  // index + 1, or 0 for empty; size a power of two
};

}  // namespace ember
