/* chat: a terminal chat with an instruct model, in C99 against ember's C API.
 *
 *   chat [--template FILE.jinja] [MODEL.gguf [SYSTEM_MESSAGE]]
 *
 * Type a message and press Enter; the reply streams as it is generated. Each
 * turn computes only the new message: the session keeps the conversation.
 * "/reset" starts over, "/quit" or end of input (Ctrl-D) ends. A reasoning
 * model's thinking is printed between brackets. The model's own chat template
 * is used unless --template gives one.
 *
 * MODEL defaults to SmolLM2-135M-Instruct Q4_1 in the model cache
 * ($EMBER_MODELS, else ~/.cache/ember/models). Against an installed ember:
 *
 *   cc -std=c99 chat.c $(pkg-config --cflags --libs ember) -o chat */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember.h"

struct printer {
  bool in_reasoning;
};

/* Each piece of the reply: reasoning pieces go between brackets. */
static bool print_piece(const char* piece, size_t len, bool reasoning, void* user_data) {
  struct printer* p = (struct printer*)user_data;
  if (reasoning != p->in_reasoning) {
    fputs(reasoning ? "[thinking: " : "]\n", stdout);
    p->in_reasoning = reasoning;
  }
  fwrite(piece, 1, len, stdout);
  fflush(stdout);
  return true; /* false would stop the reply */
}

static int report(const char* what, ember_status status) {
  fprintf(stderr, "chat: %s: %s: %s\n", what, ember_status_str(status), ember_last_error());
  return 1;
}

/* The whole file in a malloc'ed, NUL-terminated buffer, or NULL. */
static char* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  char* text = NULL;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    text = (char*)malloc((size_t)n + 1);
    if (text != NULL && fread(text, 1, (size_t)n, f) == (size_t)n) {
      text[n] = '\0';
    } else {
      free(text);
      text = NULL;
    }
  }
  fclose(f);
  return text;
}

int main(int argc, char** argv) {
  char default_model[4096];
  char line[8192];
  const char* model_path = NULL;
  const char* system = NULL;
  char* template_source = NULL;
  ember_model* model = NULL;
  ember_session* session = NULL;
  ember_chat* chat = NULL;
  ember_model_params mp = ember_model_default_params();
  ember_session_params sp = ember_session_default_params();
  ember_chat_params cp = ember_chat_default_params();
  ember_generate_params gp = ember_generate_default_params();
  ember_status status;
  int arg = 1, rc = 0;

  if (arg + 1 < argc && strcmp(argv[arg], "--template") == 0) {
    template_source = read_file(argv[arg + 1]);
    if (template_source == NULL) {
      fprintf(stderr, "chat: cannot read %s\n", argv[arg + 1]);
      return 2;
    }
    arg += 2;
  }
  if (arg < argc && argv[arg][0] == '-') {
    fprintf(stderr, "usage: chat [--template FILE.jinja] [MODEL.gguf [SYSTEM_MESSAGE]]\n");
    free(template_source);
    return 2;
  }
  if (arg < argc) model_path = argv[arg++];
  if (arg < argc) system = argv[arg++];
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

  status = ember_model_load(model_path, &mp, &model);
  if (status != EMBER_OK) {
    free(template_source);
    return report("loading the model", status);
  }
  sp.context_shift = false; /* the chat drops whole old turns itself */
  status = ember_session_create(model, &sp, &session);
  if (status != EMBER_OK) {
    rc = report("creating a session", status);
    goto done;
  }
  cp.system = system;
  cp.template_source = template_source;
  status = ember_chat_create(session, &cp, &chat);
  if (status != EMBER_OK) {
    rc = report("the chat template", status);
    goto done;
  }
  gp.n_predict = 512; /* per reply at most */
  gp.temperature = 0.7f;
  gp.seed = 1;
  gp.logprobs = false;

  fputs("> ", stdout);
  fflush(stdout);
  while (fgets(line, sizeof line, stdin) != NULL) {
    struct printer p = {false};
    ember_chat_stats stats;
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    if (strcmp(line, "/quit") == 0) break;
    if (strcmp(line, "/reset") == 0) {
      ember_chat_reset(chat);
    } else if (n > 0) {
      status = ember_chat_send(chat, line, &gp, print_piece, &p, &stats);
      if (status != EMBER_OK) {
        /* The conversation is unchanged: say why and go on. */
        report("sending", status);
      } else {
        if (p.in_reasoning) fputs("]", stdout);
        printf("\n(%d tokens, %d computed for the prompt, first token after %.2f s)\n",
               stats.gen.n_gen, stats.gen.n_prompt - stats.gen.n_reused, stats.first_token_seconds);
      }
    }
    fputs("> ", stdout);
    fflush(stdout);
  }
  fputs("\n", stdout);

done:
  ember_chat_free(chat);
  ember_session_free(session);
  ember_model_free(model);
  free(template_source);
  return rc;
}
