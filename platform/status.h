// Errors as values inside the library (docs/DESIGN.md §9).
// A Status carries a code and a message that names what was wrong and where
// (file offset, tensor name, parameter). The C API maps Code to ember_status.
#pragma once

#include <string>
#include <utility>

namespace ember {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // a caller passed something out of range
  kIoError,          // open/read/mmap failed
  kBadFormat,        // a file is malformed, truncated or inconsistent
  kUnsupported,      // valid input we do not implement (architecture, tensor type)
  kOutOfMemory,
  kContextOverflow,  // more tokens than the context holds
  kCancelled,
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status BadFormat(std::string m) { return {Code::kBadFormat, std::move(m)}; }
inline Status Unsupported(std::string m) { return {Code::kUnsupported, std::move(m)}; }
inline Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }

}  // namespace ember

#define EMBER_RETURN_IF_ERROR(expr)             \
  do {                                          \
    ::ember::Status ember_status_tmp_ = (expr); \
    if (!ember_status_tmp_.ok()) return ember_status_tmp_; \
  } while (0)
