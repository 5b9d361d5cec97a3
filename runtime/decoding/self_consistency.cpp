#include "runtime/decoding/self_consistency.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>

#include "platform/ascii.h"
#include "platform/clock.h"
#include "sampling/chain.h"

namespace ember {
namespace {

// The number starting at s[i] (a sign, digits with comma groups, a decimal
// part, or a fraction a/b), or "" when none starts there. *end gets its end.
std::string NumberAt(std::string_view s, size_t i, size_t* end) {
  size_t j = i;
  std::string out;
  if (j < s.size() && (s[j] == '-' || s[j] == '+') && j + 1 < s.size() && IsAsciiDigit(s[j + 1])) {
    if (s[j] == '-') out += '-';
    ++j;
  }
  if (j >= s.size() || !IsAsciiDigit(s[j])) return "";
  auto digits = [&] {
    while (j < s.size()) {
      if (IsAsciiDigit(s[j])) {
        out += s[j++];
      } else if (s[j] == ',' && j + 3 < s.size() && IsAsciiDigit(s[j + 1]) &&
                 IsAsciiDigit(s[j + 2]) && IsAsciiDigit(s[j + 3]) &&
                 (j + 4 >= s.size() || !IsAsciiDigit(s[j + 4]))) {
        ++j;  // a thousands separator: ",ddd" not followed by a fourth digit
      } else {
        break;
      }
    }
  };
  digits();
  if (j + 1 < s.size() && (s[j] == '.' || s[j] == '/') && IsAsciiDigit(s[j + 1])) {
    out += s[j++];
    digits();
  }
  *end = j;
  return out;
}

// Canonical text of a number: no '+', no trailing zeros after a decimal point.
std::string CanonicalNumber(std::string n) {
  if (n.find('.') != std::string::npos && n.find('/') == std::string::npos) {
    while (!n.empty() && n.back() == '0') n.pop_back();
    if (!n.empty() && n.back() == '.') n.pop_back();
    if (n == "-0" || n.empty()) n = "0";
  }
  return n;
}

// The first (or last) number in s, "" if none.
std::string FindNumber(std::string_view s, bool last) {
  std::string found;
  for (size_t i = 0; i < s.size();) {
    const bool starts = IsAsciiDigit(s[i]) || ((s[i] == '-' || s[i] == '+') && i + 1 < s.size() &&
                                               IsAsciiDigit(s[i + 1]));
    // A number starts at a digit that does not continue a word ("x2").
    if (starts && (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1])))) {
      size_t end = i;
      const std::string n = NumberAt(s, i, &end);
      if (!n.empty()) {
        found = CanonicalNumber(n);
        if (!last) return found;
        i = end;
        continue;
      }
    }
    ++i;
  }
  return found;
}

std::string Normalize(std::string_view a) {
  auto strip = [](char c) {
    return IsAsciiSpace(c) || c == '$' || c == '*' || c == '"' || c == '\'' || c == '`';
  };
  while (!a.empty() && strip(a.front())) a.remove_prefix(1);
  while (!a.empty() && (strip(a.back()) || a.back() == '.')) a.remove_suffix(1);
  size_t end = 0;
  const std::string n = NumberAt(a, 0, &end);
  if (!n.empty() && end == a.size()) return CanonicalNumber(n);
  return AsciiLower(a);
}

}  // namespace

