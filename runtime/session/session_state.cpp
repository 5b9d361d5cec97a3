// Session state files (Session::SaveState / LoadState).
//
// Layout, little-endian:
//   magic "EMBERKV\0"                  8 bytes
//   version                            u32 (kStateVersion)
//   model fingerprint                  u64 (Model::fingerprint)
//   kv type, n_layer, n_head_kv, head_dim   u32 x 4
//   n_tokens                           u64
//   tokens                             i32 [n_tokens]
//   has_logits, n_vocab                u32 x 2
//   logits                             f32 [n_vocab] when has_logits
//   rows                               for each layer, for each token in
//                                      context order: KvCache::RowBytes bytes
//   checksum                           u64, FNV-1a of every byte before it
// Rows are stored in context order, not ring order, so a state loads into a
// session of any context size that holds its tokens.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "platform/hash.h"
#include "runtime/session/session.h"

namespace ember {
namespace {

constexpr char kStateMagic[8] = {'E', 'M', 'B', 'E', 'R', 'K', 'V', '\0'};
constexpr uint32_t kStateVersion = 1;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Writes and hashes everything that goes through it.
class StateWriter {
 public:
  explicit StateWriter(std::FILE* f) : f_(f) {}
  void Write(const void* p, size_t n) {
    if (n == 0 || !ok_) return;
    hash_.Update(p, n);
    ok_ = std::fwrite(p, 1, n, f_) == n;
  }
  template <typename T>
  void Put(T v) {
    Write(&v, sizeof(v));
  }
  void Finish() {
    const uint64_t sum = hash_.digest();
    if (ok_) ok_ = std::fwrite(&sum, 1, sizeof(sum), f_) == sizeof(sum);
  }
  bool ok() const { return ok_; }

 private:
  std::FILE* f_;
  Fnv1a64 hash_;
  bool ok_ = true;
};

class StateReader {
 public:
  explicit StateReader(std::FILE* f) : f_(f) {}
  bool Read(void* p, size_t n) {
    if (n == 0) return true;
    if (std::fread(p, 1, n, f_) != n) return false;
    offset_ += n;
    return true;
  }
  template <typename T>
  bool Get(T* v) {
    return Read(v, sizeof(*v));
  }
  uint64_t offset() const { return offset_; }

 private:
  std::FILE* f_;
  uint64_t offset_ = 0;
};

Status Corrupt(const std::string& path, const std::string& what) {
  return Status(Code::kBadFormat, path + ": not a valid ember session state: " + what);
}

}  // namespace

Status Session::SaveState(const std::string& path) const {
  // Written to a temporary file and renamed, so a failed save never leaves a
  // half-written state where a good one was.
  const std::string tmp = path + ".tmp";
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) return Status(Code::kIoError, "cannot write session state " + tmp);
  StateWriter w(f.get());
  const Hparams& hp = model_.hparams();
  w.Write(kStateMagic, sizeof(kStateMagic));
  w.Put<uint32_t>(kStateVersion);
  w.Put<uint64_t>(model_.fingerprint());
  w.Put<uint32_t>(static_cast<uint32_t>(kv_.type()));
  w.Put<uint32_t>(static_cast<uint32_t>(hp.n_layer));
  w.Put<uint32_t>(static_cast<uint32_t>(hp.n_head_kv));
  w.Put<uint32_t>(static_cast<uint32_t>(hp.head_dim));
  w.Put<uint64_t>(static_cast<uint64_t>(n_past()));
  w.Write(tokens_.data(), tokens_.size() * sizeof(int32_t));
  w.Put<uint32_t>(has_logits_ ? 1 : 0);
  w.Put<uint32_t>(static_cast<uint32_t>(logits_.size()));
  if (has_logits_) w.Write(logits_.data(), logits_.size() * sizeof(float));
  std::vector<uint8_t> row(kv_.RowBytes());
  for (int64_t l = 0; l < hp.n_layer && w.ok(); ++l) {
    for (int64_t i = 0; i < n_past(); ++i) {
      kv_.ReadRow(l, ring_.SlotOf(i), row.data());
      w.Write(row.data(), row.size());
    }
  }
  w.Finish();
  const bool closed = std::fclose(f.release()) == 0;
  if (!w.ok() || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status(Code::kIoError, "cannot write session state " + path);
  }
  return Status::Ok();
}

