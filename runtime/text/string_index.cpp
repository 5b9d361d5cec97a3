#include "runtime/text/string_index.h"

#include <functional>

namespace ember {

void StringIndex::Reserve(size_t n, size_t key_bytes) {
  keys_.Reserve(n, key_bytes);
  values_.reserve(n);
  size_t want = 16;
  while (want < 2 * n) want *= 2;
  if (want > slots_.size()) Rehash(want);
}

size_t StringIndex::Slot(std::string_view key) const {
  const size_t mask = slots_.size() - 1;
  size_t s = std::hash<std::string_view>{}(key)&mask;
  while (slots_[s] != 0 && Key(slots_[s] - 1) != key) s = (s + 1) & mask;
  return s;
}

void StringIndex::Rehash(size_t n_slots) {
  slots_.assign(n_slots, 0);
  for (uint32_t e = 0; e < values_.size(); ++e) slots_[Slot(Key(e))] = e + 1;
}

bool StringIndex::Add(std::string_view key, int32_t value) {
  if (2 * (values_.size() + 1) > slots_.size()) Rehash(slots_.empty() ? 16 : 2 * slots_.size());
  const size_t s = Slot(key);
  if (slots_[s] != 0 || !keys_.Add(key)) return false;
  values_.push_back(value);
  slots_[s] = static_cast<uint32_t>(values_.size());
  return true;
}

int32_t StringIndex::Find(std::string_view key) const {
  if (slots_.empty()) return -1;
  const uint32_t e = slots_[Slot(key)];
  return e == 0 ? -1 : values_[e - 1];
}

size_t StringIndex::bytes() const {
  return keys_.bytes() + values_.capacity() * sizeof(int32_t) +
         slots_.capacity() * sizeof(uint32_t);
}

}  // namespace ember
