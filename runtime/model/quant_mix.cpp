#include "runtime/model/quant_mix.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "quant/quantize.h"

namespace ember {
namespace {

struct FileTypeInfo {
  FileType type;
  const char* name;
  GgmlType default_type;
};

constexpr FileTypeInfo kFileTypes[] = {
    {FileType::kF32, "F32", GgmlType::kF32},
    {FileType::kF16, "F16", GgmlType::kF16},
    {FileType::kBF16, "BF16", GgmlType::kBF16},
    {FileType::kQ4_0, "Q4_0", GgmlType::kQ4_0},
    {FileType::kQ4_1, "Q4_1", GgmlType::kQ4_1},
    {FileType::kQ5_0, "Q5_0", GgmlType::kQ5_0},
    {FileType::kQ5_1, "Q5_1", GgmlType::kQ5_1},
    {FileType::kQ8_0, "Q8_0", GgmlType::kQ8_0},
    {FileType::kQ4_K_S, "Q4_K_S", GgmlType::kQ4_K},
    {FileType::kQ4_K_M, "Q4_K_M", GgmlType::kQ4_K},
    {FileType::kQ5_K_S, "Q5_K_S", GgmlType::kQ5_K},
    {FileType::kQ5_K_M, "Q5_K_M", GgmlType::kQ5_K},
    {FileType::kQ6_K, "Q6_K", GgmlType::kQ6_K},
    {FileType::kQ2_K, "Q2_K", GgmlType::kQ2_K},
    {FileType::kQ3_K_S, "Q3_K_S", GgmlType::kQ3_K},
    {FileType::kQ3_K_M, "Q3_K_M", GgmlType::kQ3_K},
    {FileType::kQ3_K_L, "Q3_K_L", GgmlType::kQ3_K},
    {FileType::kIQ4_NL, "IQ4_NL", GgmlType::kIQ4_NL},
    {FileType::kIQ4_XS, "IQ4_XS", GgmlType::kIQ4_XS},
};

// llama-quantize's other file types: named so that asking for one says "not
// yet" rather than "unknown".
constexpr const char* kLaterTypes[] = {"Q2_K_S", "Q3_K",  "Q4_K",    "Q5_K",   "IQ3_XXS",  "IQ3_XS",
                                       "IQ3_S",  "IQ3_M", "IQ2_XXS", "IQ2_XS", "IQ2_S",    "IQ2_M",
                                       "IQ1_S",  "IQ1_M", "TQ1_0",   "TQ2_0",  "MXFP4_MOE"};

std::string Upper(const std::string& s) {
  std::string out;
  for (char c : s) out += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return out;
}

// What a tensor is, for the rules (by name, as llama-quantize tells them).
enum class Role { kOutput, kTokenEmbd, kAttnV, kAttnK, kAttnQ, kAttnOutput, kFfnDown, kOther };

bool Has(const std::string& name, const char* part) { return name.find(part) != std::string::npos; }

Role RoleOf(const std::string& name) {
  if (name == "output.weight") return Role::kOutput;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Role::kTokenEmbd;
  // Fused QKV and MLA's kv_b count as attn_v (the sensitive ones).
  if (Has(name, "attn_qkv.weight") || Has(name, "attn_kv_b.weight") || Has(name, "attn_v.weight")) {
    return Role::kAttnV;
  }
  if (Has(name, "attn_k.weight")) return Role::kAttnK;
  if (Has(name, "attn_q.weight")) return Role::kAttnQ;
  if (Has(name, "attn_output.weight")) return Role::kAttnOutput;
  if (Has(name, "ffn_down")) return Role::kFfnDown;
  return Role::kOther;
}

// Matrices that are converted at all: 2-D or more, named "*weight", and not
// one of the small or sensitive tensors llama-quantize keeps as they are.
bool Quantizable(const GgufTensorInfo& t) {
  if (t.n_dims < 2) return false;
  const std::string& n = t.name;
  if (n.size() < 6 || n.compare(n.size() - 6, 6, "weight") != 0) return false;
  static const char* const kKept[] = {"_norm.weight",
                                      "ffn_gate_inp.weight",
                                      "altup",
                                      "laurel",
                                      "per_layer_model_proj",
                                      "ssm_conv1d",
                                      "shortconv.conv.weight",
                                      "attn_rel_b.weight",
                                      ".position_embd",
                                      ".rel_pos",
                                      ".patch_embd",
                                      "time_mix_first.weight"};
  for (const char* k : kKept) {
    if (Has(n, k)) return false;
  }
  return n != "position_embd.weight" && n != "token_types.weight";
}

bool IsIq4(FileType ft) { return ft == FileType::kIQ4_NL || ft == FileType::kIQ4_XS; }

// More bits for the first and last eighth of the layers and every third one
// between (llama-quantize's use_more_bits).
bool UseMoreBits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

int64_t BlockElems(GgmlType t) { return FindGgmlType(static_cast<uint32_t>(t))->block_elems; }

double BitsPerWeight(GgmlType t) {
  const GgmlTypeTraits* tr = FindGgmlType(static_cast<uint32_t>(t));
  return 8.0 * tr->block_bytes / tr->block_elems;
}

bool IsQuantizedType(GgmlType t) {
  return t != GgmlType::kF32 && t != GgmlType::kF16 && t != GgmlType::kBF16;
}

// Counters that the rules read, advanced as tensors go by in file order.
struct MixState {
  int n_attn_v = 0, n_layer = 0, n_expert = 0, n_gqa = 1;
  bool falcon = false;
  int i_attn_v = 0, i_ffn_down = 0;
  bool tied = true;  // no output.weight: the embedding is also the output
};

// The rules for one tensor, from the file type's default.
GgmlType ChooseType(FileType ft, const GgufTensorInfo& t, Role role, bool pure, MixState* st,
                    std::string* note) {
  GgmlType type = DefaultType(ft);
  char buf[96];
  if (pure) {
    // No rules: straight to the fallback below.
  } else if (role == Role::kOutput || (st->tied && role == Role::kTokenEmbd)) {
    // The output matrix: Q6_K, or Q8_0 when its rows are not whole blocks.
    if (static_cast<int64_t>(t.ne[0]) % BlockElems(type) != 0) {
      type = GgmlType::kQ8_0;
    } else if (type != GgmlType::kQ8_0) {
      type = GgmlType::kQ6_K;
    }
    if (type != DefaultType(ft)) *note = "output";
  } else if (role == Role::kAttnV) {
    const int i = st->i_attn_v++;
    if (ft == FileType::kQ2_K) {
      type = st->n_gqa >= 4 ? GgmlType::kQ4_K : GgmlType::kQ3_K;
    } else if (ft == FileType::kQ3_K_M) {
      type = i < 2 ? GgmlType::kQ5_K : GgmlType::kQ4_K;
    } else if (ft == FileType::kQ3_K_L) {
      type = GgmlType::kQ5_K;
    } else if (IsIq4(ft) && st->n_gqa >= 4) {
      type = GgmlType::kQ5_K;
    } else if ((ft == FileType::kQ4_K_M || ft == FileType::kQ5_K_M) &&
               UseMoreBits(i, st->n_attn_v)) {
      type = GgmlType::kQ6_K;
    } else if (ft == FileType::kQ4_K_S && i < 4) {
      type = GgmlType::kQ5_K;
    }
    if (st->n_expert == 8) type = GgmlType::kQ8_0;
    std::snprintf(buf, sizeof(buf), "more bits (attn_v %d of %d)", i, st->n_attn_v);
    if (type != DefaultType(ft)) *note = buf;
  } else if (role == Role::kAttnK) {
    if (st->n_expert == 8) type = GgmlType::kQ8_0;
  } else if (role == Role::kFfnDown) {
    const int i = st->i_ffn_down++, n = st->n_layer;
    if (ft == FileType::kQ2_K) {
      type = GgmlType::kQ3_K;
    } else if (ft == FileType::kQ3_K_M) {
      type = i < n / 16                         ? GgmlType::kQ5_K
             : !st->falcon || UseMoreBits(i, n) ? GgmlType::kQ4_K
                                                : GgmlType::kQ3_K;
    } else if (ft == FileType::kQ3_K_L) {
      type = st->falcon ? GgmlType::kQ4_K : GgmlType::kQ5_K;
    } else if (ft == FileType::kQ4_K_M && UseMoreBits(i, n)) {
      type = GgmlType::kQ6_K;
    } else if (IsIq4(ft) && i < n / 8) {  // llama-quantize: without an importance matrix
      type = GgmlType::kQ5_K;
    } else if (ft == FileType::kQ5_K_M && UseMoreBits(i, n)) {
      type = GgmlType::kQ6_K;
    } else if (ft == FileType::kQ4_K_S && i < n / 8) {
      type = GgmlType::kQ5_K;
    }
    std::snprintf(buf, sizeof(buf), "more bits (ffn_down %d of %d)", i, n);
    if (type != DefaultType(ft)) *note = buf;
  } else if (role == Role::kAttnOutput) {
    if (st->falcon) {
      if (ft == FileType::kQ3_K_L) type = GgmlType::kQ4_K;
    } else if (st->n_expert == 8) {
      if (ft == FileType::kQ2_K || ft == FileType::kQ3_K_S || ft == FileType::kQ3_K_M ||
          ft == FileType::kQ4_K_S || ft == FileType::kQ4_K_M || IsIq4(ft)) {
        type = GgmlType::kQ5_K;
      }
    } else if (ft == FileType::kQ2_K) {
      type = GgmlType::kQ3_K;
    } else if (ft == FileType::kQ3_K_M) {
      type = GgmlType::kQ4_K;
    } else if (ft == FileType::kQ3_K_L) {
      type = GgmlType::kQ5_K;
    }
    if (type != DefaultType(ft)) *note = "more bits (attn_output)";
  }
  // Rows that are not whole blocks: the 32-block type of about the same size.
  if (static_cast<int64_t>(t.ne[0]) % BlockElems(type) != 0) {
    const GgmlType before = type;
    switch (type) {
      case GgmlType::kQ4_K:
        type = GgmlType::kQ5_0;
        break;
      case GgmlType::kQ5_K:
        type = GgmlType::kQ5_1;
        break;
      case GgmlType::kQ6_K:
        type = GgmlType::kQ8_0;
        break;
      case GgmlType::kQ2_K:
      case GgmlType::kQ3_K:
        type = GgmlType::kQ4_0;
        break;
      case GgmlType::kIQ4_XS:
        type = GgmlType::kIQ4_NL;
        break;
      default:
        break;
    }
    if (static_cast<int64_t>(t.ne[0]) % BlockElems(type) != 0) type = GgmlType::kF16;
    std::snprintf(buf, sizeof(buf), "fallback: %llu columns are not whole %s blocks",
                  static_cast<unsigned long long>(t.ne[0]), GgmlTypeName(before));
    *note = note->empty() ? buf : *note + "; " + buf;
  }
  return type;
}

// The layer of "blk.N.*" (-1 for other tensors), as llama.cpp reads it.
int LayerOf(const std::string& name) {
  int layer = -1;
  if (std::sscanf(name.c_str(), "blk.%d.", &layer) != 1) layer = -1;
  return layer;
}

}  // namespace

std::vector<size_t> QuantizationOrder(const GgufFile& in) {
  const auto& ts = in.tensors();
  std::vector<size_t> order(ts.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = LayerOf(ts[a].name), lb = LayerOf(ts[b].name);
    if (la != lb) return la < lb;
    return ts[a].name < ts[b].name;
  });
  return order;
}

