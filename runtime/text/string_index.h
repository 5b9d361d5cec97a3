// A compact string -> int32 map for tokenizer tables (~49k-150k entries):
// keys live in a StringTable, the hash table holds 4-byte entry numbers
// (open addressing, linear probing, at most half full). About 16 bytes per
// entry plus the key bytes, against ~70 for std::unordered_map<std::string,
// int32_t> (a node, a std::string and a bucket each).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/text/string_table.h"

namespace ember {

class StringIndex {
 public:
  // Room for n keys of key_bytes in all without reallocating.
  void Reserve(size_t n, size_t key_bytes = 0);
  // Adds key -> value unless key is present already (the first value wins)
  // or the keys would pass 4 GiB; returns false in those cases.
  bool Add(std::string_view key, int32_t value);
  // The value of key, or -1.
  int32_t Find(std::string_view key) const;
  size_t size() const { return values_.size(); }
  // Heap bytes held (for tests and memory accounting).
  size_t bytes() const;

 private:
  std::string_view Key(uint32_t entry) const { return keys_[entry]; }
  size_t Slot(std::string_view key) const;  // the slot of key, or the empty slot it would take
  void Rehash(size_t n_slots);

  StringTable keys_;             // [size]
  std::vector<int32_t> values_;  // [size]
  std::vector<uint32_t> slots_;  // entry + 1, or 0 for empty; size a power of two
};

}  // namespace ember
