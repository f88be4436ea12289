// build/bin/ngram: the count-based baselines of Bengio et al. (2003), Table 1, on the same
// data, vocabulary and evaluation protocol as train_lm: interpolated modified Kneser-Ney of
// any order and deleted interpolation (weights fitted on the validation split).
//   ngram --order 5                          Kneser-Ney 5-gram on Brown
//   ngram --smoothing jelinek-mercer --order 3 --results jm3.json
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "apps/programs.hpp"
#include "apps/validators.hpp"
#include "text/ngram.hpp"
#include "train/trainer.hpp"

int tg::apps::ngram_main(int argc, char** argv) {
  using namespace tg;
  CLI::App app{
      "ngram: Kneser-Ney and deleted-interpolation n-gram baselines, perplexity as train_lm "
      "reports it"};
  cli::add_version_flag(app);
  text::LMDataOptions data_options;
  text::NgramSmoothing smoothing = text::NgramSmoothing::kneser_ney;
  size_t order = 5;
  std::string results;
  train::add_enum_option(app, "--smoothing", smoothing, text::kNgramSmoothingNames, "");
  app.add_option("--order", order, "n: predicts from the n-1 words before")
      ->capture_default_str()
      ->check(cli::number_in(2, 6, false, true));
  app.add_option("--results", results, "write the results JSON here");
  train::add_data_flags(app, data_options);
  CLI11_PARSE(app, argc, argv);
  return cli::guarded_main("ngram", [&] {
    check_writable(results, "--results");
    std::fprintf(stderr, "ngram %s\n", train::describe_flags(app).c_str());
    const text::LMData data = train::load_data(data_options);
    const auto start = std::chrono::steady_clock::now();
    const bool kn = smoothing == text::NgramSmoothing::kneser_ney;
    // Deleted interpolation holds out the validation split to fit its weights, as the paper's did.
    const auto model =
        kn ? text::train_kneser_ney(data.stream, data.train, data.vocab.size(), order)
           : text::train_jelinek_mercer(data.stream, data.train, data.valid, data.vocab.size(),
                                        order);
    const double valid = std::exp(text::ngram_nll(*model, data.stream, data.valid));
    const double test = std::exp(text::ngram_nll(*model, data.stream, data.test));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string name = name_of(text::kNgramSmoothingNames, smoothing);
    nlohmann::json out = {{"program", "ngram"},
                          {"config",
                           {{"smoothing", name},
                            {"order", order},
                            {"corpus", data_options.corpus_file.empty() ? data_options.corpus
                                                                        : data_options.corpus_file},
                            {"split", data_options.split},
                            {"min_count", data_options.min_count},
                            {"vocab_counts", data_options.vocab_counts},
                            {"train_fraction", data_options.train_fraction}}},
                          {"data",
                           {{"description", data.description},
                            {"vocab", data.vocab.size()},
                            {"train_tokens", data.train.size()},
                            {"valid_tokens", data.valid.size()},
                            {"test_tokens", data.test.size()}}},
                          {"valid_ppl", valid},
                          {"test_ppl", test},
                          {"seconds", seconds}};
    if (!results.empty()) {
      atomic_write(results, [&](std::ostream& o) {
        o << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      });
      std::fprintf(stderr, "wrote %s\n", results.c_str());
    }
    std::printf("%s %zu-gram: valid_ppl %.2f  test_ppl %.2f  seconds %.1f\n", name.c_str(), order,
                valid, test, seconds);
    return 0;
  });
}
