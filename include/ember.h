/*
 * ember.h: the public C API of ember, a CPU inference engine for GGUF LLMs.
 *
 * C99, no C++ types, no exceptions cross it. Every function that can fail
 * returns an ember_status; ember_last_error() then gives a message naming what
 * was wrong and where (file offset, tensor name, parameter), for the calling
 * thread. Handles are opaque. Ownership is stated per function. docs/API.md
 * is the reference by topic (threads, buffers, callbacks, cancellation).
 *
 * Threads: a model is read-only once loaded, and its sessions may run on
 * different threads at once. One session or sampler is used by one thread at
 * a time, except ember_session_cancel, which any thread may call.
 *
 * Typical use:
 *   ember_model* m;  ember_model_load("model.gguf", NULL, &m);
 *   ember_session* s; ember_session_create(m, NULL, &s);
 *   ember_generate_text(s, "Once upon a time", NULL, on_piece, user, &stats);
 *   ember_session_free(s); ember_model_free(m);
 */
#ifndef EMBER_H_
#define EMBER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Versions. EMBER_VERSION_* is the release of this header (CMake's project
 * version is read from these three lines); EMBER_API_VERSION counts
 * incompatible changes of the API and ABI (a removed or changed function, a
 * struct whose layout changed) and is the shared library's soname number
 * (libember.so.1). ember_version() and ember_api_version() give the values of
 * the library linked at run time, to compare with the header's. */
#define EMBER_VERSION_MAJOR 0
#define EMBER_VERSION_MINOR 1
#define EMBER_VERSION_PATCH 0
#define EMBER_VERSION_STRING "0.1.0"
#define EMBER_API_VERSION 1

const char* ember_version(void); /* "0.1.0" */
int32_t ember_api_version(void);

typedef enum ember_status {
  EMBER_OK = 0,
  EMBER_ERR_INVALID_ARGUMENT = 1, /* a parameter is out of range or NULL */
  EMBER_ERR_IO = 2,               /* a file could not be opened, read or written */
  EMBER_ERR_BAD_FORMAT = 3,       /* a file is malformed, truncated or inconsistent */
  EMBER_ERR_UNSUPPORTED = 4,      /* valid input that ember does not implement */
  EMBER_ERR_OUT_OF_MEMORY = 5,
  EMBER_ERR_CONTEXT_OVERFLOW = 6, /* more tokens than the context holds */
  EMBER_ERR_CANCELLED = 7,        /* a callback or ember_session_cancel stopped it */
  EMBER_ERR_BUFFER_TOO_SMALL = 8, /* the needed size was stored; call again */
  EMBER_ERR_INTERNAL = 9
} ember_status;

/* A constant name for a status, e.g. "EMBER_ERR_BAD_FORMAT" ("EMBER_ERR_UNKNOWN"
 * for a value that is not one). */
const char* ember_status_str(ember_status status);
/* The message of the last failed call on this thread. It is thread-local:
 * calls on other threads never change it. Every function returning an
 * ember_status clears it when it starts, so after EMBER_OK it is "". Valid
 * until the next ember call on this thread; never NULL. */
const char* ember_last_error(void);

typedef struct ember_model ember_model;
typedef struct ember_session ember_session;

/* ---- Models ------------------------------------------------------------ */

/* Called on the loading thread with the fraction of the weights loaded, in
 * [0, 1], non-decreasing, the last call with exactly 1. Return false to cancel:
 * ember_model_load then frees what it built and returns EMBER_ERR_CANCELLED. */
typedef bool (*ember_progress_fn)(float progress, void* user_data);

/* Whose arithmetic the sessions of a model follow. */
typedef enum ember_numerics {
  /* ember's kernels on weights repacked at load: the fastest (the default). */
  EMBER_NUMERICS_EMBER = 0,
  /* llama.cpp's CPU arithmetic, reproduced operation by operation: the same
   * logits, bit for bit, and so the same greedy tokens as llama.cpp built
   * natively for an x86-64 CPU with AVX-512 (0c1e57098), for llama-family
   * models with Q4_0, Q4_1 and Q8_0 weights, an f16 KV cache and llama.cpp's
   * defaults (flash attention, n_ubatch 512: use n_batch 512, the default in
   * this mode, and its thread count). Weights stay as stored in the file;
   * slower than EMBER_NUMERICS_EMBER (docs/API.md). Other weight types are
   * refused at load; q8 and f32 KV caches at session creation. */
  EMBER_NUMERICS_GGML = 1
} ember_numerics;

/* What a model's F32, F16 and BF16 weight matrices become at load. */
typedef enum ember_float_weights {
  /* Used as stored and multiplied in f32, without loss (the default). */
  EMBER_FLOAT_WEIGHTS_FLOAT = 0,
  /* Requantized to ember's int8 groups: half an F16 model's bytes per token,
   * so faster decoding, at a small loss (docs/FORMATS.md). */
  EMBER_FLOAT_WEIGHTS_INT8 = 1
} ember_float_weights;

/* How a model file's bytes are read. A mapped file that another process
 * truncates while it is mapped kills the process with SIGBUS when a page past
 * its new end is read; a copy in memory does not depend on the file once it is
 * read (docs/RELIABILITY.md). */
typedef enum ember_mmap_mode {
  /* Mapped (pages come in as they are read, and the page cache is shared with
   * other processes), except on network and user-space file systems (NFS,
   * SMB/CIFS, 9p, FUSE, Ceph, Lustre, ...), where the file is read into memory:
   * the default. */
  EMBER_MMAP_AUTO = 0,
  EMBER_MMAP_ON = 1, /* always mapped */
  EMBER_MMAP_OFF = 2 /* always read into memory (the CLI's --no-mmap) */
} ember_mmap_mode;

typedef struct ember_model_params {
  ember_progress_fn progress; /* may be NULL */
  void* progress_user_data;
  /* Load only the metadata and the vocabulary (as llama.cpp's vocab_only):
   * tokenizing, detokenizing and ember_model_get_info work, and a model of
   * any size loads in milliseconds; ember_session_create refuses it. */
  bool vocab_only; /* default false */
  /* An ember_numerics value (default EMBER_NUMERICS_EMBER). One byte, in what
   * was padding after vocab_only: the struct's size and layout are those of
   * API version 1. Start from ember_model_default_params(). */
  uint8_t numerics;
  /* An ember_float_weights value (default EMBER_FLOAT_WEIGHTS_FLOAT): what F32,
   * F16 and BF16 matrices become. One byte of the same padding: the size and
   * layout stay those of API version 1. */
  uint8_t float_weights;
  /* An ember_mmap_mode value (default EMBER_MMAP_AUTO). A mapped file that
   * shrank while the model loaded fails the load (EMBER_ERR_IO). The last byte
   * of the same padding (on 32-bit targets too): size and layout of API
   * version 1. */
  uint8_t mmap_mode;
} ember_model_params;

ember_model_params ember_model_default_params(void);

/* Loads a GGUF model. params may be NULL (defaults). On success *out owns the
 * model: free it with ember_model_free after every session using it. On
 * failure *out is NULL (when out is not). A tensor, file or repacked matrix
 * larger than the address space (size_t: 32 bits on armhf) is
 * EMBER_ERR_UNSUPPORTED, naming it, before anything is allocated for it. */
