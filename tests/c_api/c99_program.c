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

#define EXPECT(cond)                                             \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "c99_program: failed: %s (line %d): %s\n", #cond, __LINE__, \
              ember_last_error());                               \
      return 1;                                                  \
    }                                                            \
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

  EXPECT(ember_model_load(argv[1], NULL, &model) == EMBER_OK);
  EXPECT(ember_model_get_info(model, &info) == EMBER_OK);
  EXPECT(info.n_vocab > 0 && info.n_layer > 0);

  EXPECT(ember_tokenize(model, "Hello world", 11, true, false, ids, 64, &n_ids) == EMBER_OK);
  EXPECT(n_ids >= 2);
  EXPECT(ember_tokenize(model, "Hello world", 11, true, false, ids, 1, &n_ids) ==
         EMBER_ERR_BUFFER_TOO_SMALL);

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

  ember_session_free(session);
  ember_model_free(model);
  printf("c99_program: ok (%d pieces, %d tokens, %zu bytes)\n", c.pieces, c.tokens, c.bytes);
  return 0;
}