Status Session::LoadState(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return Status(Code::kIoError, "cannot open session state " + path);
  // Pass 1: the checksum over the whole file, before anything is believed.
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return Status(Code::kIoError, "cannot read " + path);
  const long size = std::ftell(f.get());
  if (size < static_cast<long>(sizeof(kStateMagic) + sizeof(uint64_t))) {
    return Corrupt(path, "the file is truncated (" + std::to_string(size) + " bytes)");
  }
  std::rewind(f.get());
  {
    Fnv1a64 h;
    std::vector<uint8_t> buf(1 << 16);
    uint64_t left = static_cast<uint64_t>(size) - sizeof(uint64_t);
    while (left > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
      if (std::fread(buf.data(), 1, n, f.get()) != n)
        return Status(Code::kIoError, "cannot read " + path);
      h.Update(buf.data(), n);
      left -= n;
    }
    uint64_t sum = 0;
    if (std::fread(&sum, 1, sizeof(sum), f.get()) != sizeof(sum)) {
      return Status(Code::kIoError, "cannot read " + path);
    }
    char magic[sizeof(kStateMagic)];
    std::rewind(f.get());
    if (std::fread(magic, 1, sizeof(magic), f.get()) != sizeof(magic) ||
        std::memcmp(magic, kStateMagic, sizeof(magic)) != 0) {
      return Corrupt(path, "bad magic");
    }
    if (sum != h.digest()) return Corrupt(path, "checksum mismatch (truncated or corrupted)");
  }
  // Pass 2: the header, checked against this session, then the rows.
  std::rewind(f.get());
  StateReader r(f.get());
  char magic[sizeof(kStateMagic)];
  uint32_t version = 0, type = 0, n_layer = 0, n_head_kv = 0, head_dim = 0;
  uint64_t fingerprint = 0, n_tokens = 0;
  if (!r.Read(magic, sizeof(magic)) || !r.Get(&version) || !r.Get(&fingerprint) || !r.Get(&type) ||
      !r.Get(&n_layer) || !r.Get(&n_head_kv) || !r.Get(&head_dim) || !r.Get(&n_tokens)) {
    return Corrupt(path, "truncated header");
  }
  if (version != kStateVersion) {
    return Corrupt(path, "version " + std::to_string(version) + " (this build reads version " +
                             std::to_string(kStateVersion) + ")");
  }
  const Hparams& hp = model_.hparams();
  if (fingerprint != model_.fingerprint() || n_layer != hp.n_layer || n_head_kv != hp.n_head_kv ||
      head_dim != hp.head_dim) {
    return Status(Code::kInvalidArgument,
                  path + " was saved from another model (its fingerprint does not match " +
                      model_.path() + ")");
  }
  if (type != static_cast<uint32_t>(kv_.type())) {
    const char* saved = type == static_cast<uint32_t>(KvType::kQ8)    ? "q8"
                        : type == static_cast<uint32_t>(KvType::kF32) ? "f32"
                        : type == static_cast<uint32_t>(KvType::kF16) ? "f16"
                                                                      : "unknown";
    return Status(Code::kInvalidArgument, path + " holds " + saved +
                                              " KV rows; this session's KV cache is " +
                                              KvTypeName(kv_.type()));
  }
  if (n_tokens > static_cast<uint64_t>(n_ctx())) {
    return Status(Code::kContextOverflow, path + " holds " + std::to_string(n_tokens) +
                                              " tokens; the context holds " +
                                              std::to_string(n_ctx()));
  }
  std::vector<int32_t> tokens(static_cast<size_t>(n_tokens));
  uint32_t has_logits = 0, n_vocab = 0;
  if (!r.Read(tokens.data(), tokens.size() * sizeof(int32_t)) || !r.Get(&has_logits) ||
      !r.Get(&n_vocab)) {
    return Corrupt(path, "truncated token list");
  }
  if (n_vocab != logits_.size() || has_logits > 1) return Corrupt(path, "bad vocabulary size");
  for (const int32_t id : tokens) {
    if (id < 0 || id >= static_cast<int32_t>(n_vocab)) return Corrupt(path, "bad token id");
  }
  const uint64_t rows_bytes = static_cast<uint64_t>(n_layer) * n_tokens * kv_.RowBytes();
  const uint64_t expect =
      r.offset() + (has_logits ? n_vocab * sizeof(float) : 0) + rows_bytes + sizeof(uint64_t);
  if (expect != static_cast<uint64_t>(size)) {
    return Corrupt(path,
                   "size " + std::to_string(size) + " bytes, expected " + std::to_string(expect));
  }
  std::vector<float> logits(has_logits ? n_vocab : 0);
  if (!r.Read(logits.data(), logits.size() * sizeof(float))) return Corrupt(path, "truncated");
  // Everything is checked: from here on the session is replaced. A read error
  // now (the file changed under us) leaves an empty session, never a mix.
  Reset();
  std::vector<uint8_t> row(kv_.RowBytes());
  for (int64_t l = 0; l < hp.n_layer; ++l) {
    for (uint64_t i = 0; i < n_tokens; ++i) {
      if (!r.Read(row.data(), row.size())) {
        Reset();
        return Status(Code::kIoError, "cannot read " + path);
      }
      kv_.WriteRow(l, static_cast<int64_t>(i), row.data());
    }
  }
  tokens_ = std::move(tokens);
  ring_.Append(n_past());
  if (has_logits) std::copy(logits.begin(), logits.end(), logits_.begin());
  has_logits_ = has_logits != 0;
  return Status::Ok();
}

}  // namespace ember
