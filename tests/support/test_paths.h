// Where tests find their data: ../shared (vocabs, templates), the model cache
// (real GGUFs fetched by scripts/fetch-models.sh) and scratch files.
#pragma once

#include <string>

#include "support/skip.h"

namespace ember::test {

std::string SourceDir();                         // ember's source tree (tests/data)
std::string CliPath();                           // the `ember` binary built with the tests
std::string SharedDir();                         // $EMBER_SHARED_DIR or <source>/../shared
std::string ModelsDir();                         // $EMBER_MODELS or ~/.cache/ember/models
std::string ModelPath(const std::string& file);  // "" when the file is not there
std::string TempPath(const std::string& name);   // a fresh path under the temp dir
std::string ReadFile(const std::string& path);
bool FileExists(const std::string& path);

}  // namespace ember::test
