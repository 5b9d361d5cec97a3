#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char* argv[]) {
  // Sessions with automatic thread counts measure the memory bandwidth once
  // and cache it (platform/bandwidth_cache.h). Tests run many at a time, so
  // their numbers are not the machine's: they go to a cache of their own, not
  // the user's (an EMBER_CACHE_DIR already set is kept). Child processes (the
  // CLI tests) inherit it.
  const std::string dir = (std::filesystem::temp_directory_path() / "ember-test-cache").string();
  setenv("EMBER_CACHE_DIR", dir.c_str(), 0);
  return Catch::Session().run(argc, argv);
}