bool ParseFileType(const std::string& name, FileType* out, bool* known_later) {
  const std::string upper = Upper(name);
  *known_later = false;
  for (const FileTypeInfo& f : kFileTypes) {
    if (upper == f.name) {
      *out = f.type;
      return true;
    }
  }
  for (const char* n : kLaterTypes) {
    if (upper == n) *known_later = true;
  }
  return false;
}

const char* FileTypeName(FileType t) {
  for (const FileTypeInfo& f : kFileTypes) {
    if (f.type == t) return f.name;
  }
  return "unknown";
}

std::string WritableFileTypeNames() {
  std::string out;
  for (const FileTypeInfo& f : kFileTypes) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

GgmlType DefaultType(FileType t) {
  for (const FileTypeInfo& f : kFileTypes) {
    if (f.type == t) return f.default_type;
  }
  return GgmlType::kF32;
}

Status PlanQuantization(const GgufFile& in, FileType ft, bool pure, std::vector<TensorPlan>* out) {
  MixState st;
  std::string arch;
  if (const GgufValue* a = in.Find("general.architecture")) arch = std::string(a->str);
  st.n_layer = static_cast<int>(in.GetUintOr(arch + ".block_count", 0));
  st.n_expert = static_cast<int>(in.GetUintOr(arch + ".expert_count", 0));
  st.falcon = arch == "falcon";
  const uint64_t n_head = in.GetUintOr(arch + ".attention.head_count", 1);
  const uint64_t n_head_kv = in.GetUintOr(arch + ".attention.head_count_kv", n_head);
  st.n_gqa = n_head_kv > 0 ? static_cast<int>(n_head / n_head_kv) : 1;
  for (const GgufTensorInfo& t : in.tensors()) {
    const Role r = RoleOf(t.name);
    if (r == Role::kAttnV) ++st.n_attn_v;
    if (r == Role::kOutput) st.tied = false;
  }
  out->assign(in.tensors().size(), TensorPlan());
  for (size_t index : QuantizationOrder(in)) {
    const GgufTensorInfo& t = in.tensors()[index];
    TensorPlan& p = (*out)[index];
    p.type = t.type;
    if (Quantizable(t)) {
      const GgmlType target = DefaultType(ft);
      p.type =
          IsQuantizedType(target) ? ChooseType(ft, t, RoleOf(t.name), pure, &st, &p.note) : target;
      p.convert = p.type != t.type;
      if (p.convert && IsQuantizedType(t.type)) {
        // llama-quantize refuses this without --allow-requantize; ember
        // converts, and says what it costs (the note holds kRequantizedNote).
        std::string why = std::string(kRequantizedNote) + GgmlTypeName(t.type);
        why += BitsPerWeight(p.type) > BitsPerWeight(t.type) ? ": no more precise than the source"
                                                             : ": adds error to the source's";
        p.note = p.note.empty() ? why : p.note + "; " + why;
      }
      if (p.convert && !CanDequantize(t.type)) {
        return Unsupported("tensor '" + t.name + "' has type " + GgmlTypeName(t.type) +
                           ", which ember cannot read back to floats to requantize");
      }
      if (p.convert && !CanQuantize(p.type)) {
        return Unsupported("tensor '" + t.name + "' would be " + GgmlTypeName(p.type) +
                           ", which ember cannot write yet");
      }
    }
  }
  return Status::Ok();
}

}  // namespace ember
