// StringIndex against std::unordered_map on the same keys.
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/string_index.h"

using namespace ember;

TEST_CASE("string index: finds every key, the first value wins, misses give -1", "[tokenizer]") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> len(0, 12), byte(0, 255);
  std::vector<std::string> keys;
  for (int i = 0; i < 20000; ++i) {
    std::string k(static_cast<size_t>(len(rng)), '\0');
    for (char& c : k) c = static_cast<char>(byte(rng));  // any bytes, NULs included
    keys.push_back(k);
  }
  keys.push_back(keys[5]);  // a duplicate: keeps the first value
  StringIndex index;
  std::unordered_map<std::string, int32_t> want;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool fresh = want.emplace(keys[i], static_cast<int32_t>(i)).second;
    REQUIRE(index.Add(keys[i], static_cast<int32_t>(i)) == fresh);  // grows from empty
  }
  CHECK(index.size() == want.size());
  for (const auto& [k, v] : want) REQUIRE(index.Find(k) == v);
  CHECK(index.Find(keys.back()) == 5);
  for (int i = 0; i < 2000; ++i) {
    const std::string miss =
        "miss" + std::to_string(i) + std::string(13, 'x');  // longer than any key
    REQUIRE(index.Find(miss) == -1);
  }
  CHECK(StringIndex().Find("") == -1);
  // Reserve up front, then the same content: no difference in what is found.
  StringIndex reserved;
  reserved.Reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) reserved.Add(keys[i], static_cast<int32_t>(i));
  for (const auto& [k, v] : want) REQUIRE(reserved.Find(k) == v);
  // Compact: well under the ~70 bytes per entry of an unordered_map.
  CHECK(reserved.bytes() < 40 * keys.size());
}
