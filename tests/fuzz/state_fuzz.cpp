// libFuzzer target: session state files (Session::LoadState) on hostile
// bytes, into sessions of tiny models built in the target (a llama, and a
// gemma3 whose sliding-window layers keep rings of the last tokens).
//
// Input: byte 0 holds flags, the rest is the state file.
//   bit 0: the gemma3 model (else llama);
//   bit 1: overwrite the model fingerprint (bytes 12..19) with the model's,
//          so that mutations get past that check;
//   bit 2: overwrite the last 8 bytes with the right checksum, likewise;
//   bit 3: load into a fresh session (else one holding a prompt).
// A load either succeeds (then the session decodes one more token) or fails
// with the session unchanged: the same tokens, the same logits bit for bit,
// and a decode after it gives the logits it gave before the load. Besides
// that: no crash, sanitizer report, leak or hang.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_models.h"
#include "platform/hash.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"

namespace {

using ember::Session;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "state_fuzz: %s\n", what);
  std::abort();
}

// A model, a session on it, and what the session gives from a fixed start.
struct Fixture {
  std::unique_ptr<ember::Model> model;
  std::unique_ptr<Session> session;
  std::vector<int32_t> prompt;
  std::vector<float> after_prompt;  // logits after decoding the prompt
  std::vector<float> after_next;    // then after decoding kNext
  std::vector<float> fresh_next;    // logits of kNext in an empty session

  static constexpr int32_t kNext = 7;

  // The session back at its start: empty, or the prompt decoded.
  void Restore(bool fresh) {
    session->Reset();
    if (!fresh && !session->Decode(prompt).ok()) Fail("decoding the prompt failed");
  }
};

Fixture& Get(bool gemma) {
  static std::unique_ptr<Fixture> fixtures[2];
  std::unique_ptr<Fixture>& f = fixtures[gemma];
  if (f) return *f;
  f = std::make_unique<Fixture>();
  const std::string& path = ember::fuzz::TinyModelPath(gemma ? "gemma3" : "llama");
  if (!ember::Model::Load(path, nullptr, &f->model).ok()) Fail("loading the tiny model failed");
  ember::SessionParams sp;
  sp.n_ctx = 32;
  sp.n_threads = 1;
  sp.n_threads_batch = 1;
  sp.n_batch = 4;  // gemma3: windowed layers keep 1 + 4 + 4 rows, fewer than the context
  sp.n_keep = 1;
  if (!Session::Create(*f->model, sp, &f->session).ok()) Fail("creating the session failed");
  for (int32_t t = 0; t < (gemma ? 12 : 5); ++t) f->prompt.push_back(3 + (t * 37) % 290);
  f->Restore(false);
  f->after_prompt = f->session->logits();
  if (!f->session->Decode({Fixture::kNext}).ok()) Fail("decoding failed");
  f->after_next = f->session->logits();
  f->Restore(true);
  if (!f->session->Decode({Fixture::kNext}).ok()) Fail("decoding failed");
  f->fresh_next = f->session->logits();
  return *f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  const bool fresh = flags & 8;
  Fixture& fx = Get(flags & 1);
  std::vector<uint8_t> file(data + 1, data + size);
  if ((flags & 2) && file.size() >= 20) {
    const uint64_t fp = fx.model->fingerprint();
    std::memcpy(file.data() + 12, &fp, sizeof(fp));
  }
  if ((flags & 4) && file.size() >= 8) {
    ember::Fnv1a64 h;
    h.Update(file.data(), file.size() - 8);
    const uint64_t sum = h.digest();
    std::memcpy(file.data() + file.size() - 8, &sum, sizeof(sum));
  }
  static const std::string path = ember::fuzz::ScratchDir() + "/input.state";
  ember::fuzz::WriteBytes(path, file.data(), file.size());

  fx.Restore(fresh);
  Session& s = *fx.session;
  const std::vector<int32_t> tokens_before = s.tokens();
  const bool had_logits = s.has_logits();
  const std::vector<float> logits_before = s.logits();
  if (s.LoadState(path).ok()) {
    // Whatever it held, the session goes on.
    if (s.n_past() > s.n_ctx()) Fail("a loaded state overflows the context");
    (void)s.Decode({Fixture::kNext});
    return 0;
  }
  if (s.tokens() != tokens_before || s.has_logits() != had_logits ||
      std::memcmp(s.logits().data(), logits_before.data(), logits_before.size() * 4) != 0) {
    Fail("a failed load changed the session");
  }
  if (!s.Decode({Fixture::kNext}).ok()) Fail("decoding after a failed load failed");
  const std::vector<float>& want = fresh ? fx.fresh_next : fx.after_next;
  if (std::memcmp(s.logits().data(), want.data(), want.size() * 4) != 0) {
    Fail("after a failed load, a decode gives other logits than before it");
  }
  return 0;
}
