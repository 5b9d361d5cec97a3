#include "support/test_paths.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <signal.h>
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
  ScratchDir() {
    RemoveOrphans();
    std::filesystem::create_directories(path);
  }
  // A test process that was killed (a timeout, ^C) never ran the destructor:
  // its directory stays. Each new one removes those whose process is gone,
  // once they are an hour old (a directory of a live process elsewhere, in
  // another PID namespace sharing /tmp, is left long enough to finish).
  static void RemoveOrphans() {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto now = fs::file_time_type::clock::now();
    for (const fs::directory_entry& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("ember_test_", 0) != 0) continue;
      char* end = nullptr;
      const long pid = std::strtol(name.c_str() + 11, &end, 10);
      if (end == name.c_str() + 11 || *end != '\0' || pid <= 0) continue;
      if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours
      std::error_code age_ec;
      const auto when = fs::last_write_time(e.path(), age_ec);
      if (age_ec || now - when < std::chrono::hours(1)) continue;
      std::error_code ignored;
      fs::remove_all(e.path(), ignored);
    }
  }
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
