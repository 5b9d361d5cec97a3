// Where tests find their data: ../shared (vocabs, templates), the model cache
// (real GGUFs fetched by scripts/fetch-models.sh) and scratch files.
#pragma once

#include <iostream>
#include <string>

namespace ember::test {

std::string SharedDir();                       // $EMBER_SHARED_DIR or <source>/../shared
std::string ModelsDir();                       // $EMBER_MODELS or ~/.cache/ember/models
std::string ModelPath(const std::string& file);  // "" when the file is not there
std::string TempPath(const std::string& name);   // a fresh path under the temp dir
std::string ReadFile(const std::string& path);
bool FileExists(const std::string& path);

}  // namespace ember::test

// ctest marks a test "Skipped" when its output contains "EMBER_SKIPPED:"
// (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt); the reason follows.
#define EMBER_SKIP(reason)                                            \
  do {                                                                \
    std::cout << "EMBER_SKIPPED: " << (reason) << std::endl;          \
    return;                                                           \
  } while (0)
