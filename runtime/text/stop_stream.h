// The streaming detokenizer's last stage (docs/DESIGN.md §7): token bytes
// in, text out, as soon as the text can no longer be part of a stop string or
// of an unfinished UTF-8 character. A stop string is never emitted, also when
// it spans several tokens; generation ends where it begins.
//
//   StopStream s({"User:"});
//   s.Push("User")   -> ""           ("User" may still begin "User:")
//   s.Push(" said")  -> "User said"  (" said" rules it out)
//   s.Push("\nUs")   -> "\n"
//   s.Push("er: hi") -> ""           stopped() == true, stop_string() == "User:"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/text/tokenizer.h"

namespace ember {

class StopStream {
 public:
  // Empty strings in `stops` are ignored.
  explicit StopStream(std::vector<std::string> stops = {});

  // Appends a token's bytes; returns the text that is now safe to emit. After
  // a stop string completed, returns the text before it and then only "".
  std::string Push(std::string_view bytes);
  // End of generation (not by a stop string): everything held back, with an
  // unfinished UTF-8 character as U+FFFD.
  std::string Flush();

  bool stopped() const { return stopped_; }
  const std::string& stop_string() const { return stop_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;  // bytes that may begin a stop string
  Utf8Stream utf8_;
  bool stopped_ = false;
  std::string stop_;
};

}  // namespace ember
