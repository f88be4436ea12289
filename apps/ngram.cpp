// build/bin/ngram: the count-based baselines of Bengio et al. (2003), Table 1, on the same
// data, vocabulary and evaluation protocol as train_lm: interpolated modified Kneser-Ney of
// any order and deleted interpolation (weights fitted on the validation split).
//   ngram --order 5                          Kneser-Ney 5-gram on Brown
//   ngram --smoothing jelinek-mercer --order 3 --results jm3.json
//   ngram --smoothing jelinek-mercer --order 3 --mix-with nplm_tokens.json
//                                            the mixture with a neural model (Bengio et al.'s
//                                            best row), from train_lm --token-nll
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <optional>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "apps/ngram_config.hpp"
#include "apps/programs.hpp"
#include "apps/validators.hpp"
#include "base/build_info.hpp"
#include "base/escape.hpp"
#include "base/files.hpp"
#include "distributed/distributed.hpp"
#include "text/bpe.hpp"
#include "text/ngram.hpp"
#include "train/trainer.hpp"

namespace tg::apps {

nlohmann::json NgramConfig::to_json() const {
  return {{"smoothing", base::name_of(text::kNgramSmoothingNames, smoothing)}, {"order", order}};
}

NgramConfig NgramConfig::from_json(const nlohmann::json& config) {
  NgramConfig c;
  try {
    c.smoothing = base::parse_name(text::kNgramSmoothingNames,
                                   config.at("smoothing").get<std::string>(), "smoothing");
    c.order = config.at("order").get<size_t>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("an n-gram configuration without its smoothing "
                                            "and order: ") +
                                tg::base::json_error_text(e.what()));
  }
  return c;
}

std::string NgramConfig::name() const {
  return base::name_of(text::kNgramSmoothingNames, smoothing) + " " + std::to_string(order) +
         "-gram";
}

std::string NgramConfig::file_name() const {
  return base::name_of(text::kNgramSmoothingNames, smoothing) + "_" + std::to_string(order) +
         ".json";
}

}  // namespace tg::apps

