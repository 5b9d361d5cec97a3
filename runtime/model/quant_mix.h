// Which GGUF type each tensor gets when a model is quantized to a file type
// (`ember quantize --type Q4_K_M`): llama-quantize's choices without an
// importance matrix, so that a mix ember writes has the tensor types of the
// same mix written by llama-quantize (docs/QUANTIZE.md lists the rules).
//
// A file type names a default type for the weight matrices and, for the K-quant
// mixes, rules that give some tensors more bits: the output (and a tied
// embedding) Q6_K, and in the _M mixes a pattern of attn_v and ffn_down layers
// Q6_K (IQ4_NL / IQ4_XS: the first eighth of ffn_down and, with 4+ query heads
// per KV head, attn_v Q5_K). Matrices whose rows are not whole blocks of the
// chosen type fall back to a 32-block type (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K
// -> Q8_0, IQ4_XS -> IQ4_NL).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform/status.h"
#include "quant/ggml_type.h"
#include "runtime/gguf/gguf.h"

namespace ember {

// llama.cpp's general.file_type values (LLAMA_FTYPE_*) of the mixes ember
// writes (the others are refused by ParseFileType).
enum class FileType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ8_0 = 7,
  kQ5_0 = 8,
  kQ5_1 = 9,
  kQ2_K = 10,
  kQ3_K_S = 11,
  kQ3_K_M = 12,
  kQ3_K_L = 13,
  kQ4_K_S = 14,
  kQ4_K_M = 15,
  kQ5_K_S = 16,
  kQ5_K_M = 17,
  kQ6_K = 18,
  kIQ4_NL = 25,
  kIQ4_XS = 30,
  kBF16 = 32,
};

// "Q4_K_M", "q8_0", ... -> the file type. False for unknown names; *known_later
// is set for mixes llama.cpp has and ember cannot write yet (Q2_K_S, IQ3_*,
// IQ2_*, ...), so the caller can say so.
bool ParseFileType(const std::string& name, FileType* out, bool* known_later);
const char* FileTypeName(FileType t);
// The names ParseFileType accepts, comma-separated, for messages.
std::string WritableFileTypeNames();

// The type of each matrix for this file type; the default for weight matrices.
GgmlType DefaultType(FileType t);

// One tensor's plan: its type in the output and why it is not the default.
struct TensorPlan {
  GgmlType type = GgmlType::kF32;
  bool convert = false;  // false: copied as it is (norms, 1-D tensors, same type)
  std::string note;      // "more bits (attn_v, layer 3)", "fallback: 896 columns", ...
};

// A matrix that was quantized already has this in its note, then the source
// type and what converting it does: "requantized from Q4_0: adds error to
// the source's" (to fewer or as many bits per weight) or "...: no more
// precise than the source" (to more, e.g. Q4_0 to F16: the file is larger,
// its weights are the Q4_0 ones). llama-quantize does it only with
// --allow-requantize; ember does it and says so.
inline constexpr const char* kRequantizedNote = "requantized from ";

// The order llama-quantize takes (and writes) tensors in: by layer ("blk.N."),
// tensors outside the layers first, then by name. Indices into in.tensors().
std::vector<size_t> QuantizationOrder(const GgufFile& in);

// Plans every tensor of `in` (out[i] for in.tensors()[i]), visiting them in
// QuantizationOrder: the rules' attn_v counter follows it.
// pure: no rules, every matrix the default type (llama-quantize --pure; the
// fallbacks for rows that are not whole blocks still apply). Errors: a tensor
// type ember cannot read back to floats, or a type it cannot write, where a
// tensor must be converted.
Status PlanQuantization(const GgufFile& in, FileType type, bool pure, std::vector<TensorPlan>* out);

}  // namespace ember
