// peer_tool: a tiny driver over llama.cpp's public C API (llama.h), used as the
// reference ("peer") side of ember's correctness validation (scripts/validate.sh).
//
// It is NOT part of ember's build: scripts/build-peer.sh compiles it with g++
// directly against the llama.cpp it builds in ~/.cache/ember/peer.
//
//   peer_tool greedy   -m MODEL -p PROMPT -n N [-t THREADS] [--fa auto|on|off] [--kv f16|f32] [-v]
//       Greedy decode (argmax of the raw logits, ties -> lowest token id) of up
//       to N tokens; stops early at an end-of-generation token (which is not
//       included in "tokens"). Prints one JSON object on stdout:
//       {"prompt_tokens":[...],"tokens":[...],"text":"...","n_prompt":P,
//        "n_gen":G,"finish_reason":"stop"|"length","stop_token":ID|null,...}
//
//   peer_tool logits   -m MODEL (-p PROMPT | --tokens IDS) -o FILE [--prefill N] [--all]
//                      [-t THREADS] [--fa ...] [--kv ...] [-v]
//       Evaluates the prompt (or, with --tokens "id,id,...", exactly these
//       token ids, no tokenization) and writes the logits of the last position
//       as little-endian float32 (n_vocab floats) to FILE. Prints a small JSON
//       summary (n_prompt, n_vocab, argmax) on stdout.
//       By default all tokens go in one llama_decode call. --prefill N
//       evaluates the first N tokens in one call and then the rest one token
//       per call, i.e. exactly the schedule of `greedy` with an N-token prompt,
//       so the logits are bit-identical to those greedy based its choice on.
//       --all writes the logits of every position (n_tokens * n_vocab floats,
//       position-major) instead of only the last one.
//       --dump DIR writes every tensor the graph computes to DIR (see Dump),
//       to compare with ember's bench/forward_trace.cpp operation by operation.
//
//   peer_tool embed    -m MODEL (-p PROMPT | --tokens IDS) -o FILE [--pooling mean|cls|last|none]
//                      [-t THREADS] [-v]
//       llama.cpp's embedding of the prompt (a context with embeddings on and
//       that pooling, default mean; all tokens in one llama_decode call), not
//       normalized, as little-endian float32: n_embd floats, or n_tokens *
//       n_embd for none. Prints a JSON summary (n_prompt, n_embd, pooling).
//
//   peer_tool tokenize -m MODEL (-p TEXT | -f FILE) [--no-bos]
//       Prints the token ids on one line, separated by spaces.
//       add_special = !--no-bos, parse_special = false (text is plain text).
//
//   peer_tool pieces   -m MODEL --tokens IDS
//       Prints a JSON array with the text piece of each token id
//       (llama_token_to_piece, special tokens rendered), e.g. for reports.
//
// Prompt tokenization for greedy/logits: llama_tokenize(add_special=true,
// parse_special=true). That is what llama.cpp's own tools do for a plain
// prompt: examples/simple/simple.cpp calls llama_tokenize(vocab, prompt, ...,
// true, true) and tools/completion/completion.cpp calls
// common_tokenize(ctx, prompt, /*add_special*/ true, /*parse_special*/ true).
// add_special only adds BOS/EOS if the model's GGUF asks for it
// (tokenizer.ggml.add_bos_token); SmolLM2 sets add_bos_token=false, so no BOS
// is prepended. parse_special=true turns "<|im_start|>" etc. into their
// special-token ids instead of tokenizing them as plain text.
//
// Context: n_ctx = max(2048 or -c N, n_prompt + N), n_batch = n_ubatch =
// max(512, n_prompt) so the whole prompt is evaluated in one llama_decode call
// and one micro-batch. Flash attention: the library default
// (LLAMA_FLASH_ATTN_TYPE_AUTO, which on a CPU-only build resolves to
// *enabled*); override with --fa. KV cache type: library default (F16);
// override with --kv. Note: ggml's CPU flash-attention kernel works in F16
// (Q is converted to F16; with an F16 V cache the V accumulation is F16 too),
// so `--fa off --kv f32` is the most precise configuration llama.cpp offers.
// On SmolLM2-135M the two configurations differ by KL ~2e-3..1e-2 in the
// last-position logits and their greedy continuations part ways after a few
// tokens for most prompts.
// Threads: -t, default = number of online CPUs (results are identical for
// -t 1 and -t 2).
//
// llama.cpp / ggml log output is suppressed except errors (-v shows all).

