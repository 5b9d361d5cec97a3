// libFuzzer target: the GGUF reader and model loading on hostile files.
//
// Input: a GGUF file image. It is parsed from memory (GgufFile::Parse: the
// header, the metadata, the tensor infos) and every key is read back through
// the typed getters; every tensor's data must lie inside the input. Then the
// same bytes are written to a scratch file and loaded as a model
// (Model::Load: the architecture's keys in runtime/arch, the tokenizer, the
// tensors' shapes, types and sizes, repacking), first vocab-only, then whole;
// a model that loads gets a session of 8 tokens and decodes two. Any outcome
// is fine except a crash, a sanitizer report, a leak or a hang: a bad file is
// an error status.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_models.h"
#include "runtime/gguf/gguf.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"

namespace {

void ReadBack(const ember::GgufFile& f, const uint8_t* data, size_t size) {
  for (const ember::GgufKv& kv : f.kvs()) {
    std::string s;
    uint64_t u = 0;
    double d = 0;
    (void)f.GetString(kv.key, &s);
    (void)f.GetUint(kv.key, &u);
    (void)f.GetFloat(kv.key, &d);
    (void)f.GetBoolOr(kv.key, false);
    if (f.Find(kv.key) == nullptr) std::abort();  // every parsed key is found
  }
  for (const ember::GgufTensorInfo& t : f.tensors()) {
    if (t.data < data || t.n_bytes > size || t.data + t.n_bytes > data + size) std::abort();
    if (t.n_bytes > 0) {
      volatile uint8_t first = t.data[0], last = t.data[t.n_bytes - 1];  // ASan checks these
      (void)first;
      (void)last;
    }
    if (f.FindTensor(t.name) == nullptr) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<ember::GgufFile> parsed;
  if (!ember::GgufFile::Parse(data, size, &parsed).ok()) return 0;
  ReadBack(*parsed, data, size);

  static const std::string path = ember::fuzz::ScratchDir() + "/input.gguf";
  ember::fuzz::WriteBytes(path, data, size);
  std::unique_ptr<ember::Model> model;
  if (!ember::Model::Load(path, nullptr, &model, /*vocab_only=*/true).ok()) return 0;
  const ember::Tokenizer& tok = model->tokenizer();
  const std::vector<int32_t> ids = tok.Encode("Hello world <s>", true, true);
  for (const int32_t id : ids) {
    if (id < 0 || id >= tok.n_vocab()) std::abort();
  }
  (void)tok.Decode(ids, true);
  model.reset();
  if (!ember::Model::Load(path, nullptr, &model).ok()) return 0;
  ember::SessionParams sp;
  sp.n_ctx = 8;
  sp.n_threads = 1;
  sp.n_threads_batch = 1;
  sp.n_batch = 8;
  sp.n_keep = 1;
  std::unique_ptr<ember::Session> session;
  if (!ember::Session::Create(*model, sp, &session).ok()) return 0;
  const int32_t n_vocab = model->tokenizer().n_vocab();
  if (session->Decode({0, n_vocab - 1}).ok() &&
      session->logits().size() != static_cast<size_t>(n_vocab)) {
    std::abort();
  }
  return 0;
}