std::string ExtractFinalAnswer(std::string_view content) {
  // 1. \boxed{...}
  const size_t boxed = content.rfind("\\boxed{");
  if (boxed != std::string_view::npos) {
    size_t i = boxed + 7, depth = 1;
    for (size_t j = i; j < content.size(); ++j) {
      if (content[j] == '{') ++depth;
      if (content[j] == '}' && --depth == 0) return Normalize(content.substr(i, j - i));
    }
  }
  // 2. "answer is X" / "answer: X"
  const std::string lower = AsciiLower(content);
  size_t best = std::string::npos, skip = 0;
  for (const char* key : {"answer is", "answer:"}) {
    const size_t at = lower.rfind(key);
    if (at != std::string::npos && (best == std::string::npos || at > best)) {
      best = at;
      skip = std::string_view(key).size();
    }
  }
  if (best != std::string::npos) {
    std::string_view rest = content.substr(best + skip);
    while (!rest.empty() && (IsAsciiSpace(rest.front()) || rest.front() == ':'))
      rest.remove_prefix(1);
    size_t stop = rest.find('\n');
    for (size_t j = 0; j + 1 < rest.size() && j < stop; ++j) {
      if ((rest[j] == '.' || rest[j] == '!' || rest[j] == '?') && IsAsciiSpace(rest[j + 1])) {
        stop = j;
        break;
      }
    }
    rest = rest.substr(0, stop);
    const std::string n = FindNumber(rest, false);
    if (!n.empty()) return n;
    const std::string a = Normalize(rest);
    if (!a.empty()) return a;
  }
  // 3. the last number
  const std::string n = FindNumber(content, true);
  if (!n.empty()) return n;
  // 4. the last non-empty line
  size_t end = content.size();
  while (end > 0) {
    const size_t nl = content.rfind('\n', end - 1);
    const size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    const std::string a = Normalize(content.substr(begin, end - begin));
    if (!a.empty()) return a;
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  return "";
}

Status SelfConsistency(Session& session, const std::vector<int32_t>& prompt,
                       const SelfConsistencyParams& params, const SampleFn& on_sample,
                       SelfConsistencyResult* result) {
  if (params.k < 1) return InvalidArgument("self-consistency needs k >= 1 samples");
  if (params.gen.beams > 0) return Unsupported("self-consistency samples; beams are not used");
  const auto t0 = std::chrono::steady_clock::now();
  *result = SelfConsistencyResult();
  const Tokenizer& tok = session.model().tokenizer();
  std::vector<SamplerSpec> specs;
  if (params.gen.chain != nullptr) {
    specs = params.gen.chain->specs();
  } else {
    EMBER_RETURN_IF_ERROR(SpecsFromParams(params.gen.sampling, &specs));
    EMBER_RETURN_IF_ERROR(session.model().grammar_cache().Attach(&specs));
  }
  SamplerContext ctx;
  ctx.n_vocab = static_cast<int32_t>(session.model().config().n_vocab);
  ctx.token_piece = [&tok](int32_t t) { return tok.pieces()[static_cast<size_t>(t)]; };

  for (int32_t i = 0; i < params.k; ++i) {
    std::unique_ptr<SamplerChain> chain;
    EMBER_RETURN_IF_ERROR(SamplerChain::Create(
        specs, ctx, params.gen.sampling.seed + static_cast<uint64_t>(i), &chain));
    GenerateParams g = params.gen;
    g.chain = chain.get();
    g.reuse_prefix = true;  // the prompt's rows stay; only its last token is recomputed
    ConsistencySample sample;
    std::optional<ReasoningSplitter> splitter;
    if (params.markers) splitter.emplace(*params.markers, params.prompt_opens_reasoning);
    auto deliver = [&](ReplyChannel ch, std::string_view text) {
      (ch == ReplyChannel::kReasoning ? sample.reasoning : sample.content).append(text);
    };
    GenerateResult r;
    EMBER_RETURN_IF_ERROR(Generate(
        session, prompt, g,
        [&](std::string_view piece, int32_t) {
          if (splitter) {
            splitter->Feed(piece, deliver);
          } else {
            deliver(ReplyChannel::kContent, piece);
          }
          return true;
        },
        nullptr, &r));
    if (splitter) splitter->Finish(deliver);
    sample.finish = r.finish;
    sample.n_gen = static_cast<int64_t>(r.tokens.size());
    sample.answer = ExtractFinalAnswer(sample.content);
    if (r.finish == FinishReason::kCancelled) break;  // ember_session_cancel: keep what we have

    if (!sample.answer.empty()) {  // a reply without an answer (cut off) does not vote
      auto it = std::find_if(result->votes.begin(), result->votes.end(),
                             [&](const AnswerVote& v) { return v.answer == sample.answer; });
      if (it == result->votes.end()) {
        result->votes.push_back({sample.answer, 0, {}});
        it = result->votes.end() - 1;
      }
      ++it->votes;
      it->samples.push_back(i);
    }
    result->samples.push_back(std::move(sample));
    if (on_sample && !on_sample(i, result->samples.back())) break;
  }
  // Most votes first; stable, so ties keep the order answers were first reached.
  std::stable_sort(result->votes.begin(), result->votes.end(),
                   [](const AnswerVote& a, const AnswerVote& b) { return a.votes > b.votes; });
  result->seconds = SecondsSince(t0);
  return Status::Ok();
}

}  // namespace ember
