#include "support/test_paths.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace ember::test {

std::string SharedDir() {
  if (const char* e = std::getenv("EMBER_SHARED_DIR")) return e;
  return std::string(EMBER_SOURCE_DIR) + "/../shared";
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

std::string TempPath(const std::string& name) {
  static std::atomic<int> counter{0};
  auto dir = std::filesystem::temp_directory_path() / ("ember_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / (std::to_string(counter++) + "_" + name)).string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool FileExists(const std::string& path) { return std::filesystem::is_regular_file(path); }

}  // namespace ember::test
