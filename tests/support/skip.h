// ctest marks a test "Skipped" when its output contains "EMBER_SKIPPED:"
// (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt); the reason follows.
#pragma once

#include <iostream>

#define EMBER_SKIP(reason)                                   \
  do {                                                       \
    std::cout << "EMBER_SKIPPED: " << (reason) << std::endl; \
    return;                                                  \
  } while (0)
