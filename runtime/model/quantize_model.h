// Converting a GGUF model's weight matrices to another GGUF type
// (`ember quantize`): F32/F16/BF16 -> Q8_0/Q4_0/Q4_1/F16/F32, and
// requantizing from Q8_0/Q4_0/Q4_1 (through f32, so it adds error); or to
// ember's native layouts (kNativeLayouts).
#pragma once

#include <functional>
#include <string>

#include "platform/status.h"
#include "quant/ggml_type.h"

namespace ember {

struct QuantizeReport {
  int n_quantized = 0;  // tensors converted
  int n_copied = 0;     // tensors kept as they were (norms, 1-D, odd shapes)
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

// progress(done_fraction, tensor name); return false to cancel.
using QuantizeProgressFn = std::function<bool(float, const std::string&)>;

// `--type native`: every weight matrix the loader would repack is stored in
// the native layout it repacks to (quant/packed.h), so loading maps it with no
// repack and no copy. Other tensors are copied. Only ember reads such a file.
constexpr GgmlType kNativeLayouts = GgmlType::kEmberQ4x16;

// Types `ember quantize --type` accepts: Q8_0, Q4_0, Q4_1, F16, F32, and
// native (kNativeLayouts).
bool ParseQuantizeType(const std::string& name, GgmlType* out);

Status QuantizeModel(const std::string& in_path, const std::string& out_path, GgmlType type,
                     const QuantizeProgressFn& progress, QuantizeReport* report);

}  // namespace ember