ember_status ember_model_load(const char* path, const ember_model_params* params,
                              ember_model** out);
void ember_model_free(ember_model* model); /* NULL is fine */

typedef struct ember_model_info {
  const char* architecture; /* valid while the model lives */
  const char* name;
  int32_t n_vocab;
  int32_t n_embd;
  int32_t n_layer;
  int32_t n_head;
  int32_t n_head_kv;
  int32_t head_dim;
  int32_t n_ff;
  int32_t n_ctx_train;
  float rope_freq_base;
  float rms_eps;
  bool tied_output;
  uint64_t n_params;     /* weight elements */
  uint64_t weight_bytes; /* bytes of all tensors in the file */
  uint64_t loaded_bytes; /* bytes of the matrices decode reads once per token, as loaded
                            (native layouts): the LM head and every layer's (an untied
                            embedding, read a row per token, is not counted). 0 for a
                            vocab_only model */
  const char* isa;       /* the kernel variant in use, e.g. "avx2" */
  int32_t bos_token;     /* -1 if none */
  int32_t eos_token;     /* -1 if none */
  bool add_bos;          /* the tokenizer prepends BOS to prompts */
} ember_model_info;

ember_status ember_model_get_info(const ember_model* model, ember_model_info* out);

/* One line per tensor ("name type [dims] bytes\n") into buf, NUL-terminated.
 * If buf_size is too small, returns EMBER_ERR_BUFFER_TOO_SMALL and writes
 * nothing; *needed (if not NULL) always gets the size needed including the
 * terminating NUL. */
ember_status ember_model_describe_tensors(const ember_model* model, char* buf, size_t buf_size,
                                          size_t* needed);

/* EMBER_OK when ember can run the model's architecture (a session can be
 * created once its weights are loaded); otherwise EMBER_ERR_UNSUPPORTED, and
 * ember_last_error() says why. A vocab_only load accepts any architecture whose
 * file has a vocabulary, so that tokenizing and ember_model_get_info work for
 * it (the hyper-parameters then are what the common GGUF keys say, or 0). */
ember_status ember_model_check_runnable(const ember_model* model);

/* The value of a string metadata key of the GGUF file (e.g.
 * "tokenizer.chat_template"), NUL-terminated, into buf. A key that is missing
 * or not a string is EMBER_ERR_INVALID_ARGUMENT. If buf_size is too small,
 * returns EMBER_ERR_BUFFER_TOO_SMALL and writes nothing; *needed (if not NULL)
 * always gets the size needed including the terminating NUL. */
ember_status ember_model_meta_string(const ember_model* model, const char* key, char* buf,
                                     size_t buf_size, size_t* needed);

/* ---- Machine ----------------------------------------------------------- */

/* Measures this machine's memory read bandwidth with n_threads threads (GB/s,
 * 1e9 bytes/s), reading a 256 MiB buffer; takes about a second. */
double ember_measure_read_bandwidth(int32_t n_threads);

/* What thread counts of 0 (auto) mean on this machine. Decode reads every
 * weight byte once per token: it gets the fewest big cores whose memory read
 * bandwidth reaches 95% of the peak; prefill is arithmetic: all big cores.
 * Little cores (big.LITTLE, hybrid) are not used, and sessions keep their
 * threads on the big cores where the OS allows. The bandwidth per thread count
 * is measured once (well under a second) and cached in
 * $EMBER_CACHE_DIR/bandwidth-v4.txt, else ~/.cache/ember/bandwidth-v4.txt. */
typedef struct ember_thread_plan {
  int32_t n_threads;       /* decode threads auto picks */
  int32_t n_threads_batch; /* prefill threads auto picks: the big cores */
  int32_t n_cpus;          /* cpus this process may use */
  int32_t n_big;           /* big cores among them (n_cpus on a homogeneous CPU) */
  double decode_read_gbps; /* measured read bandwidth with n_threads threads (GB/s) */
  double peak_read_gbps;   /* the best measured over 1..n_big threads (GB/s) */
} ember_thread_plan;

ember_status ember_get_thread_plan(ember_thread_plan* out);

/* ---- Tokens ------------------------------------------------------------ */

/* Caller buffers: a function that fills one takes its capacity and stores in
 * an out-parameter (*n_tokens, *n_bytes, *needed) the capacity with which the
 * call succeeds, also when it returns EMBER_ERR_BUFFER_TOO_SMALL: call again
 * with that much. The buffer may be NULL when its capacity is 0 (a size
 * query); a NULL buffer with a capacity above 0 is EMBER_ERR_INVALID_ARGUMENT. */

/* Tokenizes text_len bytes of UTF-8 (text may be NULL when text_len is 0).
 * add_special: add BOS/EOS as the model's metadata says. parse_special: text
 * spelling a special token ("<|im_start|>") becomes that token. *n_tokens
 * gets the number of ids; when capacity is less, returns
 * EMBER_ERR_BUFFER_TOO_SMALL and writes nothing. */
ember_status ember_tokenize(const ember_model* model, const char* text, size_t text_len,
                            bool add_special, bool parse_special, int32_t* tokens, size_t capacity,
                            size_t* n_tokens);

/* The bytes of one token (may be part of a UTF-8 character; not NUL-terminated).
 * render_special: control tokens give their text instead of nothing. *n_bytes
 * gets the length; when buf_size is less, returns EMBER_ERR_BUFFER_TOO_SMALL
 * and writes nothing. */
ember_status ember_token_to_piece(const ember_model* model, int32_t token, bool render_special,
                                  char* buf, size_t buf_size, size_t* n_bytes);

/* The text of n_tokens tokens (tokens may be NULL when n_tokens is 0), as
 * llama.cpp's llama_detokenize gives it: the space the tokenizer put before
 * the first word comes off, and vocabularies that ask for it lose the space
 * before punctuation. render_special: control tokens (BOS, "<|im_end|>") give
 * their text; otherwise they give nothing. The text is the tokens' bytes
 * exactly, so when the tokens end inside a UTF-8 character, so does the text
 * (streamed text comes from ember_generate's callback, which holds such bytes
 * back).
 * Writes the text and a NUL. *needed gets the size needed, the NUL included:
 * the text is *needed - 1 bytes (a byte token may put a NUL inside it). When
 * buf_size is less, returns EMBER_ERR_BUFFER_TOO_SMALL and (if buf_size > 0)
 * writes the longest prefix that fits followed by a NUL, cut before a UTF-8
 * character that does not fit whole. An id outside the vocabulary is
 * EMBER_ERR_INVALID_ARGUMENT. */
ember_status ember_detokenize(const ember_model* model, const int32_t* tokens, size_t n_tokens,
                              bool render_special, char* buf, size_t buf_size, size_t* needed);

/* ---- Sessions ---------------------------------------------------------- */

/* How the KV cache stores keys and values. */
typedef enum ember_kv_type {
  EMBER_KV_F16 = 0, /* 2 bytes per element (the default) */
  EMBER_KV_Q8 = 1,  /* int8 with one f32 scale per token and head: about half the bytes */
  EMBER_KV_F32 = 2  /* 4 bytes per element, no rounding: twice the bytes of f16 */
} ember_kv_type;

