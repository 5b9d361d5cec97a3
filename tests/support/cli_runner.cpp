#include "support/cli_runner.h"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "support/test_paths.h"

namespace ember::test {

CliResult RunEmber(const std::string& args) {
  const std::string out = TempPath("out.txt"), err = TempPath("err.txt");
  const std::string cmd = CliPath() + " " + args + " >" + out + " 2>" + err;
  const int rc = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void RequireCleanError(const CliResult& r, const std::string& needle) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code < 128);  // not a signal
  REQUIRE(!r.err.empty());
  CHECK(r.err.back() == '\n');
  const size_t start = r.err.rfind('\n', r.err.size() - 2);
  const std::string last = r.err.substr(start == std::string::npos ? 0 : start + 1);
  CHECK(last.rfind("ember: error: ", 0) == 0);
  CHECK_THAT(last, Catch::Contains(needle));
  // Nothing before it is an error line.
  CHECK(r.err.find("ember: error: ") == r.err.size() - last.size());
}

}  // namespace ember::test
