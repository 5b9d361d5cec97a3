// Resource limits, each a clear error before anything is allocated: a
// context whose KV cache does not fit in memory (Session::Plan/CheckMemory),
// tensors larger than the address space (the 32-bit path, checked on any host
// through the limit parameter), and a model file that shrinks while it is
// mapped (refused at the end of loading) or read into memory (unaffected).
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

#include "platform/memory_info.h"
#include "runtime/gguf/gguf.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

constexpr uint64_t k32Bit = 0xFFFFFFFFu;

// A GGUF whose header gives a tensor more bytes than 32 bits can count:
// [65536, 65536] F32 is 16 GiB, backed by 32 bytes of data.
std::vector<uint8_t> HugeTensorFile() {
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.AddRawTensor("blk.0.ffn_up.weight", static_cast<uint32_t>(GgmlType::kF32), {65536, 65536},
                 std::vector<uint8_t>(32));
  return w.Serialize();
}

std::string CopyOfTinyModel(const std::string& name) {
  const std::string path = test::TempPath(name);
  const std::string bytes = test::ReadFile(test::DefaultTinyModel());
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

SessionParams Params(int64_t n_ctx) {
  SessionParams p;
  p.n_ctx = n_ctx;
  p.n_threads = 1;
  p.n_threads_batch = 1;
  return p;
}

}  // namespace

TEST_CASE("limits: a tensor larger than a 32-bit address space is refused by name", "[limits]") {
  const std::vector<uint8_t> b = HugeTensorFile();
  std::unique_ptr<GgufFile> f;
  Status s = GgufFile::Parse(b.data(), b.size(), &f, k32Bit);
  CHECK(s.code() == Code::kUnsupported);
  CHECK(s.message().find("tensor 'blk.0.ffn_up.weight' (info at byte offset ") == 0);
  CHECK(s.message().find("its 17179869184 bytes ([65536, 65536] F32) do not fit in this "
                         "process's address space (4294967295 bytes: size_t is 32 bits)") !=
        std::string::npos);
  CHECK(f == nullptr);
  // On a 64-bit host the same header is a tensor past the end of the file.
  s = GgufFile::Parse(b.data(), b.size(), &f);
  INFO(s.message());
  if (kAddressSpaceLimit > k32Bit) {
    CHECK(s.code() == Code::kBadFormat);
    CHECK(s.message().find("lies past the end of the file") != std::string::npos);
  }
  // Dimensions whose product overflows 64 bits stay an error of their own.
  GgufWriter w;
  w.AddRawTensor("t", static_cast<uint32_t>(GgmlType::kF32), {uint64_t{1} << 32, uint64_t{1} << 32},
                 {});
  const std::vector<uint8_t> b2 = w.Serialize();
  s = GgufFile::Parse(b2.data(), b2.size(), &f, k32Bit);
  CHECK(s.message().find("tensor 't' (info at byte offset ") == 0);
  CHECK(s.message().find("dimensions overflow") != std::string::npos);
}

