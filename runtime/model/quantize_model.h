// Converting a GGUF model's weight matrices to another GGUF file type
// (`ember quantize`): the mixes of llama-quantize that ember can write
// (runtime/model/quant_mix.h lists them and chooses each tensor's type) from
// F32/F16/BF16, or
// requantizing a quantized model (through f32, so it adds error); or to
// ember's native layouts (QuantizeOptions::native).
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

struct QuantizeOptions {
  FileType type = FileType::kQ8_0;
  // ember's layouts instead of `type`: every weight matrix the loader would
  // repack is stored in the native layout it repacks to (quant/packed.h), so
  // loading maps it with no repack and no copy. Other tensors are copied. Only
  // ember reads such a file.
  bool native = false;
  bool pure = false;  // every matrix the default type (llama-quantize --pure); fallbacks stay
  int n_threads = 0;  // 0: every core
  QuantizeTensorFn on_tensor;  // may be empty
};

// `ember quantize --type` names: the file types of quant_mix.h and "native".
// An unknown name is InvalidArgument; a llama.cpp mix ember cannot write yet
// (IQ4_XS, Q2_K_S, ...) is Unsupported, saying so.
Status ParseQuantizeOptions(const std::string& name, QuantizeOptions* out);

Status QuantizeModel(const std::string& in_path, const std::string& out_path,
                     const QuantizeOptions& options, const QuantizeProgressFn& progress,
                     QuantizeReport* report);

}  // namespace ember