#include "llama.h"

#include <algorithm>
#include <cerrno>
#include <clocale>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

bool g_verbose = false;
ggml_log_level g_last_level = GGML_LOG_LEVEL_NONE;

void log_cb(ggml_log_level level, const char * text, void * /*user*/) {
    // GGML_LOG_LEVEL_CONT continues the previous message
    if (level != GGML_LOG_LEVEL_CONT) {
        g_last_level = level;
    }
    if (g_verbose || g_last_level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
        fflush(stderr);
    }
}

[[noreturn]] void die(const std::string & msg) {
    fprintf(stderr, "peer_tool: error: %s\n", msg.c_str());
    exit(1);
}

void usage() {
    fprintf(stderr,
        "usage:\n"
        "  peer_tool greedy   -m MODEL -p PROMPT -n N [-t THREADS] [--fa auto|on|off] [--kv f16|f32] [-v]\n"
        "  peer_tool logits   -m MODEL (-p PROMPT | --tokens ID,ID,...) -o FILE [--prefill N] [--all]\n"
        "                     [--dump DIR] [-c N_CTX]\n"
        "                     [-t THREADS] [--fa auto|on|off] [--kv f16|f32] [-v]\n"
        "  peer_tool embed    -m MODEL (-p PROMPT | --tokens ID,ID,...) -o FILE\n"
        "                     [--pooling mean|cls|last|none] [-t THREADS] [-v]\n"
        "  peer_tool tokenize -m MODEL (-p TEXT | -f FILE) [--no-bos] [-v]\n"
        "  peer_tool pieces   -m MODEL --tokens ID,ID,... [-v]\n");
    exit(2);
}

struct Args {
    std::string mode;
    std::string model;
    std::string prompt;
    bool has_prompt = false;
    std::string file;
    std::string out;
    std::string token_ids;     // logits --tokens
    bool has_tokens = false;
    int prefill = -1;          // logits --prefill (-1: everything in one batch)
    bool all_logits = false;   // logits --all
    std::string dump_dir;      // logits --dump DIR
    int n_predict = 64;
    int n_ctx = 0;             // -c: the context size (0: max(2048, n_prompt + N))
    int n_threads = 0;
    bool no_bos = false;
    llama_flash_attn_type fa = LLAMA_FLASH_ATTN_TYPE_AUTO;
    ggml_type kv_type = GGML_TYPE_F16;  // library default
    enum llama_pooling_type pooling = LLAMA_POOLING_TYPE_MEAN;  // embed --pooling
};

int parse_int(const char * s, const char * what) {
    char * end = nullptr;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 1000000000L) {
        die(std::string("bad value for ") + what + ": " + s);
    }
    return (int) v;
}

