#include "runtime/gguf/gguf.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "runtime/gguf/gguf_writer.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::vector<uint8_t> SmallFile() {
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.SetUint32("llama.block_count", 2);
  w.SetFloat32("llama.rope.freq_base", 10000.0f);
  w.SetBool("tokenizer.ggml.add_bos_token", true);
  w.SetStringArray("tokenizer.ggml.tokens", {"a", "b", "<s>"});
  w.SetInt32Array("ints", {1, -2, 3});
  float data[64];
  for (int i = 0; i < 64; ++i) data[i] = static_cast<float>(i);
  REQUIRE(w.AddTensor("t0", GgmlType::kF32, {16, 4}, data, sizeof(data)).ok());
  REQUIRE(w.AddTensor("t1", GgmlType::kF32, {8}, data, 32).ok());
  return w.Serialize();
}

Status ParseBytes(const std::vector<uint8_t>& b) {
  std::unique_ptr<GgufFile> f;
  return GgufFile::Parse(b.data(), b.size(), &f);
}

}  // namespace

TEST_CASE("gguf: writer output parses back with every value", "[gguf]") {
  std::vector<uint8_t> b = SmallFile();
  std::unique_ptr<GgufFile> f;
  Status s = GgufFile::Parse(b.data(), b.size(), &f);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(f->version() == 3);
  std::string arch;
  REQUIRE(f->GetString("general.architecture", &arch).ok());
  CHECK(arch == "llama");
  CHECK(f->GetUintOr("llama.block_count", 0) == 2);
  CHECK(f->GetFloatOr("llama.rope.freq_base", 0) == 10000.0);
  CHECK(f->GetBoolOr("tokenizer.ggml.add_bos_token", false));
  const GgufValue* toks = f->Find("tokenizer.ggml.tokens");
  REQUIRE(toks != nullptr);
  REQUIRE(toks->items.size() == 3);
  CHECK(toks->items[2].str == "<s>");
  const GgufValue* ints = f->Find("ints");
  REQUIRE(ints->items.size() == 3);
  CHECK(ints->items[1].i == -2);
  const GgufTensorInfo* t0 = f->FindTensor("t0");
  REQUIRE(t0 != nullptr);
  CHECK(t0->ne[0] == 16);
  CHECK(t0->ne[1] == 4);
  float v;
  std::memcpy(&v, t0->data + 4 * 17, 4);
  CHECK(v == 17.0f);
  const GgufTensorInfo* t1 = f->FindTensor("t1");
  REQUIRE(t1 != nullptr);
  CHECK(t1->offset % 32 == 0);
}

TEST_CASE("gguf: nested arrays round-trip through CopyKv", "[gguf]") {
  // Build an array of arrays by hand: key, type 9, elem type 9, count 2, then
  // two int32 arrays.
  GgufWriter w;
  GgufKv kv;
  kv.key = "nested";
  kv.value.type = GgufType::kArray;
  kv.value.elem_type = GgufType::kArray;
  for (int a = 0; a < 2; ++a) {
    GgufValue inner;
    inner.type = GgufType::kArray;
    inner.elem_type = GgufType::kInt32;
    for (int k = 0; k <= a; ++k) {
      GgufValue x;
      x.type = GgufType::kInt32;
      x.i = 10 * a + k;
      inner.items.push_back(x);
    }
    kv.value.items.push_back(inner);
  }
  w.CopyKv(kv);
  auto b = w.Serialize();
  std::unique_ptr<GgufFile> f;
  REQUIRE(GgufFile::Parse(b.data(), b.size(), &f).ok());
  const GgufValue* v = f->Find("nested");
  REQUIRE(v != nullptr);
  REQUIRE(v->items.size() == 2);
  REQUIRE(v->items[1].items.size() == 2);
  CHECK(v->items[1].items[1].i == 11);
}

TEST_CASE("gguf: every truncation is a clean error", "[gguf][bad-input]") {
  std::vector<uint8_t> b = SmallFile();
  for (size_t n = 0; n < b.size(); ++n) {
    std::vector<uint8_t> cut(b.begin(), b.begin() + n);
    Status s = ParseBytes(cut);
    INFO("cut at " << n);
    REQUIRE(!s.ok());
    CHECK(!s.message().empty());
  }
}

