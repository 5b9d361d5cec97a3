#include "support/test_paths.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace ember::test {

// The build's absolute paths are compiled into this file only, so that every
// other test source compiles to the same object wherever the tree is checked
// out (a compiler cache then serves a fresh clone; scripts/test.sh).
std::string SourceDir() { return EMBER_SOURCE_DIR; }

std::string CliPath() { return EMBER_CLI_PATH; }

std::string SharedDir() {
  if (const char* e = std::getenv("EMBER_SHARED_DIR")) return e;
  return SourceDir() + "/../shared";
}

std::string ModelsDir() {
  if (const char* e = std::getenv("EMBER_MODELS")) return e;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/ember/models";
}

std::string ModelPath(const std::string& file) {
  std::string p = ModelsDir() + "/" + file;
  return FileExists(p) ? p : "";
}

namespace {

// This process's scratch directory, removed with everything in it when the
// process exits. ctest runs every test case in a process of its own, and the
// models the tests build reach hundreds of MB: left behind, a day of test runs
// filled the disk.
struct ScratchDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("ember_test_" + std::to_string(getpid()));
  ScratchDir() { std::filesystem::create_directories(path); }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

}  // namespace

std::string TempPath(const std::string& name) {
  static std::atomic<int> counter{0};
  static const ScratchDir dir;
  return (dir.path / (std::to_string(counter++) + "_" + name)).string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool FileExists(const std::string& path) { return std::filesystem::is_regular_file(path); }

}  // namespace ember::test
