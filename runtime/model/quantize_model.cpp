#include "runtime/model/quantize_model.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "ops/fgemm.h"
#include "quant/packed.h"
#include "quant/quantize.h"
#include "runtime/gguf/gguf.h"
#include "runtime/gguf/gguf_writer.h"

namespace ember {
namespace {

// What Model::Load repacks, so packed here: 2-D matrices of a repackable type
// with whole tiles of 16 rows (others keep their type and are repacked at
// load), and the token embedding only when repacking it is exact (its rows are
// also read one by one for lookups). F32, F16 and BF16 matrices stay as they
// are: the loader multiplies them as stored.
bool IsNativePackable(const GgufTensorInfo& t) {
  if (t.n_dims != 2 || !CanRepack(t.type) || IsFloatWeight(t.type)) return false;
  if (t.ne[1] % kTileRows != 0 || t.ne[0] % kGroupCols != 0) return false;
  return t.name != "token_embd.weight" || RepackIsExact(t.type);
}

// Rows [0, rows) of a tensor from its type to `to`, through f32, on up to
// n_threads threads, in slices so that progress can be told between them.
// Rows are independent, so the bytes do not depend on the thread count.
Status ConvertRows(const GgufTensorInfo& t, GgmlType to, int n_threads,
                   const std::function<bool(double)>& slice_done, std::vector<uint8_t>* out) {
  const int64_t cols = static_cast<int64_t>(t.ne[0]);
  const int64_t rows = static_cast<int64_t>(t.n_elements() / t.ne[0]);
  const size_t in_row = GgmlRowBytes(t.type, t.ne[0]);
  const size_t out_row = GgmlRowBytes(to, t.ne[0]);
  out->resize(out_row * static_cast<size_t>(rows));
  // About 4 M weights per slice: a progress step of well under a second.
  const int64_t slice = std::max<int64_t>(1, (int64_t{4} << 20) / std::max<int64_t>(1, cols));
  for (int64_t r0 = 0; r0 < rows; r0 += slice) {
    const int64_t r1 = std::min(rows, r0 + slice);
#pragma omp parallel num_threads(n_threads) if (n_threads > 1 && r1 - r0 > 1)
    {
      std::vector<float> row(static_cast<size_t>(cols));
#pragma omp for schedule(static)
      for (int64_t r = r0; r < r1; ++r) {
        DequantizeRow(t.type, t.data + static_cast<size_t>(r) * in_row, row.data(), cols);
        QuantizeRow(to, row.data(), out->data() + static_cast<size_t>(r) * out_row, cols);
      }
    }
    if (slice_done && !slice_done(static_cast<double>(r1) / static_cast<double>(rows))) {
      return Status(Code::kCancelled, "quantization was cancelled");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ParseQuantizeOptions(const std::string& name, QuantizeOptions* out) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  if (upper == "NATIVE") {
    out->native = true;
    return Status::Ok();
  }
  bool later = false;
  if (ParseFileType(name, &out->type, &later)) {
    out->native = false;
    return Status::Ok();
  }
  const std::string known = " (ember writes: " + WritableFileTypeNames() + ", native)";
  if (later) return Unsupported("ember cannot write " + upper + " files yet" + known);
  return InvalidArgument("unknown quantization type '" + name + "'" + known);
}

Status QuantizeModel(const std::string& in_path, const std::string& out_path,
                     const QuantizeOptions& options, const QuantizeProgressFn& progress,
                     QuantizeReport* report) {
  if (in_path == out_path) return InvalidArgument("the output must not overwrite the input");
  std::unique_ptr<GgufFile> in;
  EMBER_RETURN_IF_ERROR(GgufFile::Open(in_path, &in));
  std::vector<TensorPlan> plan;
  if (!options.native) {
    EMBER_RETURN_IF_ERROR(PlanQuantization(*in, options.type, options.pure, &plan));
  }
  int n_threads = options.n_threads;
  if (n_threads <= 0)
    n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  *report = QuantizeReport();
  GgufWriter w;
  for (const GgufKv& kv : in->kvs()) {
    if (kv.key == "general.file_type" || kv.key == "general.quantization_version") continue;
    w.CopyKv(kv);
  }
  // Last, in llama-quantize's order (so a mix can be its bytes exactly).
  w.SetUint32("general.quantization_version", 2);
  if (options.native) {  // the source's file type still names its quantization
    if (const GgufValue* ft = in->Find("general.file_type")) {
      w.SetUint32("general.file_type", static_cast<uint32_t>(ft->u));
    }
  } else {
    w.SetUint32("general.file_type", static_cast<uint32_t>(options.type));
  }

  uint64_t total = 0, done = 0;
  for (const GgufTensorInfo& t : in->tensors()) total += t.n_elements();
  auto tell = [&](double within, const GgufTensorInfo& t) {
    const double f = (static_cast<double>(done) + within * static_cast<double>(t.n_elements())) /
                     static_cast<double>(total);
    return !progress || progress(static_cast<float>(f), t.name);
  };
  // In llama-quantize's order (by layer, then name), so that a file of a mix
  // can be the same bytes as its.
  std::vector<uint8_t> out;
  for (size_t i : QuantizationOrder(*in)) {
    const GgufTensorInfo& t = in->tensors()[i];
    std::vector<uint64_t> dims(t.ne, t.ne + t.n_dims);
    report->bytes_in += t.n_bytes;
    if (options.native && IsNativePackable(t)) {
      const int64_t cols = static_cast<int64_t>(t.ne[0]), rows = static_cast<int64_t>(t.ne[1]);
      PackedMatrix p;
      Status s = Repack(t.type, t.data, rows, cols, &p);
      if (!s.ok()) return Status(s.code(), "tensor '" + t.name + "': " + s.message());
      EMBER_RETURN_IF_ERROR(
          w.AddTensor(t.name, NativeTypeFor(t.type), dims, p.data.get(), p.bytes()));
      ++report->n_quantized;
      report->bytes_out += p.bytes();
    } else if (options.native || !plan[i].convert) {
      EMBER_RETURN_IF_ERROR(w.AddTensor(t.name, t.type, dims, t.data, t.n_bytes));
      ++report->n_copied;
      report->bytes_out += t.n_bytes;
    } else {
      Status s = ConvertRows(
          t, plan[i].type, n_threads, [&](double f) { return tell(f, t); }, &out);
      if (s.code() == Code::kCancelled) return s;
      EMBER_RETURN_IF_ERROR(s);
      EMBER_RETURN_IF_ERROR(w.AddTensor(t.name, plan[i].type, dims, out.data(), out.size()));
      ++report->n_quantized;
      report->bytes_out += out.size();
      if (options.on_tensor) options.on_tensor(t.name, plan[i].type, plan[i].note);
    }
    done += t.n_elements();
    if (!tell(0.0, t)) return Status(Code::kCancelled, "quantization was cancelled");
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