Args parse_args(int argc, char ** argv) {
    if (argc < 2) usage();
    Args a;
    a.mode = argv[1];
    if (a.mode != "greedy" && a.mode != "logits" && a.mode != "tokenize" && a.mode != "pieces" &&
        a.mode != "embed") {
        usage();
    }
    for (int i = 2; i < argc; ++i) {
        std::string k = argv[i];
        auto val = [&]() -> const char * {
            if (i + 1 >= argc) die("missing value for " + k);
            return argv[++i];
        };
        if (k == "-m" || k == "--model") a.model = val();
        else if (k == "-p" || k == "--prompt") { a.prompt = val(); a.has_prompt = true; }
        else if (k == "-f" || k == "--file") a.file = val();
        else if (k == "-o" || k == "--out") a.out = val();
        else if (k == "--tokens") { a.token_ids = val(); a.has_tokens = true; }
        else if (k == "--prefill") a.prefill = parse_int(val(), "--prefill");
        else if (k == "--all") a.all_logits = true;
        else if (k == "--dump") a.dump_dir = val();
        else if (k == "-n" || k == "--n-predict") a.n_predict = parse_int(val(), "-n");
        else if (k == "-t" || k == "--threads") a.n_threads = parse_int(val(), "-t");
        else if (k == "-c" || k == "--ctx-size") a.n_ctx = parse_int(val(), "-c");
        else if (k == "--no-bos") a.no_bos = true;
        else if (k == "-v" || k == "--verbose") g_verbose = true;
        else if (k == "--fa") {
            std::string v = val();
            if (v == "auto") a.fa = LLAMA_FLASH_ATTN_TYPE_AUTO;
            else if (v == "on") a.fa = LLAMA_FLASH_ATTN_TYPE_ENABLED;
            else if (v == "off") a.fa = LLAMA_FLASH_ATTN_TYPE_DISABLED;
            else die("--fa must be auto, on or off");
        } else if (k == "--kv") {
            std::string v = val();
            if (v == "f16") a.kv_type = GGML_TYPE_F16;
            else if (v == "f32") a.kv_type = GGML_TYPE_F32;
            else die("--kv must be f16 or f32");
        } else if (k == "--pooling") {
            std::string v = val();
            if (v == "mean") a.pooling = LLAMA_POOLING_TYPE_MEAN;
            else if (v == "cls") a.pooling = LLAMA_POOLING_TYPE_CLS;
            else if (v == "last") a.pooling = LLAMA_POOLING_TYPE_LAST;
            else if (v == "none") a.pooling = LLAMA_POOLING_TYPE_NONE;
            else die("--pooling must be mean, cls, last or none");
        } else if (k == "-h" || k == "--help") usage();
        else die("unknown argument: " + k);
    }
    if (a.model.empty()) die("-m MODEL is required");
    if (a.mode == "tokenize") {
        if (a.has_prompt == !a.file.empty()) die("tokenize needs exactly one of -p TEXT or -f FILE");
    } else if (a.mode == "pieces") {
        if (!a.has_tokens || a.has_prompt) die("pieces needs --tokens IDS (and no -p)");
    } else if (a.mode == "logits" || a.mode == "embed") {
        if (a.has_prompt == a.has_tokens) die(a.mode + " needs exactly one of -p PROMPT or --tokens IDS");
        if (a.out.empty()) die(a.mode + " needs -o FILE");
    } else {
        if (!a.has_prompt) die(a.mode + " needs -p PROMPT");
    }
    if (a.mode != "logits" && (a.prefill >= 0 || a.all_logits || !a.dump_dir.empty())) {
        die("--prefill, --all and --dump are for logits mode only");
    }
    if (a.has_tokens && a.mode != "logits" && a.mode != "pieces" && a.mode != "embed") {
        die("--tokens is for logits, embed and pieces modes only");
    }
    if (a.n_threads <= 0) {
        unsigned hc = std::thread::hardware_concurrency();
        a.n_threads = hc ? (int) hc : 1;
    }
    return a;
}

std::string read_file(const std::string & path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) die("cannot open " + path);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// "id,id,..." (spaces allowed) -> token ids, each checked against n_vocab.
std::vector<llama_token> parse_token_ids(const std::string & s, int n_vocab) {
    std::vector<llama_token> ids;
    size_t i = 0;
    while (i < s.size()) {
        size_t j = s.find(',', i);
        if (j == std::string::npos) j = s.size();
        std::string item = s.substr(i, j - i);
        item.erase(0, item.find_first_not_of(" \t\n"));
        item.erase(item.find_last_not_of(" \t\n") + 1);
        if (item.empty()) die("--tokens: empty item in '" + s + "'");
        int v = parse_int(item.c_str(), "--tokens");
        if (v >= n_vocab) die("--tokens: id " + item + " out of range (n_vocab " + std::to_string(n_vocab) + ")");
        ids.push_back((llama_token) v);
        i = j + 1;
    }
    if (ids.empty()) die("--tokens: no token ids");
    return ids;
}

std::vector<llama_token> tokenize(const llama_vocab * vocab, const std::string & text,
                                  bool add_special, bool parse_special) {
    if (text.size() > (size_t) INT32_MAX) die("text too long");
    int32_t n = llama_tokenize(vocab, text.data(), (int32_t) text.size(), nullptr, 0,
                               add_special, parse_special);
    if (n == INT32_MIN) die("tokenization overflow");
    std::vector<llama_token> toks(n < 0 ? -n : n);
    if (!toks.empty()) {
        int32_t m = llama_tokenize(vocab, text.data(), (int32_t) text.size(), toks.data(),
                                   (int32_t) toks.size(), add_special, parse_special);
        if (m < 0) die("tokenization failed");
        toks.resize(m);
    }
    return toks;
}

