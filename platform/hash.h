// A 64-bit FNV-1a hash: fingerprints (which model a saved session belongs to)
// and checksums (a state file read back as written). Not cryptographic: it
// catches accidents (another model, a truncated or corrupted file), not forgery.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember {

class Fnv1a64 {
 public:
  void Update(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001b3ull;
    }
  }
  template <typename T>
  void UpdateValue(const T& v) {
    Update(&v, sizeof(v));
  }
  uint64_t digest() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace ember
