// build/bin/train_lm: train a GPT or an NPLM on the Brown protocol or your own text, with any
// embedding mode; prints validation and test perplexity and writes a results JSON.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "experiments/cli.hpp"
#include "experiments/flags.hpp"
#include "experiments/lm_training.hpp"

using namespace tg;

int main(int argc, char** argv) {
  select_blas_kernel(argv);
  CLI::App app{"train_lm: train a next-word model (GPT or Bengio et al.'s NPLM) and report perplexity"};
  lm::TrainConfig c;
  lm::add_training_flags(app, c);
  size_t sample = 0, top_k = 40;
  std::string prompt = "The";
  float temperature = 1.0f;
  app.add_option("--sample", sample, "after training, generate N tokens from --prompt")->capture_default_str();
  app.add_option("--prompt", prompt, "words to start sampling from")->capture_default_str();
  app.add_option("--temperature", temperature, "sampling temperature")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--top-k", top_k, "sample among the k most likely tokens (0 = all)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return cli::guarded_main("train_lm", [&] {
    c.validate();
    std::fprintf(stderr, "train_lm %s\n", lm::describe_flags(app).c_str());
    const text::LMData data = lm::load_data(c.data);
    lm::RunResult r = lm::train_language_model(c, data);
    std::printf("valid_ppl %.2f  test_ppl %.2f  trainable_params %zu  train_tokens_per_s %.0f  wall_s %.1f\n", r.valid_ppl,
                r.test_ppl, r.json["trainable_params"].get<size_t>(), r.json["train_tokens_per_s"].get<double>(),
                r.json["wall_s"].get<double>());
    if (!c.results.empty()) std::fprintf(stderr, "wrote %s\n", c.results.c_str());
    if (sample > 0) std::printf("%s\n", lm::sample_text(*r.model, data.vocab, prompt, sample, temperature, top_k, c.seed).c_str());
    return 0;
  });
}