// Detokenize a whole sequence at once (so multi-byte UTF-8 characters split
// over tokens come out right). Special tokens are rendered (like llama-simple).
std::string detokenize(const llama_vocab * vocab, const std::vector<llama_token> & toks) {
    if (toks.empty()) return "";
    std::string out(toks.size() * 16 + 64, '\0');
    int32_t n = llama_detokenize(vocab, toks.data(), (int32_t) toks.size(), out.data(),
                                 (int32_t) out.size(), /*remove_special*/ false,
                                 /*unparse_special*/ true);
    if (n < 0) {
        out.resize(-n);
        n = llama_detokenize(vocab, toks.data(), (int32_t) toks.size(), out.data(),
                             (int32_t) out.size(), false, true);
        if (n < 0) die("detokenization failed");
    }
    out.resize(n);
    return out;
}

// JSON string escaping. Invalid UTF-8 (e.g. generation cut in the middle of a
// multi-byte character) becomes U+FFFD so the output is always valid JSON.
std::string json_escape(const std::string & s) {
    std::string o = "\"";
    const auto * p = (const unsigned char *) s.data();
    size_t n = s.size(), i = 0;
    char buf[8];
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            switch (c) {
                case '"': o += "\\\""; break;
                case '\\': o += "\\\\"; break;
                case '\n': o += "\\n"; break;
                case '\r': o += "\\r"; break;
                case '\t': o += "\\t"; break;
                case '\b': o += "\\b"; break;
                case '\f': o += "\\f"; break;
                default:
                    if (c < 0x20 || c == 0x7f) {
                        snprintf(buf, sizeof(buf), "\\u%04x", c);
                        o += buf;
                    } else {
                        o += (char) c;
                    }
            }
            ++i;
            continue;
        }
        // validate one UTF-8 sequence
        size_t len = 0;
        uint32_t cp = 0, min = 0;
        if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min = 0x80; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
        else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
        bool ok = len != 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; ++k) {
            if ((p[i + k] & 0xC0) != 0x80) ok = false;
            else cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
        if (ok) {
            o.append(s, i, len);
            i += len;
        } else {
            o += "\\ufffd";
            ++i;
        }
    }
    o += '"';
    return o;
}

std::string json_ids(const std::vector<llama_token> & v) {
    std::string o = "[";
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) o += ',';
        o += std::to_string(v[i]);
    }
    return o + "]";
}

struct Session {
    llama_model * model = nullptr;
    llama_context * ctx = nullptr;
    const llama_vocab * vocab = nullptr;
    ~Session() {
        if (ctx) llama_free(ctx);
        if (model) llama_model_free(model);
    }
};

void load_model(Session & s, const Args & a, bool vocab_only) {
    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = vocab_only;
    mp.n_gpu_layers = 0;  // CPU build anyway
    s.model = llama_model_load_from_file(a.model.c_str(), mp);
    if (!s.model) die("unable to load model " + a.model);
    s.vocab = llama_model_get_vocab(s.model);
}

// --dump DIR: every tensor the graph computes (the scheduler's eval
// callback), in order: DIR/NNNN.f32 with its contiguous f32 data, and a line
// "NNNN.f32 name type ne0 ne1 ne2 ne3" in DIR/index.txt (non-f32 or
// non-contiguous tensors get a line and no file). bench/forward_trace.cpp
// writes ember's side.
struct Dump {
    std::string dir;
    FILE * index = nullptr;
    int counter = 0;
};

