// The tests' environment, set before main() (whichever Catch2 main runs:
// Debian's prebuilt libCatch2WithMain on x86, tests/main.cpp elsewhere).
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

// Sessions with automatic thread counts measure the memory bandwidth once and
// cache it (platform/bandwidth_cache.h). Tests run many at a time, so their
// numbers are not the machine's: they go to a cache of their own, not the
// user's (an EMBER_CACHE_DIR already set is kept). Child processes (the CLI
// tests) inherit it.
const bool kCacheDirSet = [] {
  const std::string dir = (std::filesystem::temp_directory_path() / "ember-test-cache").string();
  return setenv("EMBER_CACHE_DIR", dir.c_str(), 0) == 0;
}();

}  // namespace
