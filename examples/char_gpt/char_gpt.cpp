// A character-level GPT on any text file, with the library's Trainer, then sampling:
//   char_gpt FILE [--epochs N] [--sample N] [--prompt TEXT]
// Tokens are bytes; 90% of the file trains, 5% validates, 5% tests.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "apps/startup.hpp"
#include "train/trainer.hpp"

using namespace tg;

text::LMData char_data(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 2000)
    throw std::runtime_error(path + ": " + std::to_string(bytes.size()) +
                             " bytes, want 2000 or more");
  text::Tokens chars;
  for (char c : bytes) chars.push_back(std::string(1, c));
  text::LMData data;
  data.vocab = text::Vocabulary::build(chars, 1);
  data.stream = data.vocab.encode(chars);
  const size_t n = chars.size(), train_end = n * 9 / 10, valid_end = n * 19 / 20;
  data.train = {0, train_end}, data.valid = {train_end, valid_end}, data.test = {valid_end, n};
  data.train_full = train_end;
  data.description = path + ": " + std::to_string(n) + " characters, " +
                     std::to_string(data.vocab.size()) + " distinct";
  return data;
}

// Samples `count` characters after `prompt`, one at a time, from the softmax at temperature 0.8.
std::string sample(nn::LanguageModel& model, const text::LMData& data, const std::string& prompt,
                   size_t count, Generator& gen) {
  NoGrad no_grad;
  model.eval();
  std::vector<int32_t> ids;
  for (char c : prompt) ids.push_back(data.vocab.id(std::string(1, c)));
  std::string out = prompt;
  for (size_t i = 0; i < count; ++i) {
    const size_t len = std::min(ids.size(), model.max_predictions());
    const Tensor logits = model.logits(
        Ids({1, len}, std::vector<int32_t>(ids.end() - static_cast<long>(len), ids.end())));
    const size_t v = data.vocab.size();
    const float* last = logits.data() + (len - 1) * v;
    std::vector<double> p(v);
    double z = 0.0;
    for (size_t j = 0; j < v; ++j) z += p[j] = std::exp((last[j] - last[0]) / 0.8);
    double u = gen.uniform_double() * z;
    size_t next = v - 1;
    for (size_t j = 0; j < v; ++j)
      if ((u -= p[j]) <= 0) {
        next = j;
        break;
      }
    ids.push_back(static_cast<int32_t>(next));
    out += data.vocab.word(static_cast<int32_t>(next));
  }
  return out;
}

int main(int argc, char** argv) {
  tg::apps::start_program(argv);  // OpenBLAS's fastest kernel for this CPU
  if (argc < 2) {
    std::fprintf(stderr, "usage: char_gpt FILE [--epochs N] [--sample N] [--prompt TEXT]\n");
    return 2;
  }
  try {
    train::TrainConfig config;
    config.model.name = "gpt";
    config.model.d_model = 64, config.model.layers = 2, config.model.heads = 4,
    config.model.context = 64;
    config.model.dropout = 0.0f;
    config.batch = 16, config.lr = 3e-3f, config.warmup = 20, config.epochs = 2;
    size_t count = 200;
    std::string prompt = "The ";
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string flag = argv[i], value = argv[i + 1];
      if (flag == "--epochs")
        config.epochs = std::stoul(value);
      else if (flag == "--sample")
        count = std::stoul(value);
      else if (flag == "--prompt")
        prompt = value;
      else
        throw std::invalid_argument("unknown flag " + flag);
    }
    const text::LMData data = char_data(argv[1]);
    train::RunResult r = train::Trainer(config, data).run();
    std::printf("valid_ppl %.3f  test_ppl %.3f (per character)\n", r.valid_ppl, r.test_ppl);
    Generator gen(7);
    std::printf("%s\n", sample(*r.model, data, prompt, count, gen).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "char_gpt: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