bool dump_cb(struct ggml_tensor * t, bool ask, void * user) {
    if (ask) return true;  // we want every tensor
    Dump & d = *(Dump *) user;
    char file[32];
    snprintf(file, sizeof(file), "%04d.f32", d.counter++);
    fprintf(d.index, "%s %s %s %lld %lld %lld %lld\n", file, t->name, ggml_type_name(t->type),
            (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3]);
    if (t->type == GGML_TYPE_F32 && ggml_is_contiguous(t)) {
        std::vector<float> buf(ggml_nelements(t));
        ggml_backend_tensor_get(t, buf.data(), 0, ggml_nbytes(t));
        if (FILE * f = fopen((d.dir + "/" + file).c_str(), "wb")) {
            fwrite(buf.data(), sizeof(float), buf.size(), f);
            fclose(f);
        }
    }
    return true;
}

Dump g_dump;

void make_context(Session & s, const Args & a, int n_prompt, int n_predict) {
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t) std::max(a.n_ctx > 0 ? a.n_ctx : 2048, n_prompt + n_predict + 1);
    cp.n_batch = (uint32_t) std::max(512, n_prompt);
    cp.n_ubatch = cp.n_batch;
    cp.n_seq_max = 1;
    cp.n_threads = a.n_threads;
    cp.n_threads_batch = a.n_threads;
    cp.flash_attn_type = a.fa;  // default: LLAMA_FLASH_ATTN_TYPE_AUTO
    cp.type_k = a.kv_type;      // default: GGML_TYPE_F16
    cp.type_v = a.kv_type;
    cp.no_perf = true;
    if (!a.dump_dir.empty()) {
        g_dump.dir = a.dump_dir;
        g_dump.index = fopen((a.dump_dir + "/index.txt").c_str(), "w");
        if (!g_dump.index) die("cannot write " + a.dump_dir + "/index.txt");
        cp.cb_eval = dump_cb;
        cp.cb_eval_user_data = &g_dump;
    }
    s.ctx = llama_init_from_model(s.model, cp);
    if (!s.ctx) die("failed to create llama_context");
}

// Decode `toks` starting at position pos0; only the last token's logits are
// requested (all positions' with all_logits, then read them with
// llama_get_logits_ith(ctx, i)). Returns a pointer to the last token's logits.
const float * decode(Session & s, const std::vector<llama_token> & toks, int pos0,
                     bool all_logits = false) {
    llama_batch b = llama_batch_init((int32_t) toks.size(), 0, 1);
    for (size_t i = 0; i < toks.size(); ++i) {
        b.token[i] = toks[i];
        b.pos[i] = pos0 + (llama_pos) i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = all_logits || (i + 1 == toks.size());
    }
    b.n_tokens = (int32_t) toks.size();
    int32_t rc = llama_decode(s.ctx, b);
    llama_batch_free(b);
    if (rc != 0) die("llama_decode failed with code " + std::to_string(rc));
    const float * logits = llama_get_logits_ith(s.ctx, -1);
    if (!logits) die("no logits");
    return logits;
}

llama_token argmax(const float * logits, int n_vocab) {
    // strict '>' so that ties resolve to the lowest token id
    int best = 0;
    for (int i = 1; i < n_vocab; ++i) {
        if (logits[i] > logits[best]) best = i;
    }
    return best;
}

int cmd_greedy(const Args & a) {
    Session s;
    load_model(s, a, false);
    std::vector<llama_token> prompt = tokenize(s.vocab, a.prompt, true, true);
    if (prompt.empty()) die("prompt tokenizes to zero tokens");
    make_context(s, a, (int) prompt.size(), a.n_predict);
    const int n_vocab = llama_vocab_n_tokens(s.vocab);

    std::vector<llama_token> gen;
    std::string finish = "length";
    llama_token stop_token = LLAMA_TOKEN_NULL;
    if (a.n_predict > 0) {
        const float * logits = decode(s, prompt, 0);
        int pos = (int) prompt.size();
        while (true) {
            llama_token t = argmax(logits, n_vocab);
            if (llama_vocab_is_eog(s.vocab, t)) {
                finish = "stop";
                stop_token = t;
                break;
            }
            gen.push_back(t);
            if ((int) gen.size() >= a.n_predict) break;
            logits = decode(s, {t}, pos);
            ++pos;
        }
    }

    std::string out = "{";
    out += "\"prompt_tokens\":" + json_ids(prompt);
    out += ",\"tokens\":" + json_ids(gen);
    out += ",\"text\":" + json_escape(detokenize(s.vocab, gen));
    out += ",\"n_prompt\":" + std::to_string(prompt.size());
    out += ",\"n_gen\":" + std::to_string(gen.size());
    out += ",\"finish_reason\":\"" + finish + "\"";
    out += ",\"stop_token\":" + (stop_token == LLAMA_TOKEN_NULL ? std::string("null")
                                                                 : std::to_string(stop_token));
    out += ",\"n_vocab\":" + std::to_string(n_vocab);
    out += ",\"flash_attn_type\":\"" + std::string(llama_flash_attn_type_name(a.fa)) + "\"";
    out += ",\"kv_type\":\"" + std::string(ggml_type_name(a.kv_type)) + "\"";
    out += ",\"n_threads\":" + std::to_string(a.n_threads);
    out += "}\n";
    fputs(out.c_str(), stdout);
    return 0;
}

