#include "quant/ggml_type.h"

namespace ember {
namespace {

// Why the Q5 native ids of before 2026-11-27 are no longer read (quant/packed.h).
constexpr const char* kQ5PlaneRetired =
    "its Q5 high bits are laid out as before 2026-11-27, in a row per vector; the plane is "
    "bit-sliced now";

// Block sizes from the GGML block definitions (QK4_0 = 32, QK_K = 256, ...).
constexpr GgmlTypeTraits kGgmlTypeTraits[] = {
    {GgmlType::kF32, "F32", 1, 4},
    {GgmlType::kF16, "F16", 1, 2},
    {GgmlType::kQ4_0, "Q4_0", 32, 18},
    {GgmlType::kQ4_1, "Q4_1", 32, 20},
    {GgmlType::kQ5_0, "Q5_0", 32, 22},
    {GgmlType::kQ5_1, "Q5_1", 32, 24},
    {GgmlType::kQ8_0, "Q8_0", 32, 34},
    {GgmlType::kQ8_1, "Q8_1", 32, 36},
    {GgmlType::kQ2_K, "Q2_K", 256, 84},
    {GgmlType::kQ3_K, "Q3_K", 256, 110},
    {GgmlType::kQ4_K, "Q4_K", 256, 144},
    {GgmlType::kQ5_K, "Q5_K", 256, 176},
    {GgmlType::kQ6_K, "Q6_K", 256, 210},
    {GgmlType::kQ8_K, "Q8_K", 256, 292},
    {GgmlType::kIQ2_XXS, "IQ2_XXS", 256, 66},
    {GgmlType::kIQ2_XS, "IQ2_XS", 256, 74},
    {GgmlType::kIQ3_XXS, "IQ3_XXS", 256, 98},
    {GgmlType::kIQ1_S, "IQ1_S", 256, 50},
    {GgmlType::kIQ4_NL, "IQ4_NL", 32, 18},
    {GgmlType::kIQ3_S, "IQ3_S", 256, 110},
    {GgmlType::kIQ2_S, "IQ2_S", 256, 82},
    {GgmlType::kIQ4_XS, "IQ4_XS", 256, 136},
    {GgmlType::kI8, "I8", 1, 1},
    {GgmlType::kI16, "I16", 1, 2},
    {GgmlType::kI32, "I32", 1, 4},
    {GgmlType::kI64, "I64", 1, 8},
    {GgmlType::kF64, "F64", 1, 8},
    {GgmlType::kIQ1_M, "IQ1_M", 256, 56},
    {GgmlType::kBF16, "BF16", 1, 2},
    {GgmlType::kTQ1_0, "TQ1_0", 256, 54},
    {GgmlType::kTQ2_0, "TQ2_0", 256, 66},
    {GgmlType::kMXFP4, "MXFP4", 32, 17},
    {GgmlType::kEmberQ4x16, "EMBER_Q4x16", 32, 18},
    {GgmlType::kEmberQ4x16Min, "EMBER_Q4x16_MIN", 32, 20},
    {GgmlType::kEmberQ8x16, "EMBER_Q8x16", 32, 34},
    {GgmlType::kEmberQ5x16Retired, "EMBER_Q5x16_RETIRED", 32, 22, kQ5PlaneRetired},
    {GgmlType::kEmberQ5x16MinRetired, "EMBER_Q5x16_MIN_RETIRED", 32, 24, kQ5PlaneRetired},
    {GgmlType::kEmberQ6x16Retired, "EMBER_Q6x16", 32, 28, "Q6_K is EMBER_Q6Kx16 now"},
    {GgmlType::kEmberIQ4x16, "EMBER_IQ4x16", 32, 18},
    {GgmlType::kEmberQ4Kx16, "EMBER_Q4Kx16", 256, 148},
    {GgmlType::kEmberQ5Kx16Retired, "EMBER_Q5Kx16_RETIRED", 256, 180, kQ5PlaneRetired},
    {GgmlType::kEmberQ3Kx16, "EMBER_Q3Kx16", 256, 114},
    {GgmlType::kEmberQ2Kx16, "EMBER_Q2Kx16", 256, 84},
    {GgmlType::kEmberQ6Kx16, "EMBER_Q6Kx16", 256, 210},
    {GgmlType::kEmberQ5x16, "EMBER_Q5x16", 32, 22},
    {GgmlType::kEmberQ5x16Min, "EMBER_Q5x16_MIN", 32, 24},
    {GgmlType::kEmberQ5Kx16, "EMBER_Q5Kx16", 256, 180},
};

}  // namespace

const GgmlTypeTraits* FindGgmlType(uint32_t id) {
  for (const auto& t : kGgmlTypeTraits) {
    if (static_cast<uint32_t>(t.type) == id) return &t;
  }
  return nullptr;
}

const char* GgmlTypeName(GgmlType type) {
  const GgmlTypeTraits* t = FindGgmlType(static_cast<uint32_t>(type));
  return t ? t->name : "unknown";
}

size_t GgmlRowBytes(GgmlType type, uint64_t n) {
  const GgmlTypeTraits* t = FindGgmlType(static_cast<uint32_t>(type));
  return static_cast<size_t>(n / t->block_elems * t->block_bytes);
}

}  // namespace ember
