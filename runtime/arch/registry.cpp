#include <algorithm>
#include <iterator>

#include "runtime/arch/architecture.h"

namespace ember {
namespace {

// One line per architecture.
constexpr Architecture kArchitectures[] = {
    {"gemma3", ConfigureGemma3},
    {"llama", ConfigureLlama},
    {"qwen2", ConfigureQwen2},
    {"qwen3", ConfigureQwen3},
};

}  // namespace

const Architecture* FindArchitecture(std::string_view name) {
  for (const Architecture& a : kArchitectures) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

std::string SupportedArchitectures() {
  std::string s;
  for (const Architecture& a : kArchitectures) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

}  // namespace ember