void append_f32le(std::vector<unsigned char> & bytes, const float * v, int n) {
    size_t off = bytes.size();
    bytes.resize(off + (size_t) n * 4);
    for (int i = 0; i < n; ++i) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        bytes[off + 4 * i + 0] = (unsigned char) (u & 0xff);
        bytes[off + 4 * i + 1] = (unsigned char) ((u >> 8) & 0xff);
        bytes[off + 4 * i + 2] = (unsigned char) ((u >> 16) & 0xff);
        bytes[off + 4 * i + 3] = (unsigned char) ((u >> 24) & 0xff);
    }
}

int cmd_logits(const Args & a) {
    Session s;
    load_model(s, a, false);
    const int n_vocab = llama_vocab_n_tokens(s.vocab);
    std::vector<llama_token> prompt = a.has_tokens ? parse_token_ids(a.token_ids, n_vocab)
                                                   : tokenize(s.vocab, a.prompt, true, true);
    if (prompt.empty()) die("prompt tokenizes to zero tokens");
    const int n = (int) prompt.size();
    // schedule: first n_first tokens in one call, then one token per call
    const int n_first = a.prefill < 0 ? n : std::max(1, std::min(a.prefill, n));
    make_context(s, a, n_first, n - n_first);

    std::vector<unsigned char> bytes;
    bytes.reserve((size_t) (a.all_logits ? n : 1) * n_vocab * 4);
    std::vector<llama_token> first(prompt.begin(), prompt.begin() + n_first);
    const float * logits = decode(s, first, 0, a.all_logits);
    if (a.all_logits) {
        for (int i = 0; i < n_first; ++i) {
            const float * li = llama_get_logits_ith(s.ctx, i);
            if (!li) die("no logits for position " + std::to_string(i));
            append_f32le(bytes, li, n_vocab);
        }
    }
    for (int i = n_first; i < n; ++i) {
        logits = decode(s, {prompt[i]}, i);
        if (a.all_logits) append_f32le(bytes, logits, n_vocab);
    }
    if (!a.all_logits) append_f32le(bytes, logits, n_vocab);
    if (g_dump.index) fclose(g_dump.index);

    FILE * f = fopen(a.out.c_str(), "wb");
    if (!f) die("cannot open " + a.out + " for writing");
    if (fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || fclose(f) != 0) {
        die("write to " + a.out + " failed");
    }
    printf("{\"prompt_tokens\":%s,\"n_prompt\":%zu,\"n_vocab\":%d,\"argmax\":%d,"
           "\"n_positions\":%d,\"prefill\":%d,"
           "\"flash_attn_type\":\"%s\",\"kv_type\":\"%s\"}\n",
           json_ids(prompt).c_str(), prompt.size(), n_vocab, argmax(logits, n_vocab),
           a.all_logits ? n : 1, n_first,
           llama_flash_attn_type_name(a.fa), ggml_type_name(a.kv_type));
    return 0;
}

int cmd_tokenize(const Args & a) {
    Session s;
    load_model(s, a, /*vocab_only*/ true);
    std::string text = a.has_prompt ? a.prompt : read_file(a.file);
    std::vector<llama_token> toks = tokenize(s.vocab, text, /*add_special*/ !a.no_bos,
                                             /*parse_special*/ false);
    std::string out;
    out.reserve(toks.size() * 6 + 1);
    for (size_t i = 0; i < toks.size(); ++i) {
        if (i) out += ' ';
        out += std::to_string(toks[i]);
    }
    out += '\n';
    fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}

