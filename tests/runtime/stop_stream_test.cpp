#include "runtime/text/stop_stream.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace ember;

namespace {

// Pushes each piece and returns what was emitted after each push.
std::vector<std::string> Feed(StopStream& s, const std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  for (const std::string& p : pieces) out.push_back(s.Push(p));
  return out;
}

}  // namespace

TEST_CASE("stop stream: the issue's example, 'User:' against 'User said'", "[stop]") {
  StopStream s({"User:"});
  CHECK(s.Push("User") == "");  // could still become "User:"
  CHECK(s.Push(" said") == "User said");
  CHECK_FALSE(s.stopped());
  CHECK(s.Flush() == "");
}

TEST_CASE("stop stream: a stop string across token boundaries is never emitted", "[stop]") {
  StopStream s({"User:"});
  const auto out = Feed(s, {"Hello", " Us", "er", ": and more"});
  CHECK(out[0] == "Hello");
  CHECK(out[1] == " ");
  CHECK(out[2] == "");
  CHECK(out[3] == "");
  CHECK(s.stopped());
  CHECK(s.stop_string() == "User:");
  CHECK(s.Push("later") == "");
  CHECK(s.Flush() == "");
}

TEST_CASE("stop stream: text before a stop inside one piece is emitted", "[stop]") {
  StopStream s({"\n\n"});
  CHECK(s.Push("done.\n\nNext") == "done.");
  CHECK(s.stopped());
  CHECK(s.stop_string() == "\n\n");
}

TEST_CASE("stop stream: the earliest of several stop strings wins", "[stop]") {
  StopStream s({"world", "lo w", "o"});
  CHECK(s.Push("hello world") == "hel");
  CHECK(s.stop_string() == "lo w");
  StopStream t({"ab", "abc"});
  CHECK(t.Push("xabc") == "x");
  CHECK(t.stop_string() == "abc");  // same position: the longer one is reported
}

TEST_CASE("stop stream: a partial match that fails is released whole", "[stop]") {
  StopStream s({"</answer>"});
  CHECK(s.Push("a </ans") == "a ");
  CHECK(s.Push("wer") == "");
  CHECK(s.Push("x>") == "</answerx>");
  CHECK(s.Push("<") == "");
  CHECK(s.Flush() == "<");  // end of generation: what was held is emitted
}

TEST_CASE("stop stream: overlapping prefixes hold back only what can still match", "[stop]") {
  StopStream s({"aab"});
  CHECK(s.Push("aaa") == "a");  // "aa" may still begin "aab"
  CHECK(s.Push("b") == "");
  CHECK(s.stopped());
}

TEST_CASE("stop stream: unfinished UTF-8 is held, and with no stops passes through", "[stop]") {
  StopStream s;
  CHECK(s.Push("caf") == "caf");
  CHECK(s.Push("\xC3") == "");  // first byte of "é"
  CHECK(s.Push("\xA9!") == "\xC3\xA9!");
  CHECK(s.Push("\xE2\x82") == "");
  CHECK(s.Flush() == "\xEF\xBF\xBD");  // an unfinished character at the end becomes U+FFFD
}

TEST_CASE("stop stream: a multi-byte stop string split inside a character", "[stop]") {
  StopStream s({"\xE2\x80\x94"});  // em dash
  CHECK(s.Push("a\xE2") == "a");
  CHECK(s.Push("\x80") == "");
  CHECK(s.Push("\x94z") == "");
  CHECK(s.stopped());
}

TEST_CASE("stop stream: empty stop strings are ignored", "[stop]") {
  StopStream s({"", "x"});
  CHECK(s.Push("abc") == "abc");
  CHECK_FALSE(s.stopped());
}