TEST_CASE("limits: Model::Load names the tensor that does not fit, and keeps nothing", "[limits]") {
  const std::string path = test::TempPath("huge_tensor.gguf");
  {
    const std::vector<uint8_t> b = HugeTensorFile();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  LoadOptions o;
  o.address_limit = k32Bit;
  std::unique_ptr<Model> m;
  const Status s = Model::Load(path, o, nullptr, &m);
  CHECK(s.code() == Code::kUnsupported);
  CHECK(s.message().find(path + ": tensor 'blk.0.ffn_up.weight'") == 0);
  CHECK(s.message().find("do not fit in this process's address space") != std::string::npos);
  CHECK(m == nullptr);
  // A file larger than the limit is refused before it is mapped.
  o.address_limit = 64;
  const Status t = Model::Load(path, o, nullptr, &m);
  CHECK(t.code() == Code::kUnsupported);
  CHECK(t.message().find("more than this process can address (64 bytes)") != std::string::npos);
}

TEST_CASE("limits: a mapped model file that shrinks while loading is refused", "[limits]") {
  // 64 bytes appended to the file and 32 of them cut during loading: the
  // weights are intact (no page past the end is read), but the file is not
  // what was mapped, and the load says so.
  const std::string path = CopyOfTinyModel("shrinking.gguf");
  std::ofstream(path, std::ios::binary | std::ios::app) << std::string(64, '\0');
  const off_t size = static_cast<off_t>(test::ReadFile(path).size());
  LoadOptions o;
  o.map_mode = MapMode::kMap;
  bool cut = false;
  auto progress = [&](float) {
    if (!cut) cut = truncate(path.c_str(), size - 32) == 0;
    return true;
  };
  std::unique_ptr<Model> m;
  const Status s = Model::Load(path, o, progress, &m);
  REQUIRE(cut);
  CHECK(s.code() == Code::kIoError);
  CHECK(s.message() == "'" + path + "' shrank from " + std::to_string(size) + " to " +
                           std::to_string(size - 32) +
                           " bytes while it was mapped (another process truncated or rewrote it "
                           "in place); load it again once it is complete, or with --no-mmap (a "
                           "copy)");
  CHECK(m == nullptr);
}

TEST_CASE("limits: a model read into memory runs on after its file is truncated", "[limits]") {
  const std::string path = CopyOfTinyModel("truncated_after_copy.gguf");
  LoadOptions o;
  o.map_mode = MapMode::kCopy;
  std::unique_ptr<Model> m;
  const Status s = Model::Load(path, o, nullptr, &m);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(m->gguf().copied());
  REQUIRE(truncate(path.c_str(), 0) == 0);
  std::string meta;
  CHECK(m->gguf().GetString("general.architecture", &meta).ok());  // the header stays
  CHECK(meta == "llama");
  // Same logits as the model loaded by mapping a pristine copy.
  std::unique_ptr<Session> a = test::CreateSessionOrFail(*m, Params(32));
  const std::vector<int32_t> tokens = test::RandomTokens(12, 7);
  REQUIRE(a->Decode(tokens).ok());
  std::unique_ptr<Model> mapped = test::LoadModelOrFail();
  std::unique_ptr<Session> b = test::CreateSessionOrFail(*mapped, Params(32));
  REQUIRE(b->Decode(tokens).ok());
  CHECK(a->logits() == b->logits());
}

TEST_CASE("limits: a tied embedding read as stored survives a copy's releases", "[limits]") {
  // IQ4_XS repacks near-exactly: the tied output is repacked and the
  // embedding's rows are read as stored, from the copy whose other tensors
  // were released.
  test::TinyModelSpec spec;
  spec.n_embd = 256;
  spec.n_ff = 256;
  spec.weight_type = GgmlType::kIQ4_XS;
  const std::string path = test::TempPath("iq4xs_tied.gguf");
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  LoadOptions copy;
  copy.map_mode = MapMode::kCopy;
  std::unique_ptr<Model> a, b;
  REQUIRE(Model::Load(path, copy, nullptr, &a).ok());
  REQUIRE(Model::Load(path, nullptr, &b).ok());
  std::unique_ptr<Session> sa = test::CreateSessionOrFail(*a, Params(32));
  std::unique_ptr<Session> sb = test::CreateSessionOrFail(*b, Params(32));
  const std::vector<int32_t> tokens = test::RandomTokens(8, 3);
  REQUIRE(sa->Decode(tokens).ok());
  REQUIRE(sb->Decode(tokens).ok());
  CHECK(sa->logits() == sb->logits());
}

TEST_CASE("limits: the session plan is what the session allocates", "[limits]") {
  std::unique_ptr<Model> m = test::LoadModelOrFail();
  for (KvType type : {KvType::kF16, KvType::kQ8, KvType::kF32}) {
    SessionParams p = Params(200);
    p.kv_type = type;
    SessionPlan plan;
    REQUIRE(Session::Plan(*m, p, &plan).ok());
    std::unique_ptr<Session> s = test::CreateSessionOrFail(*m, p);
    CHECK(plan.kv_bytes == s->kv_bytes());
    CHECK(plan.n_ctx == 200);
    CHECK(plan.scratch_bytes > 0);
  }
  // Gemma 3's windowed layers get rings of their own: the plan counts them.
  std::unique_ptr<Model> g = test::LoadModelOrFail(test::BuildArchModel("gemma3"));
  SessionParams p = Params(256);
  p.n_batch = 16;
  SessionPlan plan;
  REQUIRE(Session::Plan(*g, p, &plan).ok());
  CHECK(plan.window_ring);
  CHECK(plan.kv_bytes == test::CreateSessionOrFail(*g, p)->kv_bytes());
}

TEST_CASE("limits: a session over max_memory is refused before allocating", "[limits]") {
  std::unique_ptr<Model> m = test::LoadModelOrFail();
  SessionParams p = Params(4096);
  SessionPlan plan;
  REQUIRE(Session::Plan(*m, p, &plan).ok());
  const uint64_t needed = plan.total_bytes();
  p.max_memory = needed - 1;
  std::unique_ptr<Session> s;
  const Status st = Session::Create(*m, p, &s);
  CHECK(st.code() == Code::kOutOfMemory);
  CHECK(s == nullptr);
  CHECK(st.message() ==
        "a context of 4096 tokens needs " + FormatBytes(needed) + " (" + std::to_string(needed) +
            " bytes: KV cache " + FormatBytes(plan.kv_bytes) + ", scratch " +
            FormatBytes(plan.scratch_bytes) + "), more than the " + FormatBytes(needed - 1) + " (" +
            std::to_string(needed - 1) +
            " bytes) it may take: the limit given as max_memory (--max-memory); a smaller "
            "context or a q8 KV cache needs less");
  p.max_memory = needed;
  CHECK(Session::Create(*m, p, &s).ok());
}

TEST_CASE("limits: by default the machine's available memory is the limit", "[limits]") {
  SessionPlan plan;
  plan.n_ctx = 1000000;
  plan.kv_bytes = uint64_t{24} << 30;
  plan.scratch_bytes = uint64_t{40} << 20;
  MemoryBudget machine;
  machine.bytes = uint64_t{8} << 30;
  machine.source = "MemAvailable in /proc/meminfo";
  const Status s = Session::CheckMemory(plan, 0, machine);
  CHECK(s.code() == Code::kOutOfMemory);
  CHECK(s.message() ==
        "a context of 1000000 tokens needs 24.0 GiB (25811746816 bytes: KV cache 24.0 GiB, "
        "scratch 40.0 MiB), more than the 8.0 GiB (8589934592 bytes) it may take: MemAvailable "
        "in /proc/meminfo; a smaller context or a q8 KV cache needs less");
  // An explicit limit replaces the machine's (a machine with swap).
  CHECK(Session::CheckMemory(plan, uint64_t{32} << 30, machine).ok());
  machine.bytes = UINT64_MAX;  // nothing known
  CHECK(Session::CheckMemory(plan, 0, machine).ok());
}

TEST_CASE("limits: a context larger than this machine's memory fails cleanly", "[limits]") {
  // A tiny model with wide KV heads: 2 layers x 8 heads x 512 dims, 32 KiB of
  // f16 KV cache per token, 512 GiB at the largest context.
  test::TinyModelSpec spec;
  spec.n_head = 8;
  spec.n_head_kv = 8;
  spec.head_dim = 512;
  const std::string path = test::TempPath("wide_kv.gguf");
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  std::unique_ptr<Model> m = test::LoadModelOrFail(path);
  const SessionParams p = Params(int64_t{1} << 24);
  SessionPlan plan;
  REQUIRE(Session::Plan(*m, p, &plan).ok());
  const MemoryBudget machine = AvailableMemory();
  if (machine.bytes >= plan.total_bytes()) EMBER_SKIP("this machine has " + machine.source);
  std::unique_ptr<Session> s;
  const Status st = Session::Create(*m, p, &s);
  CHECK(st.code() == Code::kOutOfMemory);
  CHECK(st.message().find("a context of 16777216 tokens needs 5") == 0);
  CHECK(st.message().find(machine.source) != std::string::npos);
  CHECK(s == nullptr);
}