typedef struct ember_session_params {
  int32_t n_ctx;           /* 0: min(training context, 4096) */
  int32_t n_threads;       /* decode threads; 0: auto (ember_thread_plan) */
  int32_t n_threads_batch; /* prefill threads; 0: n_threads if set, else auto */
  int32_t n_batch;         /* prompt tokens per forward chunk; 0 (the default): 256,
                            * or 512 with EMBER_NUMERICS_GGML (llama.cpp's n_ubatch) */
  ember_kv_type kv_type;   /* default EMBER_KV_F16 */
  /* When the context is full: true (default) drops the oldest half of the
   * tokens after the first n_keep, re-rotates the surviving keys and goes on;
   * false makes a full context an EMBER_ERR_CONTEXT_OVERFLOW. */
  bool context_shift;
  /* Models with sliding-window layers (Gemma 3): false (default) keeps those
   * layers' keys and values in rings of about the window's size, so a long
   * context costs only the global layers' memory; true keeps the whole context
   * for them too (llama.cpp's --swa-full), which beam search needs. One byte
   * in what was padding after context_shift: the struct's layout is API
   * version 1's. */
  bool swa_full;
  /* Tokens at the start never dropped (0 <= n_keep < n_ctx; default 4: the
   * first tokens act as attention sinks, and dropping them hurts quality). */
  int32_t n_keep;
} ember_session_params;

ember_session_params ember_session_default_params(void);

/* A session keeps one conversation's KV cache. It borrows the model, which must
 * outlive it. Sessions of one model may run on different threads at once.
 * Before allocating, the memory the session needs (ember_session_memory_needed)
 * is checked against what the machine has available (MemAvailable in
 * /proc/meminfo, and the memory cgroup's limit less its usage): more is
 * EMBER_ERR_OUT_OF_MEMORY with a message giving the bytes needed and the
 * limit, and nothing allocated. */
ember_status ember_session_create(const ember_model* model, const ember_session_params* params,
                                  ember_session** out);

/* What ember_session_create_ex takes beyond ember_session_params, whose
 * layout (API version 1's) has no room left for it. Start from
 * ember_session_limits_default(). */
typedef struct ember_session_limits {
  /* The most bytes the session may allocate: its KV cache, the scratch
   * buffers of a forward pass and its logits (ember_session_memory_needed's
   * total). 0 (the default): what the machine has available, as
   * ember_session_create checks. Another value replaces that check: a
   * machine with swap may allow more than its available memory. */
  uint64_t max_memory;
} ember_session_limits;

ember_session_limits ember_session_limits_default(void);

/* ember_session_create with limits (NULL: the defaults). A session that would
 * need more than limits->max_memory is EMBER_ERR_OUT_OF_MEMORY, naming the
 * bytes needed and the limit, and nothing is allocated. */
ember_status ember_session_create_ex(const ember_model* model, const ember_session_params* params,
                                     const ember_session_limits* limits, ember_session** out);

/* The memory a session of these parameters (NULL: defaults) would allocate,
 * without allocating it: *kv_bytes the KV cache (what ember_session_kv_bytes
 * then gives), *scratch_bytes an upper bound of the rest (a forward pass of
 * n_batch tokens on its threads, the logits). Either may be NULL. Invalid
 * parameters are errors as for ember_session_create. */
ember_status ember_session_memory_needed(const ember_model* model,
                                         const ember_session_params* params, uint64_t* kv_bytes,
                                         uint64_t* scratch_bytes);
void ember_session_free(ember_session* session); /* NULL is fine */

/* Appends tokens to the context and computes the next-token logits, in
 * chunks of n_batch tokens. On error the session is unchanged, except after
 * ember_session_cancel: EMBER_ERR_CANCELLED, the chunks already computed stay
 * in the context (see ember_session_n_past) and there are no logits until the
 * next eval. */
ember_status ember_session_eval(ember_session* session, const int32_t* tokens, size_t n_tokens);

/* Scores text under the model (perplexity): appends tokens to the context
 * as ember_session_eval does, and writes logprobs[i] = log p(tokens[i] |
 * everything before it), natural log, for i in [0, n_tokens). logprobs[0]
 * uses the logits the session already had; it is NaN when there were none
 * (an empty context). Context shifts happen as in generation. */
ember_status ember_session_score(ember_session* session, const int32_t* tokens, size_t n_tokens,
                                 float* logprobs);

/* How ember_session_embed makes one vector of a text's token rows. */
typedef enum ember_pooling {
  EMBER_POOLING_MODEL = 0, /* the model's own (GGUF <arch>.pooling_type: mean, first or last);
                            * mean when it names none or has no such key */
  EMBER_POOLING_MEAN = 1,  /* the average of the rows */
  EMBER_POOLING_FIRST = 2, /* the first token's row (llama.cpp's "cls") */
  EMBER_POOLING_LAST = 3,  /* the last token's row (causal embedding models) */
  EMBER_POOLING_NONE = 4   /* every token's row */
} ember_pooling;

/* The embedding of tokens: the model's hidden states after its final norm,
 * pooled. out receives n_embd floats (n_tokens * n_embd for
 * EMBER_POOLING_NONE); out_len is out's size in floats
 * (EMBER_ERR_INVALID_ARGUMENT, naming the size needed, when it is smaller).
 * normalize: each vector scaled to unit length (as OpenAI's and
 * llama-server's). The tokens must fit in the context (no shift); the
 * context is cleared before and after, as ember_session_reset. Any decoder
 * gives hidden states; models trained for embeddings give useful ones.
 * EMBER_ERR_UNSUPPORTED for a model whose pooling is rank (a reranker). */
ember_status ember_session_embed(ember_session* session, const int32_t* tokens, size_t n_tokens,
                                 ember_pooling pooling, bool normalize, float* out, size_t out_len);

/* ember_session_embed of several inputs: inputs[i] holds n_tokens[i] tokens.
 * Inputs short enough to share a batch go through one forward pass, each
 * token seeing only its own input (so many short texts cost about what one
 * text of their total length does), and each vector is the one
 * ember_session_embed gives. out receives n_inputs * n_embd floats, input
 * i's at out + i * n_embd (EMBER_POOLING_NONE is refused here). Every input
 * is checked before any runs; on an error out is not written. */
ember_status ember_session_embed_batch(ember_session* session, const int32_t* const* inputs,
                                       const size_t* n_tokens, size_t n_inputs,
                                       ember_pooling pooling, bool normalize, float* out,
                                       size_t out_len);

/* The n_vocab logits (raw, before any sampler) for the token after the
 * context, as the last ember_session_eval or ember_generate left them. Owned
 * by the session; valid until the next call on it. NULL before any eval and
 * after ember_session_reset. */
const float* ember_session_logits(const ember_session* session);

/* Threads the session uses for decode steps (one token) and for prefill
 * (chunks of several tokens). */
int32_t ember_session_n_threads(const ember_session* session);
int32_t ember_session_n_threads_batch(const ember_session* session);

/* Tokens in the context, and how many it holds. */
int32_t ember_session_n_past(const ember_session* session);
int32_t ember_session_n_ctx(const ember_session* session);

/* Tokens dropped by context shifts so far, and bytes of the KV cache. */
int32_t ember_session_n_dropped(const ember_session* session);
size_t ember_session_kv_bytes(const ember_session* session);

