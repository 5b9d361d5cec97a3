// ember tokenize: print token ids on one line.
#include <cstdio>
#include <string>

#include "cli.h"

namespace cli {

int TokenizeCommand(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      kModelOption,
      kPromptOption,
      kFileOption,
      {"--no-bos", "", "", "do not add BOS/EOS even if the model asks for them"},
      {"--special", "", "", "parse special-token text (e.g. <|im_start|>) as special tokens"},
  };
  Args args;
  if (!args.Parse("tokenize", "-m MODEL (-p TEXT | -f FILE) [--no-bos] [--special]", specs, argc,
                  argv)) {
    return 0;
  }
  const std::string text = ReadPrompt(args);
  ModelPtr model(LoadModel(ResolveModelPath(args), /*vocab_only=*/true));
  std::vector<int32_t> ids =
      Tokenize(model.get(), text, !args.Has("--no-bos"), args.Has("--special"));
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
  std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace cli