int cmd_pieces(const Args & a) {
    Session s;
    load_model(s, a, /*vocab_only*/ true);
    const int n_vocab = llama_vocab_n_tokens(s.vocab);
    std::vector<llama_token> ids = parse_token_ids(a.token_ids, n_vocab);
    std::string out = "[";
    std::vector<char> buf(256);
    for (size_t i = 0; i < ids.size(); ++i) {
        int32_t n = llama_token_to_piece(s.vocab, ids[i], buf.data(), (int32_t) buf.size(), 0, true);
        if (n < 0) {
            buf.resize(-n);
            n = llama_token_to_piece(s.vocab, ids[i], buf.data(), (int32_t) buf.size(), 0, true);
            if (n < 0) die("llama_token_to_piece failed");
        }
        if (i) out += ',';
        out += json_escape(std::string(buf.data(), n));
    }
    out += "]\n";
    fputs(out.c_str(), stdout);
    return 0;
}

}  // namespace

int cmd_embed(const Args & a) {
    Session s;
    load_model(s, a, false);
    const int n_vocab = llama_vocab_n_tokens(s.vocab);
    std::vector<llama_token> prompt = a.has_tokens ? parse_token_ids(a.token_ids, n_vocab)
                                                   : tokenize(s.vocab, a.prompt, true, true);
    if (prompt.empty()) die("prompt tokenizes to zero tokens");
    const int n = (int) prompt.size();
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t) std::max(a.n_ctx > 0 ? a.n_ctx : 512, n + 1);
    cp.n_batch = (uint32_t) std::max(512, n);
    cp.n_ubatch = cp.n_batch;  // the whole prompt in one micro-batch (pooling needs it)
    cp.n_seq_max = 1;
    cp.n_threads = a.n_threads;
    cp.n_threads_batch = a.n_threads;
    cp.embeddings = true;
    cp.pooling_type = a.pooling;
    cp.no_perf = true;
    s.ctx = llama_init_from_model(s.model, cp);
    if (!s.ctx) die("failed to create llama_context");
    llama_batch b = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; ++i) {
        b.token[i] = prompt[i];
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = true;  // an output row for every token (pooled over all of them)
    }
    b.n_tokens = n;
    const int32_t rc = llama_decode(s.ctx, b);
    llama_batch_free(b);
    if (rc != 0) die("llama_decode failed with code " + std::to_string(rc));
    const int n_embd = llama_model_n_embd(s.model);
    std::vector<unsigned char> bytes;
    if (a.pooling == LLAMA_POOLING_TYPE_NONE) {
        for (int i = 0; i < n; ++i) {
            const float * e = llama_get_embeddings_ith(s.ctx, i);
            if (!e) die("no embedding for position " + std::to_string(i));
            append_f32le(bytes, e, n_embd);
        }
    } else {
        const float * e = llama_get_embeddings_seq(s.ctx, 0);
        if (!e) die("no pooled embedding");
        append_f32le(bytes, e, n_embd);
    }
    FILE * f = fopen(a.out.c_str(), "wb");
    if (!f) die("cannot open " + a.out + " for writing");
    if (fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || fclose(f) != 0) {
        die("write to " + a.out + " failed");
    }
    printf("{\"prompt_tokens\":%s,\"n_prompt\":%d,\"n_embd\":%d,\"pooling\":%d}\n",
           json_ids(prompt).c_str(), n, n_embd, (int) a.pooling);
    return 0;
}

int main(int argc, char ** argv) {
    std::setlocale(LC_NUMERIC, "C");
    Args a = parse_args(argc, argv);
    llama_log_set(log_cb, nullptr);
    llama_backend_init();
    int rc = 0;
    if (a.mode == "greedy") rc = cmd_greedy(a);
    else if (a.mode == "logits") rc = cmd_logits(a);
    else if (a.mode == "pieces") rc = cmd_pieces(a);
    else if (a.mode == "embed") rc = cmd_embed(a);
    else rc = cmd_tokenize(a);
    llama_backend_free();
    return rc;
}