namespace {

// The mixture p = w p_model + (1 - w) p_ngram, w fitted on the validation tokens. The file's
// losses must be of the same tokens: same corpus, split and vocabulary.
nlohmann::json mix(const std::string& path, const tg::text::LMData& data,
                   const std::vector<double>& valid_ngram, const std::vector<double>& test_ngram) {
  std::ifstream in(path);
  nlohmann::json file;
  try {
    file = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    // An empty file, or a NaN or Infinity literal (JSON has none): say so, not "no array".
    throw std::invalid_argument("--mix-with " + path + ": not JSON (" +
                                tg::base::json_error_text(e.what()) + ")");
  }
  if (file.is_object() && file.value("data_fingerprint", "") != tg::text::fingerprint(data))
    throw std::invalid_argument(
        "--mix-with " + path + ": its losses are of other data (fingerprint " +
        file.value("data_fingerprint", "none") + ", this data's " + tg::text::fingerprint(data) +
        "): give the same corpus, split and --min-count as its run");
  const auto losses = [&](const char* split, size_t want) {
    if (!file.is_object() || !file.contains(split) || !file[split].is_array())
      throw std::invalid_argument("--mix-with " + path + ": not a train_lm --token-nll file (no '" +
                                  split + "' array)");
    std::vector<double> nll;
    for (const auto& v : file[split]) {
      if (!v.is_number() || !(v.get<double>() >= 0.0))
        throw std::invalid_argument("--mix-with " + path + ": '" + split +
                                    "' holds a value that is not a loss >= 0");
      nll.push_back(v.get<double>());
    }
    if (nll.size() != want)
      throw std::invalid_argument("--mix-with " + path + ": " + std::to_string(nll.size()) + " " +
                                  split + " tokens, this data has " + std::to_string(want) +
                                  " (give the same corpus, split and --min-count as its run)");
    return nll;
  };
  const std::vector<double> valid_model = losses("valid", valid_ngram.size());
  const std::vector<double> test_model = losses("test", test_ngram.size());
  const double w = tg::text::fit_mixture_weight(valid_model, valid_ngram);
  return {{"with", path},
          {"weight", w},
          {"valid_ppl", std::exp(tg::text::mixture_nll(valid_model, valid_ngram, w))},
          {"test_ppl", std::exp(tg::text::mixture_nll(test_model, test_ngram, w))}};
}

// The run file (train/run_record.hpp): the model, the data it was counted on, its perplexities.
tg::train::RunRecord results_record(const tg::apps::NgramConfig& model,
                                    const tg::text::LMDataOptions& data_options,
                                    const tg::text::LMData& data, double valid, double test,
                                    double seconds) {
  using namespace tg;
  train::RunRecord r;
  r.program = "ngram";
  r.version = base::version();
  r.provenance = train::Provenance::of_this_process();
  r.config = model.to_json();
  r.config.update(train::data_to_json(data_options));
  r.data = {text::fingerprint(data), data.description,  data.vocab.size(),
            data.train.size(),       data.valid.size(), data.test.size()};
  r.valid_ppl = valid;
  r.test_ppl = test;
  r.extra["seconds"] = seconds;
  train::add_per_word_results(r, data);
  return r;
}

// The perplexities with each <unk> word spelled out (text::spell_unknown_words), the
// speller counted on the words of the training range the model was counted on; nothing when no
// training word is <unk>.
std::optional<nlohmann::json> spell_unknown_words(const tg::text::Splits& splits,
                                                  const tg::text::LMData& data, size_t order,
                                                  double valid_ppl, double test_ppl) {
  using namespace tg;
  const text::Tokens train(splits.train.begin(),
                           splits.train.begin() + static_cast<long>(data.train.size()));
  const auto s = text::spell_unknown_words(train, splits.valid, splits.test, data.vocab, order);
  if (!s) return std::nullopt;
  // Per word (a word-level model's tokens are words): exp((total NLL + spelling) / words).
  const auto spelled = [](double ppl, const text::SpellingCost& cost, size_t words) {
    return ppl * std::exp(cost.nll_sum / static_cast<double>(words));
  };
  const auto split = [](const text::SpellingCost& cost) {
    return nlohmann::json{{"unk", cost.unk}, {"bytes", cost.bytes}, {"nll_sum", cost.nll_sum}};
  };
  return nlohmann::json{{"order", order},
                        {"train_unk", s->train_unk},
                        {"valid", split(s->valid)},
                        {"test", split(s->test)},
                        {"valid_ppl", spelled(valid_ppl, s->valid, data.valid.size())},
                        {"test_ppl", spelled(test_ppl, s->test, data.test.size())}};
}

}  // namespace

