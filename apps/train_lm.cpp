// build/bin/train_lm: train a GPT or an NPLM on the Brown protocol or your own text, with any
// embedding mode; prints validation and test perplexity and writes a results JSON.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "apps/programs.hpp"
#include "apps/validators.hpp"
#include "base/files.hpp"
#include "distributed/distributed.hpp"
#include "train/evaluate.hpp"
#include "train/models.hpp"
#include "train/trainer.hpp"

using namespace tg;

int tg::apps::train_lm_main(int argc, char** argv) {
  CLI::App app{
      "train_lm: train a next-word model (GPT or Bengio et al.'s NPLM) and report perplexity"};
  apps::add_version_flag(app);
  train::TrainConfig c;
  apps::add_training_flags(app, c);
  size_t sample = 0, top_k = 40;
  std::string prompt = "The";
  float temperature = 1.0f;
  app.add_option("--export-vectors", c.export_vectors,
                 "after training, write the token table's rows (the best epoch's) in word2vec's "
                 "text format: for --vectors, gensim or another study");
  app.add_option("--sample", sample, "after training, generate N tokens from --prompt")
      ->capture_default_str();
  app.add_option("--prompt", prompt, "words to start sampling from")->capture_default_str();
  app.add_option("--temperature", temperature, "sampling temperature")
      ->capture_default_str()
      ->check(apps::positive(false));
  app.add_option("--top-k", top_k, "sample among the k most likely tokens (0 = all)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return apps::guarded_main("train_lm", [&] {
    // A flag the model does not read (a GPT's --heads to the lstm) is a mistake, not a setting
    // to ignore.
    if (train::has_model(c.model.name)) {
      const train::ModelEntry& entry = train::model_entry(c.model.name);
      for (const std::string& flag : entry.unread_flags)
        if (app.count(flag) > 0)
          throw std::invalid_argument(flag + ": the " + c.model.name + " " + entry.why_unread);
    }
    train::check_model_options(c.model.options, {c.model.name});
    c.model.options = train::options_for(c.model.options, c.model.name);
    c.validate();
    c.check_files();  // before the corpus is read, not after
    // One run per checkpoint: two writing one file would each resume from the other's steps.
    std::optional<base::FileLock> only_writer;
    if (!c.checkpoint.empty() && distributed::is_main()) {
      only_writer.emplace(c.checkpoint + ".lock", false, true);
      if (!only_writer->held())
        throw std::invalid_argument("--checkpoint " + c.checkpoint +
                                    ": another train_lm is writing it (it holds " + c.checkpoint +
                                    ".lock); give another --checkpoint, or wait for that run");
    }
    std::fprintf(stderr, "train_lm %s\n", apps::describe_flags(app).c_str());
    const text::LMData data = train::load_data(c.data);
    train::RunResult r = train::train_language_model(c, data);
    std::printf(
        "valid_ppl %.2f  test_ppl %.2f  trainable_params %zu  train_tokens_per_s %.0f  wall_s "
        "%.1f\n",
        r.valid_ppl, r.test_ppl, r.json["trainable_params"].get<size_t>(),
        r.json["train_tokens_per_s"].get<double>(), r.json["wall_s"].get<double>());
    if (r.json.contains("test_ppl_per_word"))  // a subword tokenizer: the per-word scale too
      std::printf("per word: valid_ppl %.2f  test_ppl %.2f (%zu test tokens for %zu words)\n",
                  r.json["valid_ppl_per_word"].get<double>(),
                  r.json["test_ppl_per_word"].get<double>(), data.test.size(), data.test_words);
    if (!c.results.empty()) std::fprintf(stderr, "wrote %s\n", c.results.c_str());
    if (sample > 0)
      std::printf("%s\n", train::sample_text(*r.model, data.vocab, prompt, sample, temperature,
                                             top_k, c.seed)
                              .c_str());
    return 0;
  });
}
