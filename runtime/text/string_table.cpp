#include "runtime/text/string_table.h"

#include <functional>
#include <limits>

namespace ember {

void StringTable::Reserve(size_t n, size_t bytes) {
  pool_.reserve(bytes);
  offsets_.reserve(n + 1);
}

bool StringTable::Add(std::string_view s) {
  if (s.size() > std::numeric_limits<uint32_t>::max() - pool_.size()) return false;
  pool_.append(s);
  offsets_.push_back(static_cast<uint32_t>(pool_.size()));
  return true;
}

void StringTable::Clear() {
  std::string().swap(pool_);
  std::vector<uint32_t>(1, 0).swap(offsets_);
}

void StringTableIndex::Build(const StringTable& table) {
  size_t n_slots = 16;
  while (n_slots < 2 * table.size()) n_slots *= 2;
  slots_.assign(n_slots, 0);
  for (size_t i = 0; i < table.size(); ++i) {
    const size_t s = Slot(table, table[i]);
    if (slots_[s] == 0) slots_[s] = static_cast<uint32_t>(i + 1);  // the first index wins
  }
}

size_t StringTableIndex::Slot(const StringTable& table, std::string_view key) const {
  const size_t mask = slots_.size() - 1;
  size_t s = std::hash<std::string_view>{}(key)&mask;
  while (slots_[s] != 0 && table[slots_[s] - 1] != key) s = (s + 1) & mask;
  return s;
}

int32_t StringTableIndex::Find(const StringTable& table, std::string_view key) const {
  if (slots_.empty()) return -1;
  const uint32_t e = slots_[Slot(table, key)];
  return e == 0 ? -1 : static_cast<int32_t>(e - 1);
}

}  // namespace ember