int tg::apps::ngram_main(int argc, char** argv) {
  using namespace tg;
  CLI::App app{
      "ngram: Kneser-Ney and deleted-interpolation n-gram baselines, perplexity as train_lm "
      "reports it"};
  apps::add_version_flag(app);
  text::LMDataOptions data_options;
  text::NgramSmoothing smoothing = text::NgramSmoothing::kneser_ney;
  size_t order = 5;
  size_t spelling_order = 6;
  std::string results, mix_with;
  apps::add_enum_option(app, "--smoothing", smoothing, text::kNgramSmoothingNames, "");
  app.add_option("--order", order, "n: predicts from the n-1 words before")
      ->capture_default_str()
      ->check(apps::number_in(2, 6, false, true));
  app.add_option("--results", results, "write the results JSON here");
  app.add_option("--mix-with", mix_with,
                 "also report the mixture with a model's per-token losses (train_lm --token-nll "
                 "on the same data), its weight fitted on the validation split")
      ->check(CLI::ExistingFile);
  app.add_option("--unk-spelling-order", spelling_order,
                 "words only: also report the perplexities with each <unk> spelled out by a "
                 "byte-level Kneser-Ney model of this order, counted on the training split's "
                 "<unk> words (0: not)")
      ->capture_default_str()
      ->check(CLI::IsMember({0, 2, 3, 4, 5, 6}));
  apps::add_data_flags(app, data_options);
  CLI11_PARSE(app, argc, argv);
  return apps::guarded_main("ngram", [&] {
    const base::FileFlag outputs[] = {{"--results", results}};
    std::vector<base::FileFlag> inputs = text::tokenizer_inputs(data_options.tokenizer);
    inputs.insert(inputs.end(),
                  {{"--corpus-file", data_options.corpus_file}, {"--mix-with", mix_with}});
    base::check_outputs(outputs, inputs);
    std::fprintf(stderr, "ngram %s\n", apps::describe_flags(app).c_str());
    // The corpus is read once: the <unk> speller reads its words, the model their ids.
    std::optional<text::CorpusSplits> corpus;
    distributed::rank0_first([&] { corpus.emplace(text::read_corpus(data_options)); });
    const text::LMData data = text::load_lm_data(data_options, *corpus);
    const auto start = std::chrono::steady_clock::now();
    const bool kn = smoothing == text::NgramSmoothing::kneser_ney;
    // Deleted interpolation holds out the validation split to fit its weights, as the paper's did.
    const auto model =
        kn ? text::train_kneser_ney(data.stream, data.train, data.vocab.size(), order)
           : text::train_jelinek_mercer(data.stream, data.train, data.valid, data.vocab.size(),
                                        order);
    const std::vector<double> valid_nll = text::ngram_token_nll(*model, data.stream, data.valid);
    const std::vector<double> test_nll = text::ngram_token_nll(*model, data.stream, data.test);
    const auto ppl = [](const std::vector<double>& nll) {
      return std::exp(std::accumulate(nll.begin(), nll.end(), 0.0) /
                      static_cast<double>(nll.size()));
    };
    const double valid = ppl(valid_nll), test = ppl(test_nll);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string name = base::name_of(text::kNgramSmoothingNames, smoothing);
    train::RunRecord record =
        results_record({smoothing, order}, data_options, data, valid, test, seconds);
    if (!mix_with.empty()) record.extra["mixture"] = mix(mix_with, data, valid_nll, test_nll);
    if (spelling_order > 0 && !data.vocab.bpe())
      if (const auto spelled =
              spell_unknown_words(corpus->splits, data, spelling_order, valid, test))
        record.extra["unk_spelling"] = *spelled;
    if (!results.empty()) {
      train::write_record(results, record);
      std::fprintf(stderr, "wrote %s\n", results.c_str());
    }
    const nlohmann::json out = record.to_json();
    std::printf("%s %zu-gram: valid_ppl %.2f  test_ppl %.2f  seconds %.1f\n", name.c_str(), order,
                valid, test, seconds);
    if (out.contains("test_ppl_per_word"))
      std::printf("per word: valid_ppl %.2f  test_ppl %.2f\n",
                  out["valid_ppl_per_word"].get<double>(), out["test_ppl_per_word"].get<double>());
    if (out.contains("unk_spelling"))
      std::printf(
          "<unk> spelled out (byte-level Kneser-Ney %zu-gram counted on the training split's %zu "
          "<unk> words): valid_ppl %.2f  test_ppl %.2f\n",
          spelling_order, out["unk_spelling"]["train_unk"].get<size_t>(),
          out["unk_spelling"]["valid_ppl"].get<double>(),
          out["unk_spelling"]["test_ppl"].get<double>());
    if (out.contains("mixture"))
      std::printf("mixture with %s (weight %.3f): valid_ppl %.2f  test_ppl %.2f\n",
                  mix_with.c_str(), out["mixture"]["weight"].get<double>(),
                  out["mixture"]["valid_ppl"].get<double>(),
                  out["mixture"]["test_ppl"].get<double>());
    return 0;
  });
}