/* Saves the context (tokens, KV rows, last logits) to a file, bound to this
 * model: a versioned format with a checksum, written to a temporary file and
 * renamed, so a failed save leaves no partial file at `path`. */
ember_status ember_session_save(const ember_session* session, const char* path);

/* Replaces the context with a saved one. Refused, with the session
 * unchanged: a file from another model (EMBER_ERR_INVALID_ARGUMENT), of
 * another kv_type (EMBER_ERR_INVALID_ARGUMENT), with more tokens than n_ctx
 * (EMBER_ERR_CONTEXT_OVERFLOW), truncated or corrupted (EMBER_ERR_BAD_FORMAT),
 * unreadable (EMBER_ERR_IO). */
ember_status ember_session_load(ember_session* session, const char* path);

/* Forgets the context (the cache is reused). */
void ember_session_reset(ember_session* session);

/* Asks the call running on the session (ember_session_eval, ember_generate,
 * ember_generate_text) to stop: it checks between prompt chunks of n_batch
 * tokens and between generated tokens, so it stops within one forward pass.
 * Any thread may call it at any time while the session exists, also from a
 * callback; it returns at once. What the stopped call returns is described
 * with each. Those calls clear the request when they start: a cancel while
 * none runs has no effect. NULL is ignored. */
void ember_session_cancel(ember_session* session);

/* ---- Continuous batching ----------------------------------------------- */

/* Sessions of one model that generate at the same time, each on its own
 * thread (a server's slots), can share their forward passes: a pass over a
 * few tokens reads every weight once, as one token's does, so N sequences
 * decode at nearly the cost of one. Attach the sessions to one batcher; each
 * keeps its own calls (ember_generate, ember_session_eval, ...), and the
 * batcher's worker thread runs the passes they hand in together. A session's
 * output is bit for bit what it is alone: never dependent on the others.
 * While others generate, a prompt goes in chunks of prefill_chunk tokens so
 * the others' next tokens do not wait for a whole prompt. docs/BATCHING.md. */
typedef struct ember_batcher ember_batcher;

typedef struct ember_batcher_params {
  int32_t prefill_chunk; /* >= 1 (default 32) */
  /* The least time (microseconds) a pass waits for the next steps of the
   * sessions generating in the last one (0..1000000; default 1000); it waits
   * up to the larger of this and half the last pass's time. */
  int32_t min_wait_us;
} ember_batcher_params;

ember_batcher_params ember_batcher_default_params(void);

ember_status ember_batcher_create(const ember_model* model, const ember_batcher_params* params,
                                  ember_batcher** out);
/* The batcher lives on while sessions are attached to it: it stops when it
 * is freed and the last of them is detached or freed. NULL is fine. */
void ember_batcher_free(ember_batcher* batcher);

/* Attaches the session to a batcher of its model (NULL detaches it). Not
 * while a call runs on the session. EMBER_ERR_INVALID_ARGUMENT for another
 * model's batcher; EMBER_ERR_UNSUPPORTED with EMBER_NUMERICS_GGML (llama.cpp's
 * arithmetic depends on the batch). */
ember_status ember_session_set_batcher(ember_session* session, ember_batcher* batcher);

typedef struct ember_batcher_stats {
  int64_t passes;        /* forward passes run */
  int64_t rows;          /* tokens computed in them */
  int64_t sequences;     /* session steps in them (a pass of 3 sessions counts 3) */
  int64_t max_sequences; /* most sessions in one pass */
  int64_t late;          /* passes that went without a generating session that was late */
} ember_batcher_stats;

ember_status ember_batcher_get_stats(const ember_batcher* batcher, ember_batcher_stats* out);

/* ---- Samplers ---------------------------------------------------------- */

/* A sampler chain: samplers applied in order to the next-token logits, the
 * last one a terminal selector that picks the token. docs/SAMPLING.md defines
 * each sampler. A chain has its own RNG (seeded) and history (penalties, DRY,
 * mirostat); it is not thread-safe: one chain per generation at a time. */
typedef struct ember_sampler ember_sampler;

typedef enum ember_sampler_type {
  EMBER_SAMPLER_LOGIT_BIAS = 0,
  EMBER_SAMPLER_PENALTIES = 1, /* repetition (CTRL), presence and frequency (OpenAI) */
  EMBER_SAMPLER_DRY = 2,
  EMBER_SAMPLER_TEMPERATURE = 3,
  EMBER_SAMPLER_TOP_K = 4,
  EMBER_SAMPLER_TOP_P = 5,
  EMBER_SAMPLER_MIN_P = 6,
  EMBER_SAMPLER_TYPICAL_P = 7,
  EMBER_SAMPLER_TOP_N_SIGMA = 8,
  EMBER_SAMPLER_XTC = 9,
  /* terminal selectors: exactly one, last */
  EMBER_SAMPLER_GREEDY = 10,
  EMBER_SAMPLER_DIST = 11, /* seeded random draw */
  EMBER_SAMPLER_MIROSTAT_V2 = 12,
  /* keeps the tokens a grammar allows next; its text is given to
   * ember_sampler_create_grammar (a spec of this type marks its place) */
  EMBER_SAMPLER_GRAMMAR = 13
} ember_sampler_type;

/* One sampler and its parameters; only the fields of its type are read.
 * Start from ember_sampler_spec_default(type). */
typedef struct ember_sampler_spec {
  ember_sampler_type type;
  float temperature;      /* TEMPERATURE: >= 0 (0 keeps only the maximum) */
  int32_t top_k;          /* TOP_K: >= 0 (0 keeps all) */
  float top_p;            /* TOP_P: (0, 1] */
  float min_p;            /* MIN_P: [0, 1] */
  float typical_p;        /* TYPICAL_P: (0, 1] */
  float top_n_sigma;      /* TOP_N_SIGMA: > 0 */
  float xtc_probability;  /* XTC: [0, 1] */
  float xtc_threshold;    /* XTC: [0, 1] */
  int32_t min_keep;       /* truncating samplers keep at least this many (>= 1) */
  int32_t penalty_last_n; /* PENALTIES: tokens of history (-1 all, 0 off) */
  float repeat_penalty;   /* PENALTIES: > 0, 1 = off */
  float presence_penalty;
  float frequency_penalty;
  float dry_multiplier; /* DRY */
  float dry_base;
  int32_t dry_allowed_length;
  int32_t dry_penalty_last_n;
  const char* const* dry_sequence_breakers; /* NULL: "\n", ":", "\"", "*" */
  size_t n_dry_sequence_breakers;
  const int32_t* logit_bias_ids; /* LOGIT_BIAS: n_logit_bias (id, bias) pairs */
  const float* logit_bias_values;
  size_t n_logit_bias;
  float mirostat_tau; /* MIROSTAT_V2 */
  float mirostat_eta;
} ember_sampler_spec;

ember_sampler_spec ember_sampler_spec_default(ember_sampler_type type);

/* Builds a chain of n specs, validating every parameter and the order (one
 * terminal sampler, last). model gives the vocabulary (size, and token text
 * for DRY); with model NULL, n_vocab must be given (and DRY sees no text).
 * The chain copies everything it needs from specs. */
