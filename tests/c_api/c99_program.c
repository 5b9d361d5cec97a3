/* A C99 program against include/ember.h: loads a model, generates with a
 * streaming callback that stops early, checks statuses and errors.
 * Usage: c99_program MODEL.gguf */
#include <stdio.h>
#include <string.h>

#include "ember.h"

struct counter {
  int pieces;
  int tokens;
  size_t bytes;
};

static bool on_piece(const char* piece, size_t len, int32_t token, void* user_data) {
  struct counter* c = (struct counter*)user_data;
  (void)piece;
  (void)token;
  c->pieces++;
  c->bytes += len;
  return c->pieces < 4; /* stop after four pieces */
}

static bool on_token(int32_t token, void* user_data) {
  struct counter* c = (struct counter*)user_data;
  (void)token;
  c->tokens++;
  return true;
}

#define EXPECT(cond)                                                              \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "c99_program: failed: %s (line %d): %s\n", #cond, __LINE__, \
              ember_last_error());                                                \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

int main(int argc, char** argv) {
  ember_model* model = NULL;
  ember_session* session = NULL;
  ember_model_info info;
  ember_generate_params gp;
  ember_generate_stats stats;
  struct counter c = {0, 0, 0};
  int32_t ids[64];
  size_t n_ids = 0;

  if (argc < 2) {
    fprintf(stderr, "usage: c99_program MODEL.gguf\n");
    return 2;
  }
  /* Errors come back as statuses with a message. */
  EXPECT(ember_model_load("/nonexistent.gguf", NULL, &model) == EMBER_ERR_IO);
  EXPECT(model == NULL);
  EXPECT(strstr(ember_last_error(), "/nonexistent.gguf") != NULL);
  EXPECT(ember_model_load(NULL, NULL, &model) == EMBER_ERR_INVALID_ARGUMENT);
  EXPECT(strcmp(ember_status_str(EMBER_ERR_BAD_FORMAT), "EMBER_ERR_BAD_FORMAT") == 0);
  /* Any int may be in a C enum: values that are none of its constants. */
  EXPECT(strcmp(ember_status_str((ember_status)1234), "EMBER_ERR_UNKNOWN") == 0);
  EXPECT(strcmp(ember_status_str((ember_status)-1), "EMBER_ERR_UNKNOWN") == 0);
  EXPECT(strcmp(ember_finish_reason_str((ember_finish_reason)42), "unknown") == 0);
  {
    ember_sampler* chain = NULL;
    ember_sampler_spec spec = ember_sampler_spec_default((ember_sampler_type)99);
    EXPECT((int)spec.type == 99);
    EXPECT(ember_sampler_create(NULL, 4, &spec, 1, 1, &chain) == EMBER_ERR_INVALID_ARGUMENT);
    EXPECT(chain == NULL);
    EXPECT(strstr(ember_last_error(), "unknown sampler type 99") != NULL);
  }

  /* A chat template rendered from C: ask for the size, then render. */
  {
    char out[64];
    size_t needed = 0;
    ember_chat_template_params tp = ember_chat_template_default_params();
    const char* tmpl = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}";
    const char* msgs = "[{\"role\": \"user\", \"content\": \"hi\"}]";
    EXPECT(ember_chat_template_render(tmpl, msgs, &tp, NULL, 0, &needed) ==
           EMBER_ERR_BUFFER_TOO_SMALL);
    EXPECT(needed == 9 && needed <= sizeof out);
    EXPECT(ember_chat_template_render(tmpl, msgs, &tp, out, sizeof out, &needed) == EMBER_OK);
    EXPECT(strcmp(out, "<user>hi") == 0);
    EXPECT(ember_chat_template_render("{{ raise_exception('no') }}", msgs, NULL, out, sizeof out,
                                      &needed) == EMBER_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(ember_last_error(), "raise_exception: no") != NULL);
  }

  EXPECT(ember_model_load(argv[1], NULL, &model) == EMBER_OK);
  EXPECT(ember_model_get_info(model, &info) == EMBER_OK);
  EXPECT(info.n_vocab > 0 && info.n_layer > 0);

  EXPECT(ember_tokenize(model, "Hello world", 11, true, false, ids, 64, &n_ids) == EMBER_OK);
  EXPECT(n_ids >= 2);
  EXPECT(ember_tokenize(model, "Hello world", 11, true, false, ids, 1, &n_ids) ==
         EMBER_ERR_BUFFER_TOO_SMALL);
  EXPECT(ember_tokenize(model, "Hello world", 11, true, false, ids, 64, &n_ids) == EMBER_OK);
  {
    /* Detokenize: ask for the size, then fill a buffer of that size. */
    char text[64];
    size_t needed = 0;
    EXPECT(ember_detokenize(model, ids, n_ids, false, NULL, 0, &needed) ==
           EMBER_ERR_BUFFER_TOO_SMALL);
    EXPECT(needed == 12 && needed <= sizeof text);
    EXPECT(ember_detokenize(model, ids, n_ids, false, text, needed, &needed) == EMBER_OK);
    EXPECT(strcmp(text, "Hello world") == 0);
  }
  EXPECT(ember_api_version() == EMBER_API_VERSION);
  EXPECT(strcmp(ember_version(), EMBER_VERSION_STRING) == 0);

  /* Memory limits: what a session needs, and a limit below it refused. */
  {
    uint64_t kv = 0, scratch = 0;
    ember_session_limits limits = ember_session_limits_default();
    EXPECT(ember_session_memory_needed(model, NULL, &kv, &scratch) == EMBER_OK);
    EXPECT(kv > 0 && scratch > 0 && limits.max_memory == 0);
    limits.max_memory = kv;
    EXPECT(ember_session_create_ex(model, NULL, &limits, &session) == EMBER_ERR_OUT_OF_MEMORY);
    EXPECT(session == NULL);
    EXPECT(strstr(ember_last_error(), "max_memory") != NULL);
    EXPECT(ember_model_default_params().mmap_mode == EMBER_MMAP_AUTO);
  }

  EXPECT(ember_session_create(model, NULL, &session) == EMBER_OK);
  gp = ember_generate_default_params();
  gp.n_predict = 16;
  gp.temperature = 0.0f;
  gp.ignore_eos = true;
  gp.on_token = on_token;
  EXPECT(ember_generate_text(session, "Hello world", &gp, on_piece, &c, &stats) == EMBER_OK);
  EXPECT(c.pieces == 4);
  EXPECT(stats.finish_reason == EMBER_FINISH_CANCELLED);
  EXPECT(stats.n_gen == c.tokens);
  EXPECT(ember_session_logits(session) != NULL);
  EXPECT(ember_session_eval(session, NULL, 0) == EMBER_ERR_INVALID_ARGUMENT);
  ids[0] = -5;
  EXPECT(ember_session_eval(session, ids, 1) == EMBER_ERR_INVALID_ARGUMENT);

  /* A sampler chain built from C: top-k 2, temperature 1, then a draw. */
  {
    ember_sampler* chain = NULL;
    ember_sampler_spec specs[3];
    ember_candidate cand[4];
    size_t n = 0;
    int32_t token = -1;
    const float logits[4] = {3.0f, 2.0f, 1.0f, 0.5f};
    const char* stops[1] = {"\n"};
    specs[0] = ember_sampler_spec_default(EMBER_SAMPLER_TOP_K);
    specs[0].top_k = 2;
    specs[1] = ember_sampler_spec_default(EMBER_SAMPLER_TEMPERATURE);
    specs[1].temperature = 1.0f;
    specs[2] = ember_sampler_spec_default(EMBER_SAMPLER_DIST);
    EXPECT(ember_sampler_create(NULL, 4, specs, 3, 42, &chain) == EMBER_OK);
    EXPECT(ember_sampler_sample(chain, logits, 4, false, &token) == EMBER_OK);
    EXPECT(token == 0 || token == 1);
    EXPECT(ember_sampler_candidates(chain, cand, 1, &n) == EMBER_ERR_BUFFER_TOO_SMALL);
    EXPECT(n == 2);
    EXPECT(ember_sampler_candidates(chain, cand, 4, &n) == EMBER_OK);
    EXPECT(cand[0].id == 0 && cand[0].p > 0.7310f && cand[0].p < 0.7312f);
    EXPECT(ember_sampler_sample(chain, logits, 3, false, &token) == EMBER_ERR_INVALID_ARGUMENT);
    ember_sampler_free(chain);

    /* Two terminal samplers, and a bad parameter: errors naming them. */
    specs[0] = ember_sampler_spec_default(EMBER_SAMPLER_GREEDY);
    EXPECT(ember_sampler_create(NULL, 4, specs, 3, 42, &chain) == EMBER_ERR_INVALID_ARGUMENT);
    EXPECT(chain == NULL);
    EXPECT(strstr(ember_last_error(), "terminal") != NULL);
    specs[0] = ember_sampler_spec_default(EMBER_SAMPLER_TOP_P);
    specs[0].top_p = 1.5f;
    EXPECT(ember_sampler_create(NULL, 4, specs, 3, 42, &chain) == EMBER_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(ember_last_error(), "top-p") != NULL);

    /* A grammar from a JSON schema: the reply is one of two documents. */
    {
      char gbnf[4096];
      size_t needed = 0;
      ember_sampling_params sp = ember_sampling_default_params();
      ember_generate_stats gs;
      const char* schema =
          "{\"type\": \"object\", \"properties\": {\"ok\": {\"type\": \"boolean\"}},"
          " \"required\": [\"ok\"], \"additionalProperties\": false}";
      EXPECT(ember_json_schema_to_grammar(schema, gbnf, sizeof gbnf, &needed) == EMBER_OK);
      EXPECT(ember_json_schema_to_grammar("{\"not\": {}}", gbnf, sizeof gbnf, &needed) ==
             EMBER_ERR_UNSUPPORTED);
      EXPECT(ember_json_schema_to_grammar(schema, gbnf, sizeof gbnf, &needed) == EMBER_OK);
      EXPECT(ember_sampler_from_params_grammar(model, &sp, gbnf, NULL, &chain) == EMBER_OK);
      ember_session_reset(session);
      gp = ember_generate_default_params();
      gp.n_predict = 200;
      gp.sampler = chain;
      EXPECT(ember_generate_text(session, "Answer in JSON:", &gp, NULL, NULL, &gs) == EMBER_OK);
      EXPECT(gs.finish_reason == EMBER_FINISH_EOS);
      EXPECT(strcmp(ember_finish_reason_str(EMBER_FINISH_GRAMMAR), "grammar") == 0);
      ember_sampler_free(chain);
      chain = NULL;
    }

    /* The same chain drives generation: llama.cpp-style settings, a stop string. */
    {
      ember_sampling_params sp = ember_sampling_default_params();
      sp.seed = 7;
      EXPECT(ember_sampler_from_params(model, 0, &sp, &chain) == EMBER_OK);
    }
    ember_session_reset(session);
    gp = ember_generate_default_params();
    gp.n_predict = 8;
    gp.ignore_eos = true;
    gp.sampler = chain;
    gp.stop = stops;
    gp.n_stop = 1;
    c.pieces = 0;
    EXPECT(ember_generate_text(session, "Hello world", &gp, NULL, NULL, &stats) == EMBER_OK);
    EXPECT(stats.n_gen >= 1 && stats.logprob <= 0.0);
    EXPECT(stats.finish_reason == EMBER_FINISH_LENGTH || stats.finish_reason == EMBER_FINISH_STOP);
    EXPECT((stats.finish_reason == EMBER_FINISH_STOP) == (stats.stop_index == 0));
    ember_sampler_free(chain);
  }

  ember_session_free(session);
  ember_model_free(model);
  printf("c99_program: ok (%d pieces, %d tokens, %zu bytes)\n", c.pieces, c.tokens, c.bytes);
  return 0;
}
