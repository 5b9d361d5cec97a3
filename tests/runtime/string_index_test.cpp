// StringIndex against std::unordered_map on the same keys.
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/text/string_index.h"
#include "runtime/text/string_table.h"

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

TEST_CASE("string table: holds every string, and its index finds the first holder", "[tokenizer]") {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> len(0, 20), byte(0, 255);
  std::vector<std::string> texts;
  for (int i = 0; i < 30000; ++i) {
    std::string t(static_cast<size_t>(len(rng)), '\0');
    for (char& c : t) c = static_cast<char>(byte(rng));
    texts.push_back(t);
  }
  texts.push_back(texts[7]);  // a duplicate: the index gives the first
  texts.push_back("");        // an empty string is a string like any other
  StringTable table;
  table.Reserve(texts.size() / 2, 1000);  // grows past what was reserved
  for (const std::string& t : texts) REQUIRE(table.Add(t));
  REQUIRE(table.size() == texts.size());
  size_t total = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    REQUIRE(table[i] == texts[i]);
    total += texts[i].size();
  }
  CHECK(table.text_bytes() == total);
  table.ShrinkToFit();
  CHECK(table.bytes() < total + 5 * texts.size());  // 4-byte offsets, no per-string header

  StringTableIndex index;
  CHECK(index.Find(table, texts[0]) == -1);  // not built yet
  index.Build(table);
  std::unordered_map<std::string, int32_t> first;
  for (size_t i = 0; i < texts.size(); ++i) first.emplace(texts[i], static_cast<int32_t>(i));
  for (const auto& [t, i] : first) REQUIRE(index.Find(table, t) == i);
  CHECK(index.Find(table, texts.back()) == first.at(""));
  CHECK(index.Find(table, texts[texts.size() - 2]) == 7);
  CHECK(index.Find(table, std::string(21, 'x')) == -1);  // longer than any text
  CHECK(index.bytes() <= 4 * 4 * texts.size());

  table.Clear();
  CHECK(table.empty());
  CHECK(table.text_bytes() == 0);
}
