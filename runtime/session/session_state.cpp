// Session state files (Session::SaveState / LoadState).
//
// Layout, little-endian:
//   magic "EMBERKV\0"                  8 bytes
//   version                            u32 (kStateVersion)
//   model fingerprint                  u64 (Model::fingerprint)
//   kv type, n_layer, n_head_kv, head_dim   u32 x 4
//   n_tokens                           u64
//   win_keep, win_first                u64 x 2: which tokens' rows the sliding-
//                                      window layers store: i < win_keep or
//                                      i >= win_first (0, 0: all of them)
//   tokens                             i32 [n_tokens]
//   has_logits, n_vocab                u32 x 2
//   logits                             f32 [n_vocab] when has_logits
//   rows                               for each layer, for each token it stores
//                                      in context order: KvCache::RowBytes bytes
//   checksum                           u64, FNV-1a of every byte before it
// Rows are stored in context order, not ring order, so a state loads into a
// session of any context size that holds its tokens. A session whose windowed
// layers keep only the last tokens (WindowRing) stores only those for them;
// such a state loads into a session that needs no more than that.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "platform/hash.h"
#include "runtime/session/session.h"

namespace ember {
namespace {

constexpr char kStateMagic[8] = {'E', 'M', 'B', 'E', 'R', 'K', 'V', '\0'};
constexpr uint32_t kStateVersion = 2;

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

// Which tokens' rows the windowed layers of a state hold (see the layout).
struct WindowRows {
  uint64_t keep = 0, first = 0;
  bool Holds(uint64_t i) const { return i < keep || i >= first; }
  uint64_t Count(uint64_t n) const {
    return std::min(keep, n) + (n > first ? n - std::max(first, keep) : 0);
  }
};

}  // namespace

Status Session::SaveState(const std::string& path) const {
  // Written to a temporary file and renamed, so a failed save never leaves a
  // half-written state where a good one was.
  const std::string tmp = path + ".tmp";
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) return Status(Code::kIoError, "cannot write session state " + tmp);
  StateWriter w(f.get());
  const ModelConfig& c = model_.config();
  WindowRows win;
  if (window_) {
    win.keep = static_cast<uint64_t>(n_keep());
    win.first = static_cast<uint64_t>(std::max(n_keep(), window_->first_held()));
  }
  w.Write(kStateMagic, sizeof(kStateMagic));
  w.Put<uint32_t>(kStateVersion);
  w.Put<uint64_t>(model_.fingerprint());
  w.Put<uint32_t>(static_cast<uint32_t>(kv_.type()));
  w.Put<uint32_t>(static_cast<uint32_t>(c.n_layer));
  w.Put<uint32_t>(static_cast<uint32_t>(c.n_head_kv));
  w.Put<uint32_t>(static_cast<uint32_t>(c.head_dim));
  w.Put<uint64_t>(static_cast<uint64_t>(n_past()));
  w.Put<uint64_t>(win.keep);
  w.Put<uint64_t>(win.first);
  w.Write(tokens_.data(), tokens_.size() * sizeof(int32_t));
  w.Put<uint32_t>(has_logits_ ? 1 : 0);
  w.Put<uint32_t>(static_cast<uint32_t>(logits_.size()));
  if (has_logits_) w.Write(logits_.data(), logits_.size() * sizeof(float));
  std::vector<uint8_t> row(kv_.RowBytes());
  for (int64_t l = 0; l < c.n_layer && w.ok(); ++l) {
    const bool windowed = window_ && c.layer(l).window > 0;
    for (int64_t i = 0; i < n_past(); ++i) {
      if (windowed && !win.Holds(static_cast<uint64_t>(i))) continue;
      kv_.ReadRow(l, windowed ? window_->SlotOf(i) : ring_.SlotOf(i), row.data());
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
  WindowRows saved;
  if (!r.Read(magic, sizeof(magic)) || !r.Get(&version)) return Corrupt(path, "truncated header");
  if (version != kStateVersion) {
    return Corrupt(path, "version " + std::to_string(version) + " (this build reads version " +
                             std::to_string(kStateVersion) + ")");
  }
  if (!r.Get(&fingerprint) || !r.Get(&type) || !r.Get(&n_layer) || !r.Get(&n_head_kv) ||
      !r.Get(&head_dim) || !r.Get(&n_tokens) || !r.Get(&saved.keep) || !r.Get(&saved.first)) {
    return Corrupt(path, "truncated header");
  }
  const ModelConfig& c = model_.config();
  if (fingerprint != model_.fingerprint() || n_layer != c.n_layer || n_head_kv != c.n_head_kv ||
      head_dim != c.head_dim) {
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
  if (saved.first < saved.keep || (saved.keep > 0 && max_window_ == 0)) {
    return Corrupt(path, "bad window rows");
  }
  // The tokens whose windowed-layer rows this session needs: all of them, or
  // with a window ring the pinned ones and the last `capacity`.
  WindowRows need;
  bool short_window = false;  // the rows the next token's window needs are not all there
  if (window_) {
    const uint64_t capacity = static_cast<uint64_t>(window_->n_rows() - n_keep());
    need.keep = static_cast<uint64_t>(n_keep());
    need.first = std::max({need.keep, n_tokens > capacity ? n_tokens - capacity : 0, saved.first});
    const uint64_t window_start =
        n_tokens + 1 > static_cast<uint64_t>(max_window_) ? n_tokens + 1 - max_window_ : 0;
    short_window = need.first > std::max(need.keep, window_start);
  }
  for (uint64_t i = 0; i < n_tokens; ++i) {
    if ((need.Holds(i) && !saved.Holds(i)) || short_window) {
      return Status(Code::kInvalidArgument,
                    path +
                        " holds the sliding-window layers' keys and values of the last "
                        "tokens only, fewer than this session needs (load it into a session "
                        "with the same context size, n_batch and keep, without swa_full)");
    }
  }
  uint64_t rows_bytes = 0;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    rows_bytes += (c.layer(l).window > 0 ? saved.Count(n_tokens) : n_tokens) * kv_.RowBytes();
  }
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
  if (window_) window_->Restore(static_cast<int64_t>(n_tokens), static_cast<int64_t>(need.first));
  std::vector<uint8_t> row(kv_.RowBytes());
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const bool windowed = c.layer(l).window > 0;
    for (uint64_t i = 0; i < n_tokens; ++i) {
      if (windowed && !saved.Holds(i)) continue;
      if (!r.Read(row.data(), row.size())) {
        Reset();
        return Status(Code::kIoError, "cannot read " + path);
      }
      const int64_t t = static_cast<int64_t>(i);
      if (windowed && window_) {
        if (need.Holds(i)) kv_.WriteRow(l, window_->SlotOf(t), row.data());
      } else {
        kv_.WriteRow(l, t, row.data());
      }
    }
  }
  tokens_ = std::move(tokens);
  ring_.Append(n_past());
  if (has_logits) std::copy(logits.begin(), logits.end(), logits_.begin());
  has_logits_ = has_logits != 0;
  return Status::Ok();
}

}  // namespace ember