ember_status ember_sampler_create(const ember_model* model, int32_t n_vocab,
                                  const ember_sampler_spec* specs, size_t n, uint64_t seed,
                                  ember_sampler** out);

/* llama.cpp-style settings, as `ember run` takes them. */
typedef struct ember_sampling_params {
  float temperature;                                         /* 0.8; 0 = greedy */
  int32_t top_k;                                             /* 40; 0 off */
  float top_p;                                               /* 0.95; 1 off */
  float min_p;                                               /* 0.05; 0 off */
  float typical_p;                                           /* 1 (off) */
  float top_n_sigma;                                         /* -1 (off) */
  float xtc_probability, xtc_threshold;                      /* 0 (off), 0.1 */
  int32_t penalty_last_n;                                    /* 64 */
  float repeat_penalty, presence_penalty, frequency_penalty; /* 1, 0, 0 (off) */
  float dry_multiplier, dry_base;                            /* 0 (off), 1.75 */
  int32_t dry_allowed_length, dry_penalty_last_n;            /* 2, -1 */
  int32_t mirostat;                                          /* 0 off, 2 = v2 (1 unsupported) */
  float mirostat_tau, mirostat_eta;                          /* 5, 0.1 */
  const int32_t* logit_bias_ids;
  const float* logit_bias_values;
  size_t n_logit_bias;
  /* Order of the samplers, names separated by ';' or ',' (llama.cpp's
   * --samplers: "penalties;dry;top_k;top_p;min_p;temperature"); NULL = the
   * default (docs/SAMPLING.md). Samplers whose settings make them inactive are
   * left out. */
  const char* samplers;
  uint64_t seed;
} ember_sampling_params;

ember_sampling_params ember_sampling_default_params(void);

/* The chain those settings describe (model or n_vocab as for ember_sampler_create). */
ember_status ember_sampler_from_params(const ember_model* model, int32_t n_vocab,
                                       const ember_sampling_params* params, ember_sampler** out);

void ember_sampler_free(ember_sampler* sampler); /* NULL is fine */

/* ---- Grammars: constrained output (docs/GRAMMAR.md) ---- */

/* A chain with a grammar stage: as ember_sampler_create, plus the grammar
 * `gbnf` (GBNF text in llama.cpp's syntax) with start rule `root` (NULL:
 * "root"). The stage masks the candidates to the tokens whose bytes continue
 * the grammar, and allows the end-of-generation tokens only where the grammar
 * may end. It runs where specs has an EMBER_SAMPLER_GRAMMAR entry, else before
 * the first spec that is not logit-bias, penalties or DRY. model is required
 * (the grammar needs the tokens' text). The grammar is compiled once per
 * model and shared; errors (EMBER_ERR_INVALID_ARGUMENT) give line and column,
 * or name an undefined rule or a left-recursive cycle. */
ember_status ember_sampler_create_grammar(const ember_model* model, const ember_sampler_spec* specs,
                                          size_t n, const char* gbnf, const char* root,
                                          uint64_t seed, ember_sampler** out);

/* As ember_sampler_from_params, with a grammar stage (placed as above, or
 * where params->samplers names "grammar"). model is required. */
ember_status ember_sampler_from_params_grammar(const ember_model* model,
                                               const ember_sampling_params* params,
                                               const char* gbnf, const char* root,
                                               ember_sampler** out);

/* GBNF for the JSON documents a JSON schema (JSON text) accepts, for the
 * grammar functions above. The supported keywords are listed in
 * docs/GRAMMAR.md; any other keyword is an error naming it
 * (EMBER_ERR_UNSUPPORTED), never ignored. "{\"type\": \"object\"}" gives any
 * JSON object. The text and its NUL go to buf; *length (if not NULL) gets the
 * bytes needed including the NUL; EMBER_ERR_BUFFER_TOO_SMALL if capacity is
 * less (buf may then be NULL). */
ember_status ember_json_schema_to_grammar(const char* schema, char* buf, size_t capacity,
                                          size_t* length);

/* Runs the chain on logits[n_vocab] and stores the chosen id in *token. Does
 * not record it in the history: call ember_sampler_accept with the token used.
 * trace: record every stage (see ember_sampler_trace). With a grammar stage,
 * *token is -1 when the grammar admits no token (generation should end;
 * ember_generate then finishes with EMBER_FINISH_GRAMMAR). */
ember_status ember_sampler_sample(ember_sampler* sampler, const float* logits, int32_t n_vocab,
                                  bool trace, int32_t* token);
/* Records the token used. With a grammar stage, a token the grammar does not
 * allow here is refused (EMBER_ERR_INVALID_ARGUMENT) and nothing changes. */
ember_status ember_sampler_accept(ember_sampler* sampler, int32_t token);
/* Forgets the history, starts a grammar over and reseeds the RNG. */
void ember_sampler_reset(ember_sampler* sampler);

typedef struct ember_candidate {
  int32_t id;
  float logit;
  float p;
} ember_candidate;

/* The distribution the terminal sampler saw in the last ember_sampler_sample,
 * most probable first. *n gets the count; EMBER_ERR_BUFFER_TOO_SMALL if
 * capacity is less (buf may then be NULL). */
ember_status ember_sampler_candidates(const ember_sampler* sampler, ember_candidate* buf,
                                      size_t capacity, size_t* n);

/* The trace of the last traced sample: n_stages() stages, one per sampler;
 * stage i is the sampler's name and its surviving candidates (p = softmax over
 * them), most probable first. */
size_t ember_sampler_trace_stages(const ember_sampler* sampler);
ember_status ember_sampler_trace(const ember_sampler* sampler, size_t stage, const char** name,
                                 ember_candidate* buf, size_t capacity, size_t* n);

/* ---- Generation -------------------------------------------------------- */

/* Called with each piece of generated text as soon as it is safe to emit:
 * complete UTF-8 (bytes of an unfinished character are held back) that can no
 * longer be part of a stop string. piece holds len bytes followed by a NUL
 * (not counted in len) and is valid during the call only. token is the id
 * that completed the piece. Called in order, on the thread that called
 * ember_generate; it may call ember_session_cancel but no other function on
 * the same session. Return true to go on, false to stop (finish reason
 * EMBER_FINISH_CANCELLED; held-back text is dropped). */
typedef bool (*ember_piece_fn)(const char* piece, size_t len, int32_t token, void* user_data);

typedef enum ember_finish_reason {
  EMBER_FINISH_LENGTH = 0,    /* n_predict tokens or the context is full */
  EMBER_FINISH_EOS = 1,       /* the model produced an end-of-generation token */
  EMBER_FINISH_STOP = 2,      /* a stop string (ember_generate_stats.stop_index) */
  EMBER_FINISH_CANCELLED = 3, /* a callback returned false, or ember_session_cancel */
  EMBER_FINISH_GRAMMAR = 4    /* the sampler's grammar admitted no token */
} ember_finish_reason;

const char* ember_finish_reason_str(ember_finish_reason reason); /* "length", "eos", ... */

typedef struct ember_token_prob {
  int32_t id;
  float p; /* under the model: softmax of the raw logits */
} ember_token_prob;

/* What ember knows of one generated token (see on_token_info). */
typedef struct ember_token_info {
  int32_t token;
  float logprob;               /* log p(token) under the model, before samplers */
  const ember_token_prob* top; /* the n_probs most likely candidates, most likely first */
  size_t n_top;
} ember_token_info;

