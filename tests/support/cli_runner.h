// Runs the `ember` binary (test::CliPath()) for the CLI tests and checks its
// error contract: one line "ember: error: ..." on stderr, the last line, with
// a non-zero exit and no signal.
#pragma once

#include <string>

namespace ember::test {

struct CliResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// `ember ARGS` through the shell (ARGS is pasted as is: quote with ShellQuote).
CliResult RunEmber(const std::string& args);

// s in single quotes for the shell.
std::string ShellQuote(const std::string& s);

// Catch checks: a non-zero exit, no signal, and the last stderr line is the
// only "ember: error: " line and contains `needle`.
void RequireCleanError(const CliResult& r, const std::string& needle);

}  // namespace ember::test
