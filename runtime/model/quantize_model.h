// Converting a GGUF model's weight matrices to another GGUF file type
// (`ember quantize`): the mixes of llama-quantize that ember can write (Q4_K_M,
// Q5_K_M, Q4_K_S, Q5_K_S, Q6_K, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, F16, BF16, F32;
// runtime/model/quant_mix.h chooses each tensor's type) from F32/F16/BF16, or
// requantizing a quantized model (through f32, so it adds error); or to
// ember's native layouts (kNativeLayouts).
#pragma once

#include <functional>
#include <string>

#include "platform/status.h"
#include "quant/ggml_type.h"
#include "runtime/model/quant_mix.h"

namespace ember {

struct QuantizeReport {
  int n_quantized = 0;  // tensors converted
  int n_copied = 0;     // tensors kept as they were (norms, 1-D, odd shapes)
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

// progress(done_fraction, tensor name); return false to cancel.
using QuantizeProgressFn = std::function<bool(float, const std::string&)>;
// Told of every converted tensor: its name, its type in the output, and why it
// is not the file type's default ("" when it is).
using QuantizeTensorFn =
    std::function<void(const std::string& name, GgmlType type, const std::string& note)>;

// `--type native`: every weight matrix the loader would repack is stored in
// the native layout it repacks to (quant/packed.h), so loading maps it with no
// repack and no copy. Other tensors are copied. Only ember reads such a file.
constexpr GgmlType kNativeLayouts = GgmlType::kEmberQ4x16;

struct QuantizeOptions {
  FileType type = FileType::kQ8_0;
  bool native = false;  // ember's layouts instead of `type`
  bool pure = false;    // every matrix the default type (llama-quantize --pure); fallbacks stay
  int n_threads = 0;    // 0: every core
  QuantizeTensorFn on_tensor;  // may be empty
};

// `ember quantize --type` names: the file types of quant_mix.h and "native".
// An unknown name is InvalidArgument; a llama.cpp mix ember cannot write yet
// (Q3_K_M, IQ4_XS, ...) is Unsupported, saying so.
Status ParseQuantizeOptions(const std::string& name, QuantizeOptions* out);

Status QuantizeModel(const std::string& in_path, const std::string& out_path,
                     const QuantizeOptions& options, const QuantizeProgressFn& progress,
                     QuantizeReport* report);

// The earlier interface, by tensor type: Q8_0, Q4_0, Q4_1, F16, F32 (their
// file types' mixes) and native (kNativeLayouts).
bool ParseQuantizeType(const std::string& name, GgmlType* out);
Status QuantizeModel(const std::string& in_path, const std::string& out_path, GgmlType type,
                     const QuantizeProgressFn& progress, QuantizeReport* report);

}  // namespace ember