TEST_CASE("gguf: bad magic, version, type, duplicates", "[gguf][bad-input]") {
  std::vector<uint8_t> b = SmallFile();
  SECTION("not a GGUF") {
    auto c = b;
    c[0] = 'X';
    Status s = ParseBytes(c);
    CHECK(s.code() == Code::kBadFormat);
    CHECK(s.message().find("not a GGUF") != std::string::npos);
  }
  SECTION("bad version") {
    auto c = b;
    c[4] = 7;
    Status s = ParseBytes(c);
    CHECK(s.code() == Code::kUnsupported);
    CHECK(s.message().find("version 7") != std::string::npos);
  }
  SECTION("unknown tensor type") {
    GgufWriter w;
    float d[4] = {};
    REQUIRE(w.AddTensor("x", GgmlType::kF32, {4}, d, 16).ok());
    auto c = w.Serialize();
    // The type field of the only tensor info sits 12 bytes before the end of
    // the infos: ... uint32 type, uint64 offset.
    size_t infos_end = 24 + 8 + 1 + 4 + 8;  // header + name + n_dims + dim
    std::memcpy(&c[infos_end], "\x63\x00\x00\x00", 4);
    Status s = ParseBytes(c);
    CHECK(s.code() == Code::kUnsupported);
    CHECK(s.message().find("unknown tensor type 99") != std::string::npos);
  }
  SECTION("duplicate key") {
    GgufWriter w;
    w.SetUint32("a", 1);
    w.SetUint32("a", 2);
    Status s = ParseBytes(w.Serialize());
    CHECK(s.message().find("duplicate GGUF metadata key 'a'") != std::string::npos);
  }
  SECTION("duplicate tensor") {
    GgufWriter w;
    float d[4] = {};
    REQUIRE(w.AddTensor("x", GgmlType::kF32, {4}, d, 16).ok());
    REQUIRE(w.AddTensor("x", GgmlType::kF32, {4}, d, 16).ok());
    Status s = ParseBytes(w.Serialize());
    CHECK(s.message().find("duplicate tensor 'x'") != std::string::npos);
  }
  SECTION("tensor data past the end") {
    auto c = b;
    c.resize(c.size() - 8);
    Status s = ParseBytes(c);
    CHECK(s.message().find("past the end of the file") != std::string::npos);
  }
  SECTION("huge array count") {
    GgufWriter w;
    w.SetInt32Array("arr", {1});
    auto c = w.Serialize();
    // header(24) + key(8+3) + type(4) + elem type(4) -> count
    uint64_t big = uint64_t{1} << 61;
    std::memcpy(&c[24 + 11 + 4 + 4], &big, 8);
    Status s = ParseBytes(c);
    CHECK(s.message().find("cannot fit") != std::string::npos);
  }
}

TEST_CASE("gguf: Open reports a missing file", "[gguf][bad-input]") {
  std::unique_ptr<GgufFile> f;
  Status s = GgufFile::Open("/nonexistent/model.gguf", &f);
  CHECK(s.code() == Code::kIoError);
  CHECK(s.message().find("/nonexistent/model.gguf") != std::string::npos);
}

TEST_CASE("gguf: ReleaseLargeArrays frees only arrays past the limit", "[gguf]") {
  std::vector<uint8_t> b = SmallFile();  // a 3-token array and a 3-int array
  std::unique_ptr<GgufFile> f;
  REQUIRE(GgufFile::Parse(b.data(), b.size(), &f).ok());
  f->ReleaseLargeArrays(3);  // nothing is longer than 3
  REQUIRE(f->Find("tokenizer.ggml.tokens")->items.size() == 3);
  f->ReleaseLargeArrays(2);
  const GgufValue* toks = f->Find("tokenizer.ggml.tokens");
  CHECK(toks->type == GgufType::kArray);
  CHECK(toks->elem_type == GgufType::kString);
  CHECK(toks->items.empty());
  CHECK(f->Find("ints")->items.empty());
  // Scalars and tensors are untouched.
  CHECK(f->GetUintOr("llama.block_count", 0) == 2);
  REQUIRE(f->FindTensor("t0") != nullptr);
}
