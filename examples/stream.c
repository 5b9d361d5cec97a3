/* stream: load a model, stream a completion of a prompt to stdout as it is
 * generated, report errors with their status and message.
 *
 *   stream [MODEL.gguf [PROMPT [N_TOKENS]]]
 *
 * MODEL defaults to SmolLM2-135M-Instruct Q4_1 in the model cache
 * ($EMBER_MODELS, else ~/.cache/ember/models; scripts/fetch-models.sh fetches
 * it). Against an installed ember:
 *
 *   cc -std=c99 stream.c $(pkg-config --cflags --libs ember) -o stream
 *
 * or with CMake: find_package(ember) and target_link_libraries(... ember::ember). */
#include <stdio.h>
#include <stdlib.h>

#include "ember.h"

/* Called with each piece of text as soon as it is complete UTF-8. */
static bool print_piece(const char* piece, size_t len, int32_t token, void* user_data) {
  (void)token;
  (void)user_data;
  fwrite(piece, 1, len, stdout);
  fflush(stdout);
  return true; /* false would stop the generation */
}

static int report(const char* what, ember_status status) {
  fprintf(stderr, "stream: %s: %s: %s\n", what, ember_status_str(status), ember_last_error());
  return 1;
}

int main(int argc, char** argv) {
  char default_model[4096];
  const char* model_path = argc > 1 ? argv[1] : NULL;
  const char* prompt = argc > 2 ? argv[2] : "The three primary colors are";
  long n_predict = 64;
  ember_model* model = NULL;
  ember_session* session = NULL;
  ember_generate_params params;
  ember_generate_stats stats;
  ember_status status;

  if (argc > 4 || (argc > 1 && argv[1][0] == '-')) {
    fprintf(stderr, "usage: stream [MODEL.gguf [PROMPT [N_TOKENS]]]\n");
    return 2;
  }
  if (argc > 3) {
    char* end = NULL;
    n_predict = strtol(argv[3], &end, 10);
    if (*end != '\0' || n_predict < 0 || n_predict > 100000) {
      fprintf(stderr, "stream: N_TOKENS must be a number in [0, 100000]\n");
      return 2;
    }
  }
  if (model_path == NULL) {
    const char* dir = getenv("EMBER_MODELS");
    const char* home = getenv("HOME");
    if (dir != NULL) {
      snprintf(default_model, sizeof default_model, "%s/SmolLM2-135M-Instruct.Q4_1.gguf", dir);
    } else {
      snprintf(default_model, sizeof default_model,
               "%s/.cache/ember/models/SmolLM2-135M-Instruct.Q4_1.gguf", home ? home : ".");
    }
    model_path = default_model;
  }

  status = ember_model_load(model_path, NULL, &model);
  if (status != EMBER_OK) return report("loading the model", status);
  status = ember_session_create(model, NULL, &session);
  if (status != EMBER_OK) {
    ember_model_free(model);
    return report("creating a session", status);
  }

  params = ember_generate_default_params();
  params.n_predict = (int32_t)n_predict;
  params.temperature = 0.0f; /* greedy: the same text every run */
  fputs(prompt, stdout);
  status = ember_generate_text(session, prompt, &params, print_piece, NULL, &stats);
  putchar('\n');
  if (status == EMBER_OK) {
    fprintf(stderr, "stream: %d tokens (%s), %.1f tokens/s\n", (int)stats.n_gen,
            ember_finish_reason_str(stats.finish_reason), stats.decode_tokens_per_second);
  } else {
    report("generating", status);
  }

  ember_session_free(session); /* sessions before their model */
  ember_model_free(model);
  return status == EMBER_OK ? 0 : 1;
}
