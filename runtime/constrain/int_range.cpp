// Integer ranges as digit patterns: split by digit count, then for numbers of
// one length the classic construction of a regular expression for a range:
// after the common prefix, the first differing digit is the low end's (then
// anything at or above the low end's rest), a digit strictly between (then
// any digits), or the high end's (then anything at or below its rest).
#include "runtime/constrain/int_range.h"

#include <algorithm>
#include <vector>

namespace ember {
namespace {

std::string Digit(char c) { return std::string("\"") + c + "\""; }

std::string DigitRange(char a, char b) {
  return a == b ? Digit(a) : std::string("[") + a + "-" + b + "]";
}

std::string AnyDigits(size_t n) {
  if (n == 0) return "";
  if (n == 1) return "[0-9]";
  return "[0-9]{" + std::to_string(n) + "}";
}

std::string Join(const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts[0];
  std::string out = "(";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " | " : "") + parts[i];
  return out + ")";
}

std::string Cat(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + " " + b;
}

bool All(const std::string& s, char c) {
  return std::all_of(s.begin(), s.end(), [c](char x) { return x == c; });
}

// Digit strings of x's length that are >= x (resp. <= x).
std::string AtLeast(const std::string& x) {
  if (All(x, '0')) return AnyDigits(x.size());
  std::vector<std::string> alts = {Cat(Digit(x[0]), AtLeast(x.substr(1)))};
  if (x[0] < '9')
    alts.push_back(Cat(DigitRange(static_cast<char>(x[0] + 1), '9'), AnyDigits(x.size() - 1)));
  return Join(alts);
}

std::string AtMost(const std::string& x) {
  if (All(x, '9')) return AnyDigits(x.size());
  std::vector<std::string> alts = {Cat(Digit(x[0]), AtMost(x.substr(1)))};
  if (x[0] > '0')
    alts.push_back(Cat(DigitRange('0', static_cast<char>(x[0] - 1)), AnyDigits(x.size() - 1)));
  return Join(alts);
}

// Digit strings s of one length with a <= s <= b.
std::string SameLength(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && a[i] == b[i]) ++i;
  const std::string prefix = i > 0 ? "\"" + a.substr(0, i) + "\"" : "";
  if (i == a.size()) return prefix;
  const std::string a_rest = a.substr(i + 1), b_rest = b.substr(i + 1);
  std::vector<std::string> alts;
  char from = a[i], to = b[i];
  if (!All(a_rest, '0')) {
    alts.push_back(Cat(Digit(a[i]), AtLeast(a_rest)));
    ++from;
  }
  std::string last;
  if (!All(b_rest, '9')) {
    last = Cat(Digit(b[i]), AtMost(b_rest));
    --to;
  }
  if (from <= to) alts.push_back(Cat(DigitRange(from, to), AnyDigits(a_rest.size())));
  if (!last.empty()) alts.push_back(last);
  return Cat(prefix, Join(alts));
}

uint64_t Magnitude(int64_t v) { return v < 0 ? uint64_t(-(v + 1)) + 1 : uint64_t(v); }

}  // namespace

std::string UintRangeGbnf(uint64_t lo, std::optional<uint64_t> hi) {
  if (hi && *hi < lo) return "";
  const std::string a = std::to_string(lo);
  const size_t max_len =
      hi ? std::to_string(*hi).size() : std::max<size_t>(kMaxIntegerDigits, a.size());
  std::vector<std::string> parts;
  for (size_t len = a.size(); len <= max_len; ++len) {
    const std::string from = len == a.size() ? a : "1" + std::string(len - 1, '0');
    const std::string to = hi && len == max_len ? std::to_string(*hi) : std::string(len, '9');
    parts.push_back(SameLength(from, to));
  }
  return Join(parts);
}

std::string IntRangeGbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  if (lo && hi && *lo > *hi) return "";
  std::vector<std::string> parts;
  if (!lo || *lo < 0) {  // negative numbers: "-" and a magnitude
    const uint64_t mag_lo = hi && *hi < 0 ? Magnitude(*hi) : 1;
    const std::optional<uint64_t> mag_hi =
        lo ? std::optional<uint64_t>(Magnitude(*lo)) : std::nullopt;
    parts.push_back("\"-\" " + UintRangeGbnf(mag_lo, mag_hi));
  }
  if (!hi || *hi >= 0) {
    const uint64_t from = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
    const std::optional<uint64_t> to =
        hi ? std::optional<uint64_t>(static_cast<uint64_t>(*hi)) : std::nullopt;
    parts.push_back(UintRangeGbnf(from, to));
  }
  return Join(parts);
}

}  // namespace ember
