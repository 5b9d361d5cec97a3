#include "runtime/model/quantize_model.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "quant/packed.h"
#include "quant/quantize.h"
#include "runtime/gguf/gguf.h"
#include "runtime/gguf/gguf_writer.h"

namespace ember {
namespace {

// llama.cpp's general.file_type values (LLAMA_FTYPE_*) for the types we write.
uint32_t FileType(GgmlType t) {
  switch (t) {
    case GgmlType::kF32:
      return 0;
    case GgmlType::kF16:
      return 1;
    case GgmlType::kQ4_0:
      return 2;
    case GgmlType::kQ4_1:
      return 3;
    case GgmlType::kQ8_0:
      return 7;
    default:
      return 0;
  }
}

// Weight matrices are converted; norms, biases and other vectors stay as they are.
bool IsConvertible(const GgufTensorInfo& t, GgmlType target) {
  if (t.n_dims < 2) return false;
  if (t.ne[0] % FindGgmlType(static_cast<uint32_t>(target))->block_elems != 0) return false;
  return CanDequantize(t.type) && t.type != target;
}

// What Model::Load repacks, so packed here: 2-D matrices of a repackable type
// with whole tiles of 16 rows (others keep their type and are repacked at
// load), and the token embedding only when repacking it is exact (its rows are
// also read one by one for lookups).
bool IsNativePackable(const GgufTensorInfo& t) {
  if (t.n_dims != 2 || !CanRepack(t.type)) return false;
  if (t.ne[1] % kTileRows != 0 || t.ne[0] % kGroupCols != 0) return false;
  return t.name != "token_embd.weight" || RepackIsExact(t.type);
}

}  // namespace

bool ParseQuantizeType(const std::string& name, GgmlType* out) {
  static const std::pair<const char*, GgmlType> kTypes[] = {
      {"Q8_0", GgmlType::kQ8_0}, {"Q4_0", GgmlType::kQ4_0}, {"Q4_1", GgmlType::kQ4_1},
      {"F16", GgmlType::kF16},   {"F32", GgmlType::kF32},   {"NATIVE", kNativeLayouts},
  };
  for (const auto& [n, t] : kTypes) {
    std::string upper;
    for (char c : name) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    if (upper == n) {
      *out = t;
      return true;
    }
  }
  return false;
}

Status QuantizeModel(const std::string& in_path, const std::string& out_path, GgmlType type,
                     const QuantizeProgressFn& progress, QuantizeReport* report) {
  const bool native = type == kNativeLayouts;
  if (!native && (!CanQuantize(type) || type == GgmlType::kQ8_1)) {
    return InvalidArgument(std::string("cannot quantize to ") + GgmlTypeName(type));
  }
  if (in_path == out_path) return InvalidArgument("the output must not overwrite the input");
  std::unique_ptr<GgufFile> in;
  EMBER_RETURN_IF_ERROR(GgufFile::Open(in_path, &in));
  *report = QuantizeReport();
  GgufWriter w;
  for (const GgufKv& kv : in->kvs()) {
    if (kv.key == "general.file_type" || kv.key == "general.quantization_version") continue;
    w.CopyKv(kv);
  }
  if (native) {  // the source's file type still names its quantization
    if (const GgufValue* ft = in->Find("general.file_type")) {
      w.SetUint32("general.file_type", static_cast<uint32_t>(ft->u));
    }
  } else {
    w.SetUint32("general.file_type", FileType(type));
  }
  w.SetUint32("general.quantization_version", 2);

  uint64_t total = 0, done = 0;
  for (const GgufTensorInfo& t : in->tensors()) total += t.n_elements();
  std::vector<float> row;
  std::vector<uint8_t> out;
  for (const GgufTensorInfo& t : in->tensors()) {
    std::vector<uint64_t> dims(t.ne, t.ne + t.n_dims);
    report->bytes_in += t.n_bytes;
    if (native && IsNativePackable(t)) {
      const int64_t cols = static_cast<int64_t>(t.ne[0]), rows = static_cast<int64_t>(t.ne[1]);
      PackedMatrix p;
      Status s = Repack(t.type, t.data, rows, cols, &p);
      if (!s.ok()) return Status(s.code(), "tensor '" + t.name + "': " + s.message());
      EMBER_RETURN_IF_ERROR(
          w.AddTensor(t.name, NativeTypeFor(t.type), dims, p.data.get(), p.bytes()));
      ++report->n_quantized;
      report->bytes_out += p.bytes();
    } else if (native || !IsConvertible(t, type)) {
      EMBER_RETURN_IF_ERROR(w.AddTensor(t.name, t.type, dims, t.data, t.n_bytes));
      ++report->n_copied;
      report->bytes_out += t.n_bytes;
    } else {
      const int64_t cols = static_cast<int64_t>(t.ne[0]);
      const int64_t rows = static_cast<int64_t>(t.n_elements() / t.ne[0]);
      const size_t in_row = GgmlRowBytes(t.type, t.ne[0]);
      const size_t out_row = GgmlRowBytes(type, t.ne[0]);
      row.resize(static_cast<size_t>(cols));
      out.resize(out_row * static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        DequantizeRow(t.type, t.data + static_cast<size_t>(r) * in_row, row.data(), cols);
        QuantizeRow(type, row.data(), out.data() + static_cast<size_t>(r) * out_row, cols);
      }
      EMBER_RETURN_IF_ERROR(w.AddTensor(t.name, type, dims, out.data(), out.size()));
      ++report->n_quantized;
      report->bytes_out += out.size();
    }
    done += t.n_elements();
    if (progress && !progress(static_cast<float>(done) / static_cast<float>(total), t.name)) {
      return Status(Code::kCancelled, "quantization was cancelled");
    }
  }
  // Written to a temporary name and renamed: a failure never leaves a partial
  // file under the output name.
  const std::string tmp = out_path + ".part";
  Status s = w.WriteFile(tmp);
  if (!s.ok()) {
    std::remove(tmp.c_str());
    return s;
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return IoError("cannot rename '" + tmp + "' to '" + out_path + "'");
  }
  return Status::Ok();
}

}  // namespace ember