typedef struct ember_generate_params {
  int32_t n_predict; /* tokens to generate at most, >= 0 (default 128) */
  /* How tokens are chosen: `sampler` if not NULL (borrowed; its history and
   * RNG advance; its grammar, if any, starts over for each call: the reply
   * follows the grammar from its start). Else: temperature 0 is greedy (ties
   * to the lowest id), temperature > 0 draws from softmax(logits / T) with
   * `seed`. */
  ember_sampler* sampler;
  float temperature;
  uint64_t seed;
  bool ignore_eos; /* keep going past end-of-generation tokens */
  /* Stop strings: generation ends where one begins; it is never emitted. */
  const char* const* stop;
  size_t n_stop;
  int32_t n_probs; /* candidates per token for on_token_info (0..1000) */
  /* Compute log-probabilities (stats.logprob, on_token_info); default true.
   * Costs a pass over the vocabulary per token. */
  bool logprobs;
  /* beams >= 1: beam search (samplers not applied, except a grammar stage of
   * `sampler`: every beam follows the grammar; 1 gives greedy's tokens, or
   * with a grammar the grammar-constrained greedy's). The text is emitted
   * when the search ends. */
  int32_t beams;
  float length_penalty; /* beam score = logprob / length^length_penalty (default 1) */
  /* Optional: called with each generated token id, in order, before its text. */
  bool (*on_token)(int32_t token, void* user_data);
  /* Optional: called with each generated token's log-probability and top
   * candidates (not with beam search), before its text. */
  bool (*on_token_info)(const ember_token_info* info, void* user_data);
  /* true: the prompt is the whole conversation so far; the longest prefix it
   * shares with the session's context is kept (stats.n_reused) and only the
   * rest is computed; the context after the shared part is discarded.
   * false (default): the prompt is appended to the context. */
  bool reuse_prefix;
} ember_generate_params;

ember_generate_params ember_generate_default_params(void);

typedef struct ember_generate_stats {
  int32_t n_prompt;
  int32_t n_reused; /* prompt tokens found in the context (reuse_prefix) */
  int32_t n_gen;
  ember_finish_reason finish_reason;
  int32_t stop_index; /* which stop string ended generation, or -1 */
  double logprob;     /* total log-probability of the generated tokens under the model */
  double prefill_seconds;
  double decode_seconds;
  double prefill_tokens_per_second; /* of the prompt tokens computed (n_prompt - n_reused) */
  double decode_tokens_per_second;
} ember_generate_stats;

/* Runs the prompt tokens, then generates, appending to the session's context
 * (the last generated token may not be in it yet: see ember_session_n_past).
 * params, on_piece and stats may be NULL. on_piece, on_token and
 * on_token_info all get user_data. Stopped by a callback or by
 * ember_session_cancel, it returns EMBER_OK with finish reason
 * EMBER_FINISH_CANCELLED; stopped during the prompt (stats.n_gen == 0), the
 * context keeps the prompt chunks already computed; a cancelled beam search
 * returns the best sequence so far and keeps the prompt alone in the context. An error before the
 * prompt is run leaves the session unchanged. */
ember_status ember_generate(ember_session* session, const int32_t* prompt, size_t n_prompt,
                            const ember_generate_params* params, ember_piece_fn on_piece,
                            void* user_data, ember_generate_stats* stats);

/* Same, tokenizing the prompt first (add_special, no special-token parsing). */
ember_status ember_generate_text(ember_session* session, const char* prompt,
                                 const ember_generate_params* params, ember_piece_fn on_piece,
                                 void* user_data, ember_generate_stats* stats);

/* ---- Speculative decoding ----------------------------------------------- */

/* Drafted tokens verified by the model in one small-batch pass: a pass over k
 * drafts costs little more than one token, and every draft the model agrees
 * with is a token for free. The output is token for token what
 * ember_generate gives with the same parameters, greedy or sampled (a draft
 * is kept only where the model's own choice equals it). Drafts come from a
 * smaller model of the same vocabulary, or from the context itself (prompt
 * lookup: the tokens that followed an earlier occurrence of the last few). */
typedef struct ember_speculative_params {
  ember_session* draft; /* a session of the draft model (borrowed), or NULL */
  int32_t lookup;       /* without a draft model: n-grams of up to this many tokens (1..8) */
  int32_t draft_max;    /* tokens drafted per step at most, 1..32 (default 8) */
  int32_t draft_min;    /* drafts shorter than this are not verified (default 0) */
  bool adaptive;        /* adapt the draft length to the acceptance and the measured cost, and
                           stop drafting where it does not pay (default true) */
} ember_speculative_params;

ember_speculative_params ember_speculative_default_params(void);

typedef struct ember_speculative_stats {
  int32_t n_steps;        /* model passes after the prompt */
  int32_t n_drafted;      /* drafted tokens verified */
  int32_t n_accepted;     /* of those, kept */
  double acceptance;      /* n_accepted / n_drafted */
  double tokens_per_step; /* generated tokens per model pass */
  double draft_seconds;
  double verify_seconds;
} ember_speculative_stats;

/* ember_generate with speculative decoding (spec: a draft model session or
 * lookup > 0). Beam search is not speculative (params->beams must be 0), nor
 * EMBER_NUMERICS_GGML. A draft model whose vocabulary differs from the
 * model's in a token that is not a special one is EMBER_ERR_INVALID_ARGUMENT,
 * naming the token. spec_stats may be NULL. */
ember_status ember_generate_speculative(ember_session* session, const int32_t* prompt,
                                        size_t n_prompt, const ember_generate_params* params,
                                        const ember_speculative_params* spec,
                                        ember_piece_fn on_piece, void* user_data,
                                        ember_generate_stats* stats,
                                        ember_speculative_stats* spec_stats);

/* ---- Chat -------------------------------------------------------------- */

/* Instruct models expect their chat template (Jinja, in the GGUF's
 * tokenizer.chat_template) around each message. ember renders it as Hugging
 * Face transformers does (docs/CHAT.md). */

/* How ember_chat_template_render renders (docs/CHAT.md). */
typedef struct ember_chat_template_params {
  bool add_generation_prompt; /* end with the assistant turn's header; default true */
  int32_t enable_thinking;    /* -1 (default): the variable is undefined; 0: false; 1: true */
  const char* bos_token;      /* the variables bos_token and eos_token; NULL: "" */
  const char* eos_token;
  const char* tools_json; /* a JSON array, the variable tools; NULL (default): undefined */
  const char* extra_json; /* a JSON object of more variables (chat_template_kwargs), or NULL */
  int64_t now_unix;       /* strftime_now's clock in seconds, UTC; -1 (default): now */
  const char* name;       /* names the template in errors; NULL: "chat template" */
} ember_chat_template_params;

ember_chat_template_params ember_chat_template_default_params(void);

