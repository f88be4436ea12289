// The study runner (experiments::Plan) on the toy corpus: what its summary lists when a stop
// signal ends a study, in a run's training and in its final evaluation. (Resuming, sharing a
// folder between processes and moving it: tests/study_resume.sh and study_share.sh.)
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "experiments/study.hpp"
#include "experiments/test_losses.hpp"
#include "temp_folder.hpp"
#include "train/recorded_sigterm.hpp"
#include "train/signals.hpp"
#include "train/toy_data.hpp"

using namespace tg;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct StudyFolder : testing::TempFolder {
  // A study of one tiny GPT run, with these hooks.
  experiments::Plan plan(const train::TrainHooks& hooks) const {
    experiments::Plan p((dir / "summary.json").string(), {{"experiment", "test"}},
                        [](const json& results) {
                          return json{{"test_ppl", results.at("test_ppl")}};
                        },
                        {"mode"}, {"test_ppl"});
    train::TrainConfig c;
    c.model = testing::tiny_model("gpt");
    c.batch = 8;
    c.epochs = 2;
    c.warmup = 5;
    c.quiet = true;
    c.seed = 4;
    experiments::Plan::Run run{
        c, "gpt learned seed 4", run_file().string(), {{"mode", "learned"}, {"seed", 4}}};
    run.hooks = hooks;
    p.add(run);
    p.collect_finished();
    return p;
  }
  fs::path run_file() const { return dir / "gpt_learned_seed4.json"; }
  json summary() const { return json::parse(std::ifstream(dir / "summary.json")); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(experiments_study)

// A signal in training stops the study with the run's checkpoint and partial results, which the
// summary does not list; one in the final evaluation lets the run finish, and the summary lists
// it before the study stops (not only when the study is invoked again).
BOOST_FIXTURE_TEST_CASE(a_stopped_study_lists_the_runs_that_finished, StudyFolder) {
  const testing::RecordedSigterm recorded;
  train::TrainHooks in_training;
  in_training.after_step = [](long step, nn::LanguageModel&) {
    if (step == 3) ::raise(SIGTERM);
  };
  experiments::Plan stopped = plan(in_training);
  BOOST_CHECK_THROW(stopped.train(0, testing::toy_data()), train::Interrupted);
  BOOST_TEST(json::parse(std::ifstream(run_file())).at("interrupted") == "SIGTERM");
  BOOST_TEST(fs::exists(dir / "gpt_learned_seed4.ckpt"));
  BOOST_TEST(summary().at("runs").empty(), summary().dump());

  train::TrainHooks in_final_evaluation;
  in_final_evaluation.after_training = [](nn::LanguageModel&, json&) { ::raise(SIGTERM); };
  experiments::Plan finished = plan(in_final_evaluation);
  BOOST_CHECK_THROW(finished.train(0, testing::toy_data()), train::Interrupted);
  const json run = json::parse(std::ifstream(run_file()));
  BOOST_TEST(!run.contains("interrupted"));
  BOOST_TEST_REQUIRE(summary().at("runs").size() == 1u, summary().dump());
  BOOST_TEST(summary()["runs"][0].at("test_ppl") == run.at("test_ppl"));
  BOOST_TEST(summary()["rows"][0].at("runs") == 1);
  BOOST_TEST(testing::g_passed_on.load() == 0);  // both handled by the Trainer
}

// A study's rows are kinds of token table by name: KIND-tied where the kind can tie, KIND-full
// in the data-size sweep only; a row given twice, or a suffix the kind cannot take, is refused.
// A study's run keeps its test loss in blocks of 1,000 tokens (the bootstrap's unit) and by
// the target's frequency band: both regroup the per-token losses, so each adds up to the test
// perplexity, and a band's tokens are those whose training count puts them there.
BOOST_FIXTURE_TEST_CASE(a_study_run_keeps_its_test_losses_by_block_and_band, StudyFolder) {
  experiments::Plan study = plan({});
  study.train(0, testing::toy_data());
  const json run = json::parse(std::ifstream(run_file()));
  const text::LMData& data = testing::toy_data();
  const size_t tokens = data.test.end - data.test.begin;
  const json& blocks = run.at("test_blocks");
  BOOST_TEST(blocks.at("tokens").get<size_t>() == experiments::kTestBlockTokens);
  BOOST_TEST(blocks.at("count").get<size_t>() == tokens);
  BOOST_TEST(blocks.at("nll_sums").size() == (tokens + 999) / 1000);
  double block_total = 0, band_total = 0;
  size_t band_tokens = 0;
  for (const auto& sum : blocks.at("nll_sums")) block_total += sum.get<double>();
  for (const auto& [band, loss] : run.at("test_bands").items()) {
    band_tokens += loss.at("tokens").get<size_t>();
    band_total += loss.at("nll_sum").get<double>();
  }
  const double log_ppl = std::log(run.at("test_ppl").get<double>());
  BOOST_TEST(block_total / static_cast<double>(tokens) == log_ppl,
             boost::test_tools::tolerance(1e-5));
  BOOST_TEST(band_total / static_cast<double>(tokens) == log_ppl,
             boost::test_tools::tolerance(1e-5));
  BOOST_TEST(band_tokens == tokens);
  // Losses made up per token: each band's sum is its tokens' own.
  std::vector<double> nll(tokens);
  for (size_t i = 0; i < tokens; ++i) nll[i] = 0.5 + static_cast<double>(i % 7);
  json made_up;
  experiments::add_test_losses(data, nll, made_up);
  const std::vector<size_t> count = text::train_counts(data);
  std::map<std::string, std::pair<size_t, double>> expected;
  for (size_t i = 0; i < tokens; ++i) {
    const int32_t id = data.stream[data.test.begin + i];
    auto& [n, sum] =
        expected[experiments::frequency_band(id, count[static_cast<size_t>(id)], data.vocab.unk())];
    ++n;
    sum += nll[i];
  }
  BOOST_TEST(made_up.at("test_bands").size() == expected.size());
  for (const auto& [band, e] : expected) {
    BOOST_TEST(made_up.at("test_bands").at(band).at("tokens").get<size_t>() == e.first, band);
    BOOST_TEST(made_up.at("test_bands").at(band).at("nll_sum").get<double>() == e.second);
  }
  BOOST_TEST(made_up.at("test_blocks").at("nll_sums").at(0).get<double>() == [&] {
    double s = 0;
    for (size_t i = 0; i < std::min<size_t>(1000, tokens); ++i) s += nll[i];
    return s;
  }());
  // Read back as written; a value of the wrong kind is refused, naming the file and the field.
  const experiments::TestLosses back = experiments::TestLosses::of_run(made_up, "x.json");
  BOOST_TEST(back.blocks->count == tokens);
  BOOST_TEST(back.bands.size() == expected.size());
  for (const auto& [band, e] : expected) BOOST_TEST(back.bands.at(band).nll_sum == e.second);
  BOOST_TEST(experiments::TestLosses::of_run(json::object(), "x.json").bands.empty());
  const auto refusal = [](const json& run) {
    try {
      (void)experiments::TestLosses::of_run(run, "runs/x.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  BOOST_TEST(refusal({{"test_bands", {{"rare (1-9)", {{"tokens", -1}}}}}}) ==
             "runs/x.json: field 'test_bands': rare (1-9): field 'tokens' is -1, not a whole "
             "number");
  BOOST_TEST(refusal({{"test_blocks", {{"nll_sums", {1.0, "x"}}}}}) ==
             "runs/x.json: field 'test_blocks': field 'nll_sums' is [1.0,\"x\"], not a number");
  BOOST_TEST(refusal({{"test_bands", 3}}) == "runs/x.json: field 'test_bands' is not an object");
}

// The bands by training count, the unknown word first.
BOOST_AUTO_TEST_CASE(frequency_bands_by_training_count) {
  BOOST_TEST(experiments::frequency_band(3, 500, 3) == std::string("<unk>"));
  BOOST_TEST(experiments::frequency_band(5, 0, 3) == std::string("unseen"));
  BOOST_TEST(experiments::frequency_band(5, 9, 3) == std::string("rare (1-9)"));
  BOOST_TEST(experiments::frequency_band(5, 10, 3) == std::string("middle (10-99)"));
  BOOST_TEST(experiments::frequency_band(5, 100, -1) == std::string("frequent (100+)"));
}

BOOST_AUTO_TEST_CASE(modes_are_kinds_of_table_by_name) {
  const auto modes = experiments::parse_modes("learned,learned-tied,finetune-pretrained");
  BOOST_REQUIRE_EQUAL(modes.size(), 3u);
  BOOST_TEST(modes[1].embedding == "learned");
  BOOST_TEST(modes[1].tied);
  BOOST_TEST(!modes[2].tied);
  const auto full = experiments::parse_modes("frozen-pretrained-full", true);
  BOOST_TEST(full[0].embedding == "frozen-pretrained");
  BOOST_TEST(full[0].full_vectors);
  const auto refused = [](const std::string& list, bool full_variants, const std::string& why) {
    try {
      experiments::parse_modes(list, full_variants);
      BOOST_ERROR("--modes " << list << " accepted");
    } catch (const std::invalid_argument& e) {
      BOOST_TEST(std::string(e.what()).find(why) != std::string::npos, e.what());
    }
  };
  refused("learned,learned", false, "'learned' is given twice");
  refused("frozen-pretrained-full", false, "unknown mode 'frozen-pretrained-full'");
  refused("frozen-random-full", true, "'frozen-random' loads no vectors");
  refused("learned-tied-tied", false, "unknown kind of token table 'learned-tied'");
  refused("", false, "no mode given");
}

BOOST_AUTO_TEST_SUITE_END()
