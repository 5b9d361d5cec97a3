// "1,2,4,8" -> {1, 2, 4, 8}: the benchmark tools' list options (--m, --clients).
#pragma once

#include <cstdlib>
#include <vector>

inline std::vector<int> ParseIntList(const char* s) {
  std::vector<int> out;
  for (const char* p = s; *p;) {
    out.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}