/* Renders the Jinja chat template tmpl (NUL-terminated UTF-8, e.g. a model's
 * "tokenizer.chat_template" from ember_model_meta_string) for messages_json, a
 * JSON array of message objects {"role", "content", ...}, as Hugging Face
 * transformers renders it with Python's jinja2, and writes the text and a NUL
 * into buf. *needed (if not NULL) always gets the size needed, the NUL
 * included; when buf_size is less, returns EMBER_ERR_BUFFER_TOO_SMALL and
 * writes nothing. The template is parsed on every call and nothing is kept;
 * the strings are only read during the call. params may be NULL (defaults). A
 * template that does not parse is EMBER_ERR_BAD_FORMAT; one that raises
 * (raise_exception) or fails while rendering, and malformed JSON, are
 * EMBER_ERR_INVALID_ARGUMENT; ember_last_error() names the template line. */
ember_status ember_chat_template_render(const char* tmpl, const char* messages_json,
                                        const ember_chat_template_params* params, char* buf,
                                        size_t buf_size, size_t* needed);

/* The template a model's chats use, NUL-terminated, into buf: the GGUF's
 * tokenizer.chat_template (tokenizer.chat_template.NAME when template_name is
 * not NULL) or, when the file has none, the built-in one its vocabulary's
 * control tokens call for (see ember_chat_apply_template). *needed gets the
 * size needed, the NUL included; when buf_size is less, returns
 * EMBER_ERR_BUFFER_TOO_SMALL and writes nothing. *builtin (may be NULL) tells
 * whether it is ember's built-in one. No template: EMBER_ERR_INVALID_ARGUMENT. */
ember_status ember_chat_model_template(const ember_model* model, const char* template_name,
                                       char* buf, size_t buf_size, size_t* needed, bool* builtin);

/* Reasoning ("thinking") sections of a reply: the text a reasoning model
 * writes between its template's thinking markers (<think> ... </think> and
 * the other conventions docs/CHAT.md lists) before its answer. A splitter
 * separates a streamed reply into its reasoning and its content, for replies
 * generated outside ember_chat (a server's requests). Markers, and the
 * whitespace around them, are not emitted; text that could still become a
 * marker is held back until it cannot. */
typedef struct ember_reasoning ember_reasoning;

/* A splitter for replies under a chat template: template_source is its Jinja
 * source (NULL: the model's own, as ember_chat_model_template gives it).
 * EMBER_ERR_UNSUPPORTED when the template has no known thinking markers
 * (not a reasoning model's template). */
ember_status ember_reasoning_create(const ember_model* model, const char* template_source,
                                    ember_reasoning** out);
void ember_reasoning_free(ember_reasoning* reasoning); /* NULL is fine */

/* Whether a rendered generation prompt leaves a reasoning section open (its
 * last open marker after its last close marker): the reply then starts
 * inside it. */
bool ember_reasoning_prompt_opens(const ember_reasoning* reasoning, const char* prompt);

/* Starts a new reply, inside a reasoning section or not. */
void ember_reasoning_begin(ember_reasoning* reasoning, bool starts_inside);

/* Receives a decided part of the reply: reasoning (true) or content. */
typedef void (*ember_reasoning_fn)(bool reasoning, const char* text, size_t len, void* user_data);

/* Feeds the next piece of the reply; fn gets every part that is decided, in
 * order. Finish: the reply has ended; fn gets what was held back. A reply
 * that ends inside its reasoning leaves it all in the reasoning channel. */
ember_status ember_reasoning_feed(ember_reasoning* reasoning, const char* piece, size_t len,
                                  ember_reasoning_fn fn, void* user_data);
ember_status ember_reasoning_finish(ember_reasoning* reasoning, ember_reasoning_fn fn,
                                    void* user_data);

typedef struct ember_chat_message {
  const char* role;    /* "system", "user", "assistant" or "tool" */
  const char* content; /* UTF-8 */
} ember_chat_message;

/* Renders n_messages messages with a chat template into buf (UTF-8, then a
 * NUL): template_source if not NULL, else the model's own template (the GGUF's
 * tokenizer.chat_template, or tokenizer.chat_template.NAME when template_name
 * is not NULL). A model whose file has no template gets the built-in one its
 * vocabulary's control tokens call for (Gemma's <start_of_turn>, Llama 3's
 * <|start_header_id|>, ChatML's <|im_start|>), where llama.cpp would use
 * ChatML whatever the model. bos_token and eos_token are the model's.
 * add_generation_prompt: end with what opens the assistant's reply. *needed gets the size needed,
 * the NUL included; when buf_size is less, returns EMBER_ERR_BUFFER_TOO_SMALL and writes nothing. A
 * template that does not parse: EMBER_ERR_BAD_FORMAT; a model without a template, an unknown role,
 * invalid UTF-8, a template that raises an exception: EMBER_ERR_INVALID_ARGUMENT
 * (EMBER_ERR_UNSUPPORTED for a template feature ember does not implement); the message names the
 * line. */
ember_status ember_chat_apply_template(const ember_model* model, const char* template_source,
                                       const char* template_name,
                                       const ember_chat_message* messages, size_t n_messages,
                                       bool add_generation_prompt, char* buf, size_t buf_size,
                                       size_t* needed);

/* The same rendering as the tokens a chat feeds the model: special tokens
 * parsed, BOS (EOS) added as the model says, after taking off a BOS (EOS) the
 * template wrote itself, so that it is not there twice (as llama.cpp does).
 * *n_tokens gets their number; when capacity is less, returns
 * EMBER_ERR_BUFFER_TOO_SMALL and writes nothing. */
ember_status ember_chat_prompt_tokens(const ember_model* model, const char* template_source,
                                      const char* template_name, const ember_chat_message* messages,
                                      size_t n_messages, bool add_generation_prompt,
                                      int32_t* tokens, size_t capacity, size_t* n_tokens);

/* A conversation kept in a session: each ember_chat_send appends the user's
 * message, renders the whole conversation with the template and computes only
 * the tokens the session's cache does not hold yet (the new message), then
 * generates the reply and appends it. When the conversation would leave no
 * room for a reply, its oldest turns are dropped (never the system message,
 * never half a turn). Replies of reasoning models come in two channels: the
 * reasoning (between the template's thinking markers) and the answer. */
typedef struct ember_chat ember_chat;

typedef struct ember_chat_params {
  const char* system;          /* the system message; NULL or "": none */
  const char* template_source; /* NULL: the model's template */
  const char* template_name;   /* NULL: tokenizer.chat_template; else .NAME */
  /* Reasoning tokens after which the thinking section is closed (the close
   * marker is written into the context and the model answers); -1: no limit. */
  int32_t reasoning_budget;
  /* The template variable enable_thinking: -1 (default) leaves it undefined
   * (the template's default), 0 false, 1 true. */
  int32_t enable_thinking;
} ember_chat_params;

ember_chat_params ember_chat_default_params(void);

/* Creates a conversation in `session`, which it borrows (the session and its
 * model must outlive the chat; one chat per session). The template is parsed
 * here: an error names its line. */
ember_status ember_chat_create(ember_session* session, const ember_chat_params* params,
                               ember_chat** out);
void ember_chat_free(ember_chat* chat); /* NULL is fine; the session stays */

/* Which template the chat renders with, e.g. "tokenizer.chat_template" or
 * "ember's built-in gemma template (the model has none)"; owned by the chat. */
const char* ember_chat_template_name(const ember_chat* chat);

/* The reply as it is generated: piece holds len bytes of complete UTF-8 and a
 * NUL, valid during the call; reasoning tells which channel it belongs to.
 * Return false to stop the reply (it is kept as far as it got; finish reason
 * EMBER_FINISH_CANCELLED). */
typedef bool (*ember_chat_piece_fn)(const char* piece, size_t len, bool reasoning, void* user_data);

typedef struct ember_chat_stats {
  ember_generate_stats gen;     /* n_prompt: the whole rendered conversation */
  int32_t n_reasoning;          /* reply tokens inside the reasoning section */
  bool reasoning_budget_hit;    /* the budget closed the reasoning */
  int32_t n_dropped_messages;   /* old messages dropped to make room */
  double first_token_seconds;   /* from the call to the reply's first piece */
  ember_speculative_stats spec; /* with ember_chat_set_speculative; zero otherwise */
} ember_chat_stats;

/* Sends a user message and generates the reply. params as for ember_generate
 * (NULL: defaults; reuse_prefix and beams are ignored: a chat always reuses
 * its prefix and samples); on_piece and stats may be NULL. ember_session_cancel
 * stops the reply as a callback's false does. A message that is not valid
 * UTF-8, or that does not fit in the context even alone, is an error that
 * leaves the conversation unchanged. */
ember_status ember_chat_send(ember_chat* chat, const char* user_message,
                             const ember_generate_params* params, ember_chat_piece_fn on_piece,
                             void* user_data, ember_chat_stats* stats);

/* The tokens of the prompt the last ember_chat_send computed from (the whole
 * conversation rendered by the template), for checking the templating:
 * *n_tokens gets their number; when capacity is less, returns
 * EMBER_ERR_BUFFER_TOO_SMALL and writes nothing. */
ember_status ember_chat_last_prompt(const ember_chat* chat, int32_t* tokens, size_t capacity,
                                    size_t* n_tokens);

/* Makes the chat's replies speculative (spec as for
 * ember_generate_speculative; its draft session is borrowed and must outlive
 * the chat), or plain again with spec NULL. */
ember_status ember_chat_set_speculative(ember_chat* chat, const ember_speculative_params* spec);

/* Back to the system message alone. */
void ember_chat_reset(ember_chat* chat);

/* Messages so far (the system message included). */
size_t ember_chat_n_messages(const ember_chat* chat);

/* Message i's role, content and reasoning ("" if none), owned by the chat and
 * valid until the next call that changes it (send, reset, load, free). */
ember_status ember_chat_get_message(const ember_chat* chat, size_t i, const char** role,
                                    const char** content, const char** reasoning);

/* Saves the messages to a JSON file ({"messages": [{role, content,
 * reasoning_content?}]}), written to a temporary file and renamed. */
ember_status ember_chat_save(const ember_chat* chat, const char* path);

/* Replaces the messages with a saved conversation's (the next send computes
 * what the session's cache does not hold). A file that cannot be read or
 * parsed, or a message with an unknown role, is an error that leaves the chat
 * unchanged. */
ember_status ember_chat_load(ember_chat* chat, const char* path);

/* Self-consistency: k replies sampled from one prompt (computed once), each
 * split into reasoning and content at the model's thinking markers (those of
 * its chat template), and the final answer most of them state (a \boxed{}
 * argument, what follows "answer is", else the last number, else the last
 * line; docs/CHAT.md). */
typedef struct ember_consistency_sample {
  int32_t index;         /* 0 .. k-1 */
  const char* reasoning; /* "" if none */
  const char* content;   /* the reply after its reasoning */
  const char* answer;    /* the final answer read off content, normalised; "" if none */
  ember_finish_reason finish_reason;
  int32_t n_gen;
} ember_consistency_sample;

/* Called after each sample (strings valid during the call); false stops the
 * sampling, and the samples so far vote. */
typedef bool (*ember_consistency_fn)(const ember_consistency_sample* sample, void* user_data);

/* Samples k >= 1 replies to prompt as ember_generate would (params: NULL for
 * defaults; sample i draws with the sampler's specs seeded with params->seed +
 * i, or with the plain temperature draw; beams are not allowed) and writes the
 * winning answer (most votes, ties to the one reached first; replies without
 * an answer do not vote) into answer with a NUL, *needed getting the size
 * needed (EMBER_ERR_BUFFER_TOO_SMALL when answer_size is less; the sampling
 * is not repeated: call with a large enough buffer) and *votes (may be NULL)
 * its votes. The context holds the prompt and the last sample afterwards. */
ember_status ember_self_consistency(ember_session* session, const int32_t* prompt, size_t n_prompt,
                                    const ember_generate_params* params, int32_t k,
                                    ember_consistency_fn on_sample, void* user_data, char* answer,
                                    size_t answer_size, size_t* needed, int32_t* votes);

/* ---- Quantization ------------------------------------------------------ */

/* Called with the fraction done and the tensor being converted; false cancels. */
typedef bool (*ember_quantize_progress_fn)(float done, const char* tensor, void* user_data);

/* Writes a copy of the GGUF at in_path to out_path with its weight matrices
 * converted to the file type `type`: "Q4_K_M", "Q4_K_S", "Q5_K_M", "Q5_K_S",
 * "Q3_K_M", "Q3_K_S", "Q3_K_L", "Q2_K", "IQ4_NL", "IQ4_XS", "Q6_K", "Q8_0",
 * "Q4_0", "Q4_1", "Q5_0", "Q5_1", "F16", "BF16" or "F32", with
 * llama-quantize's choice of type per tensor (the output matrix Q6_K, more
 * bits for some attn_v / ffn_down layers in the _M mixes, a 32-block type for
 * rows that are not whole 256-blocks); norms and other vectors are copied. The
 * result loads in ember and in llama.cpp. type "native" instead stores each
 * matrix in the layout ember repacks it to at load, so that loading maps it
 * without repacking (same weights, same results); only ember reads that file.
 * The output appears only when complete. progress may be NULL. Uses every
 * core; ember_quantize_ex sets more. */
ember_status ember_quantize(const char* in_path, const char* out_path, const char* type,
                            ember_quantize_progress_fn progress, void* user_data);

/* Called for every converted tensor with its type in the output and, when
 * that is not the file type's default, why ("more bits (attn_v 0 of 24)",
 * "fallback: 896 columns are not whole Q4_K blocks"); for a matrix that was
 * quantized already, the note also holds "requantized from TYPE: adds error
 * to the source's" or, to a type of more bits, "requantized from TYPE: no
 * more precise than the source" (parts joined by "; "); else note is "". */
typedef void (*ember_quantize_tensor_fn)(const char* tensor, const char* type, const char* note,
                                         void* user_data);

typedef struct ember_quantize_params {
  const char* type;                    /* as ember_quantize's; default "Q8_0" */
  int32_t n_threads;                   /* 0 (default): every core */
  bool pure;                           /* every matrix the default type, no per-tensor
                                        * rules (llama-quantize --pure); fallbacks stay */
  ember_quantize_progress_fn progress; /* may be NULL */
  ember_quantize_tensor_fn on_tensor;  /* may be NULL */
  void* user_data;                     /* passed to both */
} ember_quantize_params;

ember_quantize_params ember_quantize_default_params(void);
ember_status ember_quantize_ex(const char* in_path, const char* out_path,
                               const ember_quantize_params* params);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_H_ */
