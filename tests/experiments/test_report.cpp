// Aggregation over seeds and the Markdown renderer, on fixed JSON input.
#include <boost/test/unit_test.hpp>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>

#include "base/files.hpp"
#include "experiments/lifecycle_probe.hpp"
#include "experiments/report/analysis.hpp"
#include "experiments/report/format.hpp"
#include "experiments/report/plots.hpp"
#include "experiments/report/render.hpp"
#include "experiments/report/runs_table.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"
#include "experiments/significance.hpp"
#include "experiments/study.hpp"
#include "temp_folder.hpp"

using namespace tg;
using nlohmann::json;

namespace {
json run(const std::string& model, const std::string& mode, double valid, double test) {
  return {{"model", model},
          {"mode", mode},
          {"valid_ppl", valid},
          {"test_ppl", test},
          {"train_ppl", valid - 50},
          {"trainable_params", 1500000},
          {"wall_s", 120.0},
          {"train_tokens_per_s", 5000.0},
          {"epochs", json::array({{{"epoch", 1}, {"valid_ppl", valid + 20}},
                                  {{"epoch", 2}, {"valid_ppl", valid}}})},
          {"seed", 1}};
}
namespace fs = std::filesystem;

// A results folder of its own for each test case.
using ResultsFolder = testing::TempFolder;

// A life-cycle summary of one learned GPT trained for `epochs` (early stopping when more than
// 2), its rare rows drifting by `drift` per epoch; `base` is its base_config.
json life_cycle_summary(size_t epochs, double drift, json base = {{"model", "gpt"}, {"seed", 1}}) {
  json run = {{"name", "gpt learned"},
              {"tied", false},
              {"vocab", 100},
              {"valid_ppl", 300.0},
              {"test_ppl", 280.0},
              {"rows_per_step_mean", 0.05},
              {"rows_per_epoch", json::array()},
              {"drift", json::array()},
              {"band_sizes", {{"rare (1-9)", 100}}},
              {"wordsim_input", 0.2},
              {"wordsim_output", 0.3},
              {"neighbours", json::array()}};
  for (size_t e = 1; e <= epochs; ++e) {
    run["rows_per_epoch"].push_back(0.9);
    run["drift"].push_back({{"epoch", e}, {"bands", {{"rare (1-9)", drift * e}}}});
  }
  if (epochs > 2) run["best_epoch"] = epochs - 2, run["stopped_early"] = true;
  return json{{"runs", {run}}, {"base_config", std::move(base)}};
}

const std::vector<std::string> kMetrics = {"valid_ppl",        "test_ppl", "train_ppl",
                                           "trainable_params", "wall_s",   "train_tokens_per_s"};
// A converged study's folder with test blocks: each mode's blocks `shift` nats per token above
// a common base on every block, three seeds. A shift of zero gets seed noise of both signs
// instead (not decided), but in the learned row (the reference); `jitter` adds that noise,
// scaled, to the shifted rows too.
void write_block_study(const fs::path& runs, const json& base,
                       const std::vector<std::pair<std::string, double>>& modes,
                       double jitter = 0) {
  const double noise[] = {0.004, -0.005, 0.001};
  std::vector<std::string> metrics = kMetrics;
  metrics.push_back("test_ppl_per_word");
  fs::create_directories(runs);
  const std::string model = base.at("model");
  std::vector<json> list;
  for (size_t seed = 1; seed <= 3; ++seed)
    for (const auto& [mode, shift] : modes) {
      const double offset =
          mode == "learned" && shift == 0 ? 0 : shift + (shift == 0 ? 1 : jitter) * noise[seed - 1];
      std::vector<double> sums;
      for (size_t k = 0; k < 100; ++k)
        sums.push_back(1000.0 * (5.7 + 0.2 * std::sin(static_cast<double>(k)) + offset));
      double total = 0;
      for (double v : sums) total += v;
      json r = run(model, mode, 300, std::exp(total / 100000.0));
      r["seed"] = seed;
      r["file"] = model + "_" + mode + "_seed" + std::to_string(seed) + ".json";
      if (base.contains("tokenizer")) r["test_ppl_per_word"] = 1.4 * r["test_ppl"].get<double>();
      json file = r;
      file["test_blocks"] = {{"tokens", 1000}, {"count", 100000}, {"nll_sums", sums}};
      file["config"] = base;
      std::ofstream(runs / r["file"].get<std::string>()) << file.dump();
      list.push_back(r);
    }
  std::ofstream(runs / "summary.json") << json{
      {"rows", experiments::aggregate(list, {"model", "mode"}, metrics)},
      {"runs", list},
      {"base_config", base}}.dump();
}
// One size's folder of the study across scale: a d16 GPT's runs over a 100-word vocabulary.
void write_size_summary(const fs::path& dir, const std::vector<json>& runs) {
  fs::create_directories(dir);
  std::ofstream(dir / "summary.json") << json{
      {"rows", experiments::aggregate(runs, {"model", "mode"}, kMetrics)},
      {"runs", runs},
      {"vocab", 100},
      {"base_config",
       {{"model", "gpt"}, {"d_model", 16}}}}.dump();
}
}  // namespace

BOOST_AUTO_TEST_SUITE(experiments_report)

// Exact counts in prose and tables: digits in groups of three.
BOOST_AUTO_TEST_CASE(counts_are_written_in_groups_of_three_digits) {
  using experiments::report::grouped;
  BOOST_TEST(grouped(0) == "0");
  BOOST_TEST(grouped(999) == "999");
  BOOST_TEST(grouped(1000) == "1,000");
  BOOST_TEST(grouped(50257) == "50,257");
  BOOST_TEST(grouped(1234567) == "1,234,567");
}

BOOST_AUTO_TEST_CASE(aggregate_mean_and_sample_std) {
  const json rows =
      experiments::aggregate({run("gpt", "learned", 300, 310), run("gpt", "learned", 310, 314),
                              run("gpt", "frozen-random", 500, 520)},
                             {"model", "mode"}, kMetrics);
  BOOST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(rows[0]["mode"] == "learned");  // first-seen order
  BOOST_TEST(rows[0]["runs"] == 2);
  BOOST_TEST(rows[0]["test_ppl"]["mean"].get<double>() == 312.0);
  BOOST_TEST(rows[0]["test_ppl"]["std"].get<double>() == std::sqrt(8.0),
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(rows[1]["test_ppl"]["std"].get<double>() == 0.0);
  BOOST_TEST(experiments::report::mean_spread(rows[0], "test_ppl") == "312.0 ± 2.8");
  BOOST_TEST(experiments::report::mean_spread(rows[1], "test_ppl") == "520.0");
  BOOST_TEST(experiments::report::mean_spread(rows[1], "missing") == "-");
}

BOOST_AUTO_TEST_CASE(tables_render_from_summary_json) {
  json summary = {{"rows", experiments::aggregate({run("gpt", "learned", 300, 310),
                                                   run("nplm", "learned-tied", 400, 410)},
                                                  {"model", "mode"}, kMetrics)},
                  {"base_config", {{"epochs", 2}}}};
  const std::string table = experiments::report::embeddings_table(summary);
  BOOST_TEST(table.find("| gpt | learned | 1.50M | 300.0 | 310.0 | 250.0 | 2.0 min | 5000 | 1 |") !=
                 std::string::npos,
             table);
  BOOST_TEST(table.find("| nplm | learned-tied |") != std::string::npos);
  const std::string bengio = experiments::report::bengio_reference_table(&summary);
  BOOST_TEST(bengio.find("| 252 |") != std::string::npos);
  BOOST_TEST(bengio.find("best row of section 1a (2 epochs), gpt learned (1 run) | 310.0 |") !=
                 std::string::npos,
             bengio);
  // The budget is the study's: a run of --steps says so.
  json by_steps = summary;
  by_steps["base_config"] = {{"steps", 300}};
  BOOST_TEST(experiments::report::bengio_reference_table(&by_steps).find(
                 "best row of section 1a (300 steps), gpt learned") != std::string::npos);
  // A study of another corpus is not set beside the paper's Brown rows.
  json own_corpus = summary;
  own_corpus["base_config"] = {{"epochs", 2}, {"corpus", "my_text.txt"}};
  const std::string apart = experiments::report::reference_section(own_corpus, json());
  BOOST_TEST(apart.find("## Reference: Bengio et al. (2003) on Brown\n") == 0u, apart);
  BOOST_TEST(apart.find("not on Brown: its rows are not comparable") != std::string::npos, apart);
  BOOST_TEST(apart.find("this repository") == std::string::npos, apart);
  json longer = {{"rows", experiments::aggregate(
                              {run("gpt", "learned", 270, 249), run("gpt", "learned", 272, 251)},
                              {"model", "mode"}, kMetrics)}};
  const std::string both = experiments::report::bengio_reference_table(&summary, &longer);
  BOOST_TEST(
      both.find("longer training (section 1b), gpt learned (2 runs, mean) | 250.0 ± 1.4 |") !=
          std::string::npos,
      both);

  json size = {{"fractions", {0.05, 1.0}}};
  json r1 = run("gpt", "learned", 600, 650), r2 = run("gpt", "learned", 300, 310);
  r1["fraction"] = 0.05, r1["train_tokens"] = 40000, r2["fraction"] = 1.0,
  r2["train_tokens"] = 800000;
  size["rows"] =
      experiments::aggregate({r1, r2}, {"model", "mode", "fraction", "train_tokens"}, {"test_ppl"});
  const std::string st = experiments::report::data_size_table(size);
  BOOST_TEST(st.find("| model | embedding | 5% | 100% |") != std::string::npos, st);
  BOOST_TEST(st.find("| gpt | learned | 650.0 | 310.0 |") != std::string::npos, st);
}

BOOST_FIXTURE_TEST_CASE(report_names_a_data_size_sweep_by_its_largest_share, ResultsFolder) {
  // exp_data_size describes each share; a sweep of 25% and 100% names the whole split.
  fs::create_directories(dir / "data_size");
  json r1 = run("gpt", "learned", 600, 650), r2 = run("gpt", "learned", 300, 310);
  r1["fraction"] = 0.25;
  r1["train_tokens"] = 200;
  r2["fraction"] = 1.0;
  r2["train_tokens"] = 800;
  const json size = {
      {"fractions", {0.25, 1.0}},
      {"data", {{"f0.25", "toy: train 200 (25% of 800)"}, {"f1", "toy: train 800"}}},
      {"rows", experiments::aggregate({r1, r2}, {"model", "mode", "fraction", "train_tokens"},
                                      {"test_ppl"})},
      {"runs", {r1, r2}}};
  std::ofstream(dir / "data_size" / "summary.json") << size.dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t section = md.find("## 2. How much data: where does pretraining help?\n\n");
  BOOST_TEST_REQUIRE(section != std::string::npos, md);
  BOOST_TEST(md.find("toy: train 800\n", section) == md.find("\n\n", section) + 2, md);
  BOOST_TEST(md.find("25% of 800") == std::string::npos, md);
}

BOOST_FIXTURE_TEST_CASE(report_shows_the_longer_runs_of_a_target_folder, ResultsFolder) {
  fs::create_directories(dir / "embeddings");
  fs::create_directories(dir / "target" / "embeddings");
  const json learned = run("gpt", "learned", 300, 310);
  json summary = {{"rows", experiments::aggregate({learned}, {"model", "mode"}, kMetrics)},
                  {"runs", json::array({learned})}};
  std::ofstream(dir / "embeddings" / "summary.json") << summary.dump();
  const json finetuned = run("gpt", "finetune-pretrained", 270, 247);
  json longer = {
      {"rows", experiments::aggregate({finetuned}, {"model", "mode"}, kMetrics)},
      {"runs", json::array({finetuned})},
      {"base_config", {{"model", "gpt"}, {"d_model", 128}, {"epochs", 5}, {"patience", 1}}}};
  std::ofstream(dir / "target" / "embeddings" / "summary.json") << longer.dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(md.find("## 1b. Longer training") != std::string::npos, md);
  BOOST_TEST(md.find("gpt, d_model 128") != std::string::npos, md);
  BOOST_TEST(md.find("| gpt | finetune-pretrained |") != std::string::npos, md);
  BOOST_TEST(md.find("longer training (section 1b), gpt finetune-pretrained (1 run) | 247.0 |") !=
                 std::string::npos,
             md);
}

BOOST_FIXTURE_TEST_CASE(report_calibrates_the_ngram_rows_against_the_paper, ResultsFolder) {
  fs::create_directories(dir / "embeddings");
  fs::create_directories(dir / "ngram");
  const json learned = run("gpt", "learned", 300, 310);
  json summary = {{"rows", experiments::aggregate({learned}, {"model", "mode"}, kMetrics)},
                  {"runs", json::array({learned})}};
  std::ofstream(dir / "embeddings" / "summary.json") << summary.dump();
  json kn = {{"program", "ngram"},
             {"config", {{"smoothing", "kneser-ney"}, {"order", 5}}},
             {"valid_ppl", 350.0},
             {"test_ppl", 353.1}};
  std::ofstream(dir / "ngram" / "kneser-ney_5.json") << kn.dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  // 353.1 / 321 (Bengio et al.'s Kneser-Ney 5-gram) = 1.100
  BOOST_TEST(md.find("| kneser-ney 5-gram | 350.0 | 353.1 | 321 | 1.100 |") != std::string::npos,
             md);
  BOOST_TEST(md.find("## Calibration") < md.find("## 1."));
}

// Run files with test blocks: frozen-random is 0.05 nats per token worse than learned on
// every block (a difference no resample can hide); finetune-pretrained differs by noise only.
BOOST_FIXTURE_TEST_CASE(report_tests_each_mode_against_learned_with_a_block_bootstrap,
                        ResultsFolder) {
  const fs::path runs = dir / "converged" / "gpt";
  fs::create_directories(runs);
  std::vector<json> list;
  const auto add = [&](const std::string& mode, size_t seed, double shift, bool alternate) {
    std::vector<double> sums;
    for (size_t k = 0; k < 100; ++k)
      sums.push_back(1000.0 * (5.7 + 0.2 * std::sin(static_cast<double>(k)) + shift +
                               (alternate ? (k % 2 ? 0.01 : -0.01) : 0.0)));
    double total = 0;
    for (double v : sums) total += v;
    json r = run("gpt", mode, 300, std::exp(total / 100000.0));
    r["seed"] = seed;
    r["best_epoch"] = 4;
    if (mode == "learned-tied") r["trainable_params"] = 800000;  // one table for two
    r["file"] = "/elsewhere/gpt_" + mode + "_seed" + std::to_string(seed) + ".json";
    json file = r;
    file["test_blocks"] = {{"tokens", 1000}, {"count", 100000}, {"nll_sums", sums}};
    if (seed == 2) file["train_seconds"] = 600.0;     // the epochs table prefers it to wall_s
    file["stopped_early"] = mode != "frozen-random";  // which ran into the epoch cap
    std::ofstream(runs / ("gpt_" + mode + "_seed" + std::to_string(seed) + ".json")) << file.dump();
    list.push_back(r);
  };
  for (size_t seed : {1, 2}) {
    add("learned", seed, seed * 0.001, false);
    add("frozen-random", seed, 0.05 + seed * 0.001, false);
    add("finetune-pretrained", seed, seed * 0.001, true);
    add("learned-tied", seed, -0.03 + seed * 0.001, false);
  }
  // A third learned seed that the other rows have not run yet: compared over seeds 1 and 2
  // only (an average over seeds 1-3 would shift every difference below).
  add("learned", 3, 0.2, false);
  json summary = {{"rows", experiments::aggregate(list, {"model", "mode"}, kMetrics)},
                  {"runs", list},
                  {"base_config", {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}}}};
  std::ofstream(runs / "summary.json") << summary.dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(md.find("## 1. At convergence") != std::string::npos, md);
  BOOST_TEST(md.find("| gpt | frozen-random | 15.") != std::string::npos, md);
  const size_t random_row = md.find("| gpt | frozen-random | 15.");
  BOOST_TEST(md.substr(random_row, md.find('\n', random_row) - random_row).find("| worse |") !=
                 std::string::npos,
             md);
  // Per seed: test ppl exp(base + 0.001 s) against exp(base + 0.05 + 0.001 s), s = 1, 2.
  double base = 0;
  for (size_t k = 0; k < 100; ++k) base += (5.7 + 0.2 * std::sin(static_cast<double>(k))) / 100;
  const double d1 = std::exp(base + 0.051) - std::exp(base + 0.001),
               d2 = std::exp(base + 0.052) - std::exp(base + 0.002);
  // The mean difference first, then the per-seed spread, the t-test's p, Holm's and the verdict.
  char mean[48], per_seed[96];
  std::snprintf(mean, sizeof mean, "| gpt | frozen-random | %.1f | ", (d1 + d2) / 2);
  std::snprintf(per_seed, sizeof per_seed, "| %.1f (%.1f to %.1f) | ",
                std::abs(d2 - d1) / std::sqrt(2.0), d1, d2);
  const std::string row = md.substr(random_row, md.find('\n', random_row) - random_row);
  BOOST_TEST(row.starts_with(mean), mean << "\n" << row);
  BOOST_TEST(row.find(per_seed) != std::string::npos, per_seed << "\n" << row);
  // Two seeds 0.3 apart on a difference of 15: t about 100 with one degree of freedom, p about
  // 0.006; three comparisons, so Holm's p is at most three times that.
  const experiments::TTest t = experiments::paired_t_test(std::vector<double>{d1, d2});
  BOOST_TEST(t.p < 0.05 / 3);
  // Beside it, the Student t interval the paired test inverts (not a bootstrap of two seeds).
  const experiments::TInterval interval = experiments::t_interval(std::vector<double>{d1, d2});
  char interval_cell[64];
  std::snprintf(interval_cell, sizeof interval_cell, "| %.1f to %.1f |", interval.low,
                interval.high);
  BOOST_TEST(row.find(interval_cell) != std::string::npos, interval_cell << "\n" << row);
  const size_t finetune_row = md.find("| gpt | finetune-pretrained | 0.");
  BOOST_TEST(finetune_row != std::string::npos, md);
  BOOST_TEST(
      md.substr(finetune_row, md.find('\n', finetune_row) - finetune_row).find("| not decided (") !=
          std::string::npos,
      md);
  BOOST_TEST(md.find("| gpt | learned | 4/2 (2.0 min), 4/2 (10.0 min), 4/2 (2.0 min) |") !=
                 std::string::npos,
             md);
  // The table's time column is the mean training time from the runs' files: (120 + 600 +
  // 120) / 3 s for learned, whose seed 2 says how long it trained over its sittings.
  const size_t learned_row = md.find("| gpt | learned |");
  BOOST_TEST(md.find("| training time (mean) |") < learned_row, md);
  BOOST_TEST(md.substr(learned_row, md.find('\n', learned_row) - learned_row).find("| 4.7 min |") !=
                 std::string::npos,
             md);
  // The conclusions repeat each verdict with its numbers, before the tables.
  const size_t conclusion = md.find("  - frozen-random: 15.");
  BOOST_TEST(conclusion < md.find("## 1. At convergence"), md);
  const std::string line = md.substr(conclusion, md.find('\n', conclusion) - conclusion);
  BOOST_TEST(line.find("; 2 seeds, p ") != std::string::npos, line);
  BOOST_TEST(line.find(", Holm ") != std::string::npos, line);
  BOOST_TEST(line.ends_with("): worse"), line);
  // First, the verdicts grouped: the question's answer in one line per amount of data.
  // The frozen-random runs used all their epochs: the verdicts' heading and the setup say so.
  const std::string heading =
      "- **gpt at convergence or the epoch cap** (2 of its 9 runs used all 12 epochs, not "
      "converged by the early-stopping rule), test perplexity against learned embeddings";
  BOOST_TEST(md.find(heading) != std::string::npos, md);
  BOOST_TEST(md.find("- **In short** (GPT; ") < md.find(heading), md);
  BOOST_TEST(md.find(" 2 of the 9 runs used all 12 epochs (cap in the epochs table): not "
                     "converged by that rule.") != std::string::npos,
             md);
  BOOST_TEST(md.find("  - the whole training split: better: learned-tied; worse: frozen-random; "
                     "not decided: finetune-pretrained\n") != std::string::npos,
             md);
  // Beside tying's verdict, what it saves: 800,000 trained parameters instead of 1,500,000;
  // and, the base configuration being the defaults (AdamW, weight decay 0.1 on the untied
  // output matrix only), that the comparison is confounded; section 1c, which would pair it
  // with untied runs of the same policy, has none of them yet.
  const size_t tied = md.find("  - learned-tied: -");
  BOOST_TEST(tied < md.find("## 1. At convergence"), md);
  BOOST_TEST(md.find("  - tying trains 800.0k parameters instead of 1.50M (47% fewer); the "
                     "comparison is confounded: the untied output matrix has weight decay 0.10, "
                     "the tied table none (--table-decay output; section 1c will compare tying "
                     "under one policy once `converged/gpt_table_decay_none/` has runs)\n") !=
                 std::string::npos,
             md);
  BOOST_TEST(md.find("| gpt | frozen-random | 4/2 (2.0 min, cap), 4/2 (10.0 min, cap) |") !=
                 std::string::npos,
             md);
  // With gnuplot, the validation curves of the converged runs sit in their folder and REPORT.md
  // (in dir) links them there.
  if (fs::exists("/usr/bin/gnuplot")) {
    const std::string with_plots = experiments::report::render_report(dir.string(), true);
    BOOST_TEST(
        with_plots.find("![valid_curves](converged/gpt/valid_curves.png)") != std::string::npos,
        with_plots);
    BOOST_TEST(fs::file_size(runs / "valid_curves.png") > 1000u);
  }
}

// The validation curves get a second panel near the best only when some curve reaches well
// above it: 12% above the lowest point, when the highest is more than 24% above.
BOOST_AUTO_TEST_CASE(a_zoomed_panel_only_when_a_curve_squashes_the_others) {
  using experiments::report::near_best_range;
  BOOST_TEST(!near_best_range({}));
  BOOST_TEST(!near_best_range({300, 320, 372}));  // 24% above: the full plot shows them
  const auto zoom = near_best_range({450, 300, 310, 620});
  BOOST_REQUIRE(zoom.has_value());
  BOOST_TEST(zoom->first == 300.0);
  BOOST_TEST(zoom->second == 336.0, boost::test_tools::tolerance(1e-9));
}

// A recurrent model's study (converged/lstm) is section 1's third model: its own setup line
// and table, its comparisons in Holm's family, and a conclusion saying, mode by mode, whether
// the GPT's verdict holds for it.
BOOST_FIXTURE_TEST_CASE(report_sets_the_lstm_study_beside_the_gpt_with_its_verdicts,
                        ResultsFolder) {
  const auto study = [&](const std::string& folder, const json& base,
                         const std::vector<std::pair<std::string, double>>& modes,
                         double jitter = 0) {
    write_block_study(dir / "converged" / folder, base, modes, jitter);
  };
  study("gpt", {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}},
        {{"learned", 0},
         {"learned-tied", -0.05},
         {"frozen-pretrained", -0.05},
         {"finetune-pretrained", 0},
         {"frozen-random", 0.05}});
  // With seed noise: learned-tied's -0.004 is not decided, the 0.05s are.
  study("lstm",
        {{"model", "lstm"},
         {"d_model", 128},
         {"hidden", 128},
         {"layers", 2},
         {"context", 64},
         {"epochs", 12}},
        {{"learned", 0},
         {"learned-tied", -0.004},
         {"frozen-pretrained", 0.05},
         {"finetune-pretrained", -0.05},
         {"frozen-random", 0.05}},
        1.0);
  // The GPT in GPT-2's tokens: its own folder, named by what it reads.
  study("gpt2", {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}, {"tokenizer", "gpt2"}},
        {{"learned", 0}, {"learned-tied", -0.05}});
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t setup = md.find(
      "`converged/lstm/`: lstm, d_model 128, 2 layers of 128 hidden units, "
      "state carried across batches (truncated backpropagation through "
      "time over 64 tokens)");
  BOOST_TEST(setup != std::string::npos, md);
  BOOST_TEST(md.find("`converged/gpt/`: ") < setup, md);
  BOOST_TEST(setup < md.find("## 2."), md);
  BOOST_TEST(md.find("| lstm | frozen-random | ") != std::string::npos, md);
  BOOST_TEST(md.find("- **lstm at convergence**") < md.find("## 1. At convergence"), md);
  // Not decided is not the opposite verdict: a mode decided for one model only is listed apart,
  // with both differences.
  const size_t hold = md.find(
      "- **Does the GPT's verdict hold for lstm?** The same verdict: frozen-random (worse); the "
      "opposite: frozen-pretrained (here worse, gpt better); decided for one of the two only (mean "
      "test perplexity differences against learned): learned-tied (here not decided at -1.");
  BOOST_TEST_REQUIRE(hold != std::string::npos, md);
  const std::string line = md.substr(hold, md.find('\n', hold) - hold);
  BOOST_TEST(line.find(", gpt better at -14.") != std::string::npos, line);
  BOOST_TEST(line.find("), finetune-pretrained (here better at -14.") != std::string::npos, line);
  BOOST_TEST(line.ends_with(", gpt not decided at +0.0)."), line);
  const size_t bpe = md.find(
      "`converged/gpt2/`: gpt, d_model 128, 2 layers, 4 heads, context 64, "
      "reading GPT-2's byte-level BPE tokens, batch 32");
  BOOST_TEST(bpe != std::string::npos, md);
  const size_t per_word = md.find("| test ppl | test ppl per word | train ppl |", bpe);
  BOOST_TEST(per_word < md.find("## 2."), md);
  BOOST_TEST(md.find("test ppl per word") > bpe, "only the subword table has the column");
  // In short, after the words, the verdicts in GPT-2's tokens.
  const size_t in_words = md.find(
      "  - the whole training split: better: learned-tied, "
      "frozen-pretrained; worse: frozen-random");
  BOOST_TEST_REQUIRE(in_words != std::string::npos, md);
  BOOST_TEST(md.find("  - the whole training split, in GPT-2's 50,257 tokens: better: "
                     "learned-tied\n",
                     in_words) < md.find("- **gpt at convergence**"),
             md);
  BOOST_TEST(md.find("- **gpt in GPT-2's 50,257 tokens at convergence**, test perplexity against "
                     "learned embeddings (section 1, `converged/gpt2/`):") < md.find("## 1."),
             md);
  // Its rows stand on the one scale too (no n-grams here: no calibration, so checked through
  // the scale rows directly).
  const std::vector<experiments::report::ConvergedStudy> converged =
      experiments::report::load_converged(dir / "converged");
  const auto scale = experiments::report::scale_rows({}, {}, converged);
  BOOST_TEST(std::ranges::any_of(scale, [](const experiments::report::ScaleRow& r) {
    return r.model == "lstm d128, frozen-random (section 1)" && r.seeds == 3;
  }));
}

// Runs that record their CPU time are timed by it (a paused run's wall time says nothing of its
// cost); a study where some run does not keeps the training time.
BOOST_FIXTURE_TEST_CASE(converged_tables_show_cpu_time_where_every_run_has_it, ResultsFolder) {
  const fs::path folder = dir / "converged" / "gpt";
  write_block_study(folder, {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}},
                    {{"learned", 0}, {"learned-tied", -0.05}});
  const auto set_cpu = [&](const std::string& mode, size_t seed, double seconds) {
    const fs::path file = folder / ("gpt_" + mode + "_seed" + std::to_string(seed) + ".json");
    json run = json::parse(std::ifstream(file));
    run["cpu_s"] = seconds;
    run["train_seconds"] = 10 * seconds;  // paused for most of its sittings
    run["steps"] = 100;
    run["tokens_per_step"] = 60;
    std::ofstream(file) << run.dump();
  };
  for (size_t seed = 1; seed <= 3; ++seed) {
    set_cpu("learned", seed, 60.0 * static_cast<double>(seed));  // 1, 2, 3 min: mean 2 min
    set_cpu("learned-tied", seed, 300.0);
  }
  std::string md = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(md.find("| CPU time (mean) |") != std::string::npos, md);
  BOOST_TEST(md.find("Times are CPU times") != std::string::npos, md);
  const size_t learned_row = md.find("| gpt | learned | 1.50M |");
  BOOST_TEST_REQUIRE(learned_row != std::string::npos, md);
  // 6,000 tokens a run: 18,000 in 6 min of CPU, 50 a second.
  BOOST_TEST(md.find("| CPU time (mean) | train tokens per CPU second |") != std::string::npos, md);
  BOOST_TEST(md.substr(learned_row, md.find('\n', learned_row) - learned_row)
                     .find("| 2.0 min | 50 | 3 |") != std::string::npos,
             md);
  BOOST_TEST(md.find("best epoch / epochs run (CPU time)") != std::string::npos, md);
  BOOST_TEST(md.find("| gpt | learned-tied | 0/2 (5.0 min), 0/2 (5.0 min), 0/2 (5.0 min) |") !=
                 std::string::npos,
             md);
  // One run without: the training time, for every run.
  json run = json::parse(std::ifstream(folder / "gpt_learned_seed1.json"));
  run.erase("cpu_s");
  std::ofstream(folder / "gpt_learned_seed1.json") << run.dump();
  md = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(md.find("| training time (mean) |") != std::string::npos, md);
  BOOST_TEST(md.find("| gpt | learned-tied | 0/2 (50.0 min),") != std::string::npos, md);
}

// Section 1c at two widths: each width's learned-tied against its untied runs without decay on
// the vocabulary matrices, and Welch's test of tying's effect at d256 against d128's.
BOOST_FIXTURE_TEST_CASE(report_compares_tying_at_two_widths, ResultsFolder) {
  const json d128 = {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}},
             d256 = {{"model", "gpt"}, {"d_model", 256}, {"epochs", 12}};
  // Tying: -0.06 nats per token at d128 (-5.8% perplexity), -0.02 at d256 (-2.0%), with seed
  // noise; the untied runs without decay are the folders' learned rows.
  write_block_study(dir / "converged" / "gpt", d128, {{"learned", 0}, {"learned-tied", -0.06}},
                    0.5);
  write_block_study(dir / "converged" / "gpt_table_decay_none", d128, {{"learned", 0}});
  write_block_study(dir / "converged" / "gpt_d256", d256, {{"learned", 0}, {"learned-tied", -0.02}},
                    0.5);
  // And in a Brown BPE: section 1's learned-tied runs of gpt_bpe8k against its untied runs
  // without decay, a row of its own that leaves the width comparison to the word-level GPTs.
  write_block_study(dir / "converged" / "gpt_bpe8k", d128, {{"learned", 0}, {"learned-tied", -0.1}},
                    0.5);
  write_block_study(dir / "converged" / "gpt_bpe8k_table_decay_none", d128, {{"learned", 0}});
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t section = md.find("## 1c. Tying with one decay policy");
  BOOST_TEST_REQUIRE(section != std::string::npos, md);
  BOOST_TEST(md.find("| gpt d128 | learned-tied | ", section) != std::string::npos, md);
  BOOST_TEST(md.find("| gpt d256 | learned-tied | ", section) != std::string::npos, md);
  BOOST_TEST(md.find("| gpt d128, Brown BPE 8,192 | learned-tied | ", section) != std::string::npos,
             md);
  BOOST_TEST(md.find("`converged/gpt_d256/`", section) != std::string::npos, md);
  BOOST_TEST(
      md.find("against `converged/gpt_bpe8k_table_decay_none/`", section) != std::string::npos, md);
  // Per seed exp(-0.06 + 0.5 n_s) - 1 and exp(-0.02 + 0.5 n_s) - 1 for the noise n_s.
  std::vector<double> narrow, wide;
  for (double n : {0.004, -0.005, 0.001}) {
    narrow.push_back(std::exp(-0.06 + 0.5 * n) - 1);
    wide.push_back(std::exp(-0.02 + 0.5 * n) - 1);
  }
  const auto mean = [](const std::vector<double>& v) { return (v[0] + v[1] + v[2]) / 3; };
  // Each row's mean test perplexity beside the effect: untied exp(5.7 + 0.2 mean(sin k)), every
  // seed; tied that times each seed's 1 + effect.
  double sines = 0;
  for (size_t k = 0; k < 100; ++k) sines += std::sin(static_cast<double>(k));
  const double untied = std::exp(5.7 + 0.2 * sines / 100);
  char row[96];
  std::snprintf(row, sizeof row, "| gpt d128 | 3 | %.1f | %.1f | %.2f%% (", untied,
                untied * (1 + mean(narrow)), 100 * mean(narrow));
  BOOST_TEST(md.find(row, section) != std::string::npos, row << "\n" << md);
  std::snprintf(row, sizeof row, "| gpt d256 | 3 | %.1f | %.1f | %.2f%% (", untied,
                untied * (1 + mean(wide)), 100 * mean(wide));
  BOOST_TEST(md.find(row, section) != std::string::npos, row << "\n" << md);
  std::vector<double> bpe;
  for (double n : {0.004, -0.005, 0.001}) bpe.push_back(std::exp(-0.1 + 0.5 * n) - 1);
  std::snprintf(row, sizeof row, "| gpt d128, Brown BPE 8,192 | 3 | %.1f | %.1f | %.2f%% (", untied,
                untied * (1 + mean(bpe)), 100 * mean(bpe));
  BOOST_TEST(md.find(row, section) != std::string::npos, row << "\n" << md);
  // The effects differ by 3.9 points with a seed sd of 0.2: decided, tying helps less at d256.
  const experiments::TTest welch = experiments::welch_t_test(wide, narrow);
  BOOST_TEST(welch.p < 0.001);
  char sentence[96];
  std::snprintf(sentence, sizeof sentence, "gpt d256 against d128: +%.2f percentage points",
                100 * (mean(wide) - mean(narrow)));
  const size_t line = md.find(sentence, section);
  BOOST_TEST_REQUIRE(line != std::string::npos, sentence << "\n" << md);
  BOOST_TEST(md.substr(line, md.find('\n', line) - line)
                 .ends_with("): tying helps less at the larger width (or hurts)."),
             md);
  // And in the conclusions, with the rows.
  BOOST_TEST(
      md.find("  - does tying's effect change with the width? gpt d256 against d128: +") < section,
      md);
  BOOST_TEST(md.find("  - gpt d256, learned-tied: -") < section, md);
}

// Section 1c by band: tied against untied without decay, paired by seed, in the section's
// table and, from two seeds on, in the conclusions.
BOOST_FIXTURE_TEST_CASE(tying_with_one_decay_policy_by_band, ResultsFolder) {
  const json d128 = {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}};
  write_block_study(dir / "converged" / "gpt", d128, {{"learned", 0}, {"learned-tied", -0.06}},
                    0.5);
  write_block_study(dir / "converged" / "gpt_table_decay_none", d128, {{"learned", 0}});
  // Seed s's frequent tokens at 4 nats (untied) and 3.9 + 0.01 s (tied); unseen ones at 9 and
  // 10 + 0.1 s: tied minus untied -0.08 and +1.2 on average, both intervals clear of zero.
  const auto add_bands = [&](const std::string& folder, const std::string& mode, bool tied) {
    for (size_t seed = 1; seed <= 3; ++seed) {
      const fs::path file =
          dir / "converged" / folder / ("gpt_" + mode + "_seed" + std::to_string(seed) + ".json");
      json run = json::parse(std::ifstream(file));
      const double s = static_cast<double>(seed);
      run["test_bands"] = {
          {"frequent (100+)",
           {{"tokens", 1000}, {"nll_sum", 1000 * (tied ? 3.9 + 0.01 * s : 4.0)}}},
          {"unseen", {{"tokens", 10}, {"nll_sum", 10 * (tied ? 10.0 + 0.1 * s : 9.0)}}}};
      std::ofstream(file) << run.dump();
    }
  };
  add_bands("gpt", "learned-tied", true);
  add_bands("gpt_table_decay_none", "learned", false);
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t section = md.find("## 1c. Tying with one decay policy");
  BOOST_TEST_REQUIRE(section != std::string::npos, md);
  BOOST_TEST(md.find("By how often the target occurs in the training split, each row against "
                     "its model's `learned, no table decay` row seed by seed",
                     section) != std::string::npos,
             md);
  BOOST_TEST(md.find("| gpt d128 | learned-tied | 3 | -0.080 (", section) != std::string::npos, md);
  const size_t line = md.find("  - by band, gpt d128 (3 seeds; tied minus untied");
  BOOST_TEST_REQUIRE(line != std::string::npos, md);
  BOOST_TEST(line < section, md);
  BOOST_TEST(
      md.substr(line, md.find('\n', line) - line)
          .ends_with(
              "; uncorrected interval below zero in: frequent (100+); above zero in: unseen"),
      md);
}

// Section 3c: LazyAdam's learned runs against AdamW's, seed by seed in Holm's family, with each
// one's rare-row drift at its best epoch; and 3d, the life cycle in GPT-2's tokens.
BOOST_FIXTURE_TEST_CASE(report_sets_lazy_adam_against_adamw_and_the_gpt2_life_cycle,
                        ResultsFolder) {
  const json base = {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}};
  write_block_study(dir / "converged" / "gpt", base, {{"learned", 0}});
  // LazyAdam 0.02 nats per token worse on every block, with seed noise.
  json lazy_base = base;
  lazy_base["optimizer"] = "lazy-adam";
  write_block_study(dir / "converged" / "gpt_lazy_adam", lazy_base, {{"learned", 0.02}}, 0.5);
  const auto life = [&](const std::string& folder, double drift, json with) {
    fs::create_directories(dir / "converged" / folder);
    json summary = life_cycle_summary(6, drift, with);
    summary["runs"][0]["rows_changed_per_step_mean"] = drift == 0.05 ? 0.047 : 0.785;
    std::ofstream(dir / "converged" / folder / "summary.json") << summary.dump();
  };
  life("lifecycle", 0.1, {{"model", "gpt"}, {"seed", 1}});
  life("lifecycle_lazy_adam", 0.05, {{"model", "gpt"}, {"seed", 1}, {"optimizer", "lazy-adam"}});
  life("lifecycle_gpt2", 0.1, {{"model", "gpt"}, {"seed", 1}, {"tokenizer", "gpt2"}});
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t section = md.find("## 3c. AdamW against LazyAdam at convergence");
  BOOST_TEST_REQUIRE(section != std::string::npos, md);
  // Its comparisons join Holm's family, and the method sentence says so.
  BOOST_TEST(md.find("Holm's correction across every comparison of sections 1, 1c, 2 and 3c",
                     section) != std::string::npos,
             md);
  const size_t row = md.find("| gpt | learned, lazy-adam | ", section);
  BOOST_TEST_REQUIRE(row != std::string::npos, md);
  BOOST_TEST(md.substr(row, md.find('\n', row) - row).ends_with("| worse |"), md);
  // Drift at the best epoch (4 of 6): 0.1 x 4 under AdamW, 0.05 x 4 under LazyAdam.
  BOOST_TEST(md.find("| rare (1-9) | 0.400 | 0.200 |", section) != std::string::npos, md);
  BOOST_TEST(md.find("AdamW 78.50%, LazyAdam 4.70%", section) != std::string::npos, md);
  const size_t conclusion = md.find("- **LazyAdam against AdamW** (section 3c)");
  BOOST_TEST(conclusion < md.find("## 1."), md);
  BOOST_TEST(md.find("  - learned, lazy-adam: ", conclusion) < md.find("## 1."), md);
  BOOST_TEST(md.find("  - rare rows (1-9 training occurrences) drift 0.200 under LazyAdam "
                     "against 0.400 under AdamW") < md.find("## 1."),
             md);
  const size_t gpt2 = md.find("## 3d. The life cycle of GPT-2's 50,257-row table");
  BOOST_TEST_REQUIRE(gpt2 != std::string::npos, md);
  BOOST_TEST(md.find("`converged/lifecycle_gpt2/`: gpt, ", gpt2) != std::string::npos, md);
  BOOST_TEST(md.find("reading GPT-2's byte-level BPE tokens", gpt2) != std::string::npos, md);
}

// The setup line names the model's own shape, from a run's configuration: exp_embeddings
// sets the NPLM's hidden width to its d_model, whatever --hidden says in the base config.
BOOST_FIXTURE_TEST_CASE(the_setup_line_names_the_shape_the_runs_had, ResultsFolder) {
  const fs::path runs = dir / "converged" / "nplm";
  fs::create_directories(runs);
  const json base = {{"model", "nplm"}, {"d_model", 96},       {"hidden", 100},
                     {"ngram", 5},      {"direct", false},     {"context", 32},
                     {"layers", 2},     {"heads", 4},          {"batch", 16},
                     {"lr", 0.001},     {"optimizer", "adam"}, {"weight_decay", 1e-4},
                     {"epochs", 40},    {"patience", 2}};
  json r = run("nplm", "learned", 280, 267);
  r["file"] = "nplm_learned_seed1.json";
  json file = r;
  file["config"] = base;
  file["config"]["hidden"] = 96;
  std::ofstream(runs / "nplm_learned_seed1.json") << file.dump();
  std::ofstream(runs / "summary.json") << json{
      {"rows", experiments::aggregate({r}, {"model", "mode"}, kMetrics)},
      {"runs", {r}},
      {"base_config", base}}.dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t line = md.find("`converged/nplm/`: ");
  BOOST_TEST_REQUIRE(line != std::string::npos, md);
  const std::string setup = md.substr(line, md.find('\n', line) - line);
  BOOST_TEST(setup.starts_with("`converged/nplm/`: nplm, d_model 96, n 5, 96 hidden units, no "
                               "direct connections, windows of 32 predictions, batch 16, adam "
                               "lr 0.001, weight decay 0.0001, "),
             setup);
  BOOST_TEST(setup.find("layers") == std::string::npos, setup);
}

BOOST_FIXTURE_TEST_CASE(report_puts_the_nplm_rows_next_to_the_paper, ResultsFolder) {
  fs::create_directories(dir / "paper_nplm");
  fs::create_directories(dir / "ngram");
  std::ofstream(dir / "ngram" / "kneser-ney_5.json")
      << json({{"program", "ngram"},
               {"config", {{"smoothing", "kneser-ney"}, {"order", 5}}},
               {"valid_ppl", 340.0},
               {"test_ppl", 330.63}})
             .dump();
  json mlp9 = run("nplm", "learned", 300, 284.28);
  mlp9["best_epoch"] = 9;
  std::ofstream(dir / "paper_nplm" / "mlp9_seed1.json") << mlp9.dump();
  std::ofstream(dir / "paper_nplm" / "mixture_mlp9_seed1.json")
      << json({{"program", "ngram"},
               {"config", {{"smoothing", "jelinek-mercer"}, {"order", 3}}},
               {"mixture", {{"weight", 0.71}, {"valid_ppl", 280.0}, {"test_ppl", 259.56}}}})
             .dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  // Calibration: 330.63 / 321 = 1.030; 284.28 / (276 x 1.030) = 1.000.
  BOOST_TEST(md.find("| mlp9 | 5 | 100 | 30 | no | 1 | 9 of 2 | 300.0 | 284.3 | 276 | 1.000 |") !=
                 std::string::npos,
             md);
  BOOST_TEST(md.find("| mlp9 + jelinek-mercer 3-gram (weight 0.71) | | | | | 1 | | 280.0 | 259.6 | "
                     "252 | 1.000 |") != std::string::npos,
             md);
  BOOST_TEST(md.find("- **The paper's mlp9** reaches test perplexity 284.3 against their 276: "
                     "1.000 after calibration (within 5%") != std::string::npos,
             md);
  BOOST_TEST(md.find("- **Calibration.** Our kneser-ney 5-gram's test perplexity is 1.030 times "
                     "the paper's on their copy of Brown") != std::string::npos,
             md);
}

BOOST_AUTO_TEST_CASE(a_calibrated_range_agrees_within_five_percent_only_as_a_whole) {
  using experiments::report::Agreement;
  using experiments::report::agreement;
  BOOST_TEST((agreement({0.96, 0.98}) == Agreement::within));
  BOOST_TEST((agreement({0.926, 0.944}) == Agreement::outside));
  BOOST_TEST((agreement({1.06, 1.08}) == Agreement::outside));
  BOOST_TEST((agreement({0.941, 0.959}) == Agreement::straddles));
  BOOST_TEST((agreement({0.90, 1.10}) == Agreement::straddles));
  // The range spans the n-grams' ratios: Kneser-Ney 5 and deleted interpolation 3 here.
  const experiments::report::FolderFiles ngram = {{"kneser-ney_5.json", {{"test_ppl", 330.63}}},
                                                  {"jelinek-mercer_3.json", {{"test_ppl", 350.0}}}};
  const auto c = experiments::report::calibration_of(ngram);
  BOOST_TEST(c.ratios.size() == 2u);
  BOOST_TEST(c.low == 330.63 / 321, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(c.high == 350.0 / 336, boost::test_tools::tolerance(1e-12));
}

BOOST_FIXTURE_TEST_CASE(one_table_ranks_every_model_on_the_papers_scale, ResultsFolder) {
  // Calibration ratios 330.63 / 321 = 1.030 and 350 / 336 = 1.042.
  fs::create_directories(dir / "ngram");
  for (const auto& [smoothing, order, test] :
       {std::tuple{"kneser-ney", 5, 330.63}, std::tuple{"jelinek-mercer", 3, 350.0}})
    std::ofstream(dir / "ngram" / (std::string(smoothing) + "_" + std::to_string(order) + ".json"))
        << json({{"program", "ngram"},
                 {"config", {{"smoothing", smoothing}, {"order", order}}},
                 {"valid_ppl", test + 10},
                 {"test_ppl", test}})
               .dump();
  // A 3-gram in GPT-2's tokens: ranked by its per-word figure, no paper figure beside it, and
  // not part of the calibration (which the calibrated ranges below would show) nor its table.
  std::ofstream(dir / "ngram" / "kneser-ney_3_gpt2.json")
      << json({{"program", "ngram"},
               {"config", {{"smoothing", "kneser-ney"}, {"order", 3}}},
               {"valid_ppl", 150.0},
               {"test_ppl", 140.0},
               {"test_ppl_per_word", 345.0},
               {"tokenizer", {{"name", "gpt2"}, {"tokens", 50257}, {"hash", "0"}}}})
             .dump();
  fs::create_directories(dir / "paper_nplm");
  std::ofstream(dir / "paper_nplm" / "mlp9_seed1.json")
      << run("nplm", "learned", 300, 284.28).dump();
  std::ofstream(dir / "paper_nplm" / "mixture_mlp9_seed1.json")
      << json({{"program", "ngram"},
               {"config", {{"smoothing", "jelinek-mercer"}, {"order", 3}}},
               {"mixture", {{"weight", 0.71}, {"valid_ppl", 280.0}, {"test_ppl", 259.56}}}})
             .dump();
  // The converged GPT: learned over two seeds (250 and 254), tied over one.
  const fs::path gpt = dir / "converged" / "gpt";
  fs::create_directories(gpt);
  json runs = json::array();
  for (const auto& [mode, seed, test] :
       {std::tuple{"learned", 1, 250.0}, std::tuple{"learned", 2, 254.0},
        std::tuple{"learned-tied", 1, 240.0}}) {
    json r = run("gpt", mode, test + 20, test);
    r["seed"] = seed;
    r["file"] = "gpt_" + std::string(mode) + "_seed" + std::to_string(seed) + ".json";
    std::ofstream(gpt / r["file"].get<std::string>()) << r.dump();
    runs.push_back(r);
  }
  std::ofstream(gpt / "summary.json")
      << json{{"rows", experiments::aggregate(runs, {"model", "mode"}, kMetrics)},
              {"runs", runs},
              {"base_config", {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}}}}
             .dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  // Ranked by test perplexity; calibrated = ours / r for r from 350 / 336 = 1.042 (deleted
  // interpolation) to 330.63 / 321 = 1.030 (Kneser-Ney); the paper's figure where it has one.
  const std::vector<std::string> ranked = {
      "| gpt d128, learned-tied (section 1) | words | 1 | 240.0 | 230.4 to 233.0 |  |",
      "| gpt d128, learned (section 1) | words | 2 | 252.0 ± 2.8 | 241.9 to 244.7 |  |",
      "| Bengio et al.'s mlp9 (n 5, h 100, m 30) + trigram mixture | words | 1 | 259.6 | 249.2 to "
      "252.0 | "
      "252 |",
      "| Bengio et al.'s mlp9 (n 5, h 100, m 30) | words | 1 | 284.3 | 272.9 to 276.0 | 276 |",
      "| kneser-ney 5-gram | words | - | 330.6 | 317.4 to 321.0 | 321 |",
      "| kneser-ney 3-gram | gpt2 BPE, 50,257 tokens | - | 345.0 | 331.2 to 335.0 |  |",
      "| jelinek-mercer 3-gram | words | - | 350.0 | 336.0 to 339.8 | 336 |"};
  size_t at = md.find("## All models on one scale");
  BOOST_TEST_REQUIRE(at != std::string::npos, md);
  for (const std::string& row : ranked) {
    const size_t found = md.find(row, at);
    BOOST_TEST(found != std::string::npos, row << " missing or out of order in\n" << md);
    if (found != std::string::npos) at = found;
  }
  BOOST_TEST(md.find("| kneser-ney 3-gram | 150.0 |") == std::string::npos, md);
  BOOST_TEST(md.find("word-level model's per-token figure is its per-word one, and it gets "
                     "`<unk>` for free") != std::string::npos,
             md);
  // The best over several seeds, and the single run below it named beside it.
  BOOST_TEST(
      md.find("- **Best model over several seeds:** gpt d128, learned (section 1), test "
              "perplexity 252.0 (2 seeds), 241.9 to 244.7 on the paper's scale, beside the "
              "paper's best, 252 (an MLP mixed with a trigram): a comparison across two copies "
              "of the corpus that holds only as far as the calibration does (All models on one "
              "scale); a single run scores lower: gpt d128, learned-tied (section 1), 240.0.") <
          md.find("## Calibration"),
      md);
}

// Spelling out <unk> (ngram's "unk_spelling"): the word-level rows on the speller's data pay its
// factor, a subword row stays as it is, and a word-level row of other data gets no figure.
BOOST_AUTO_TEST_CASE(the_one_scale_table_charges_word_models_for_spelling_out_unk) {
  using experiments::report::FolderFiles;
  const std::string brown = "Brown: 1000 words; vocabulary 50";
  const json kn5 = {{"program", "ngram"},
                    {"config", {{"smoothing", "kneser-ney"}, {"order", 5}}},
                    {"valid_ppl", 340.0},
                    {"test_ppl", 330.63},
                    {"data", {{"description", brown}, {"test_tokens", 1000}}},
                    {"unk_spelling",
                     {{"order", 6},
                      {"train_unk", 2500},
                      {"test", {{"unk", 40}, {"bytes", 300}, {"nll_sum", 800.0}}},
                      {"test_ppl", 330.63 * std::exp(0.8)}}}};
  const json gpt2_trigram = {{"program", "ngram"},
                             {"config", {{"smoothing", "kneser-ney"}, {"order", 3}}},
                             {"test_ppl", 140.0},
                             {"test_ppl_per_word", 700.0},
                             {"tokenizer", {{"name", "gpt2"}, {"tokens", 50257}, {"hash", "0"}}},
                             {"data", {{"description", "Brown in GPT-2's tokens"}}}};
  json mlp9 = run("nplm", "learned", 300, 284.28), mlp5 = run("nplm", "learned", 300, 290.0);
  mlp9["data"] = {{"description", brown}};
  mlp5["data"] = {{"description", "Brown, another vocabulary"}};
  const FolderFiles ngram = {{"kneser-ney_5.json", kn5}, {"kneser-ney_3_gpt2.json", gpt2_trigram}};
  const FolderFiles paper = {{"mlp9_seed1.json", mlp9}, {"mlp5_seed1.json", mlp5}};
  const auto spelling = experiments::report::unk_spelling_cost(ngram);
  BOOST_TEST(spelling.factor == std::exp(0.8), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(spelling.nats_per_unk == 20.0, boost::test_tools::tolerance(1e-12));
  const std::string md =
      experiments::report::one_scale_section(experiments::report::scale_rows(ngram, paper, {}),
                                             experiments::report::calibration_of(ngram), spelling);
  // 284.28 e^0.8 = 632.7; 330.63 e^0.8 = 735.8.
  for (const std::string row :
       {"| model | tokens | seeds | test ppl per word | calibrated | Bengio et al. | <unk> spelled "
        "out |",
        "| Bengio et al.'s mlp9 (n 5, h 100, m 30) | words | 1 | 284.3 | 276.0 | 276 | 632.7 |",
        "| Bengio et al.'s mlp5 (n 5, h 50, m 30, direct) | words | 1 | 290.0 | 281.6 | 279 |  |",
        "| kneser-ney 5-gram | words | - | 330.6 | 321.0 | 321 | 735.8 |",
        "| kneser-ney 3-gram | gpt2 BPE, 50,257 tokens | - | 700.0 | 679.6 |  | 700.0 |"})
    BOOST_TEST(md.find(row) != std::string::npos, row << " missing in\n" << md);
  BOOST_TEST(md.find("byte-level Kneser-Ney 6-gram counted on the training split's 2,500 "
                     "`<unk>` words (`ngram --unk-spelling-order 6`). The test split's 40 `<unk>` "
                     "of 1,000 words cost 20.0 nats each, which multiplies a word-level "
                     "perplexity by 2.226") != std::string::npos,
             md);
  // Without the measurement, no such column.
  const FolderFiles plain = {
      {"kneser-ney_5.json",
       json{{"config", kn5["config"]}, {"test_ppl", 330.63}, {"data", kn5["data"]}}}};
  BOOST_TEST(
      experiments::report::one_scale_section(experiments::report::scale_rows(plain, paper, {}),
                                             experiments::report::calibration_of(plain),
                                             experiments::report::unk_spelling_cost(plain))
          .find("spelled") == std::string::npos);
}

// Each subword row against the word-level row of the same model and mode, by a Welch t-test
// over the seeds on each scale, Holm-corrected across the list: lower on both scales, on the
// free-<unk> one only, the other way, or not decided (one seed); a row without a word-level
// twin, or whose twin has no spelled-out figure, is not listed.
BOOST_AUTO_TEST_CASE(the_conclusions_set_subword_rows_against_the_same_model_in_words) {
  using experiments::report::ScaleRow;
  // Runs at mean - 2, mean and mean + 2 (one run at the mean when `seeds` is 1); a word-level
  // row's <unk> spelled out multiplies each by spelled / mean.
  const auto row = [](std::string model, std::string tokens, double mean, double spelled,
                      size_t seeds = 3) {
    ScaleRow r;
    r.model = std::move(model);
    r.tokens = std::move(tokens);
    r.seeds = seeds;
    r.mean = mean;
    r.spelled = spelled;
    r.per_seed = seeds == 1 ? std::vector<double>{mean} : std::vector{mean - 2, mean, mean + 2};
    return r;
  };
  const std::string bpe = "gpt2 BPE, 50,257 tokens";
  const std::string line = experiments::report::words_against_subwords(
      {row("gpt, learned-tied", "words", 240.0, 530.0), row("gpt, learned", "words", 255.0, 566.0),
       row("gpt, frozen-random", "words", 300.0, 666.0), row("gpt, finetune", "words", 250, 555),
       row("lstm, learned", "words", 260.0, 0), row("gpt, learned-tied", bpe, 660.0, 660.0),
       row("gpt, learned", bpe, 500.0, 500.0), row("gpt, frozen-random", bpe, 280.0, 280.0),
       row("gpt, finetune", bpe, 600.0, 600.0, 1), row("lstm, learned", bpe, 700.0, 700.0),
       row("nplm, learned", bpe, 700.0, 700.0)});
  for (const std::string& expected :
       {std::string("- **Words against subword tokens** (All models on one scale)"),
        std::string("Holm-corrected across the 8 tests of this list. One setup for both"),
        std::string("say which is lower in this setup, not which tokenization is better:\n"),
        "  - gpt, learned-tied: 660.0 in " + bpe +
            " (3 seeds), against 240.0 in words (3 seeds), 530.0 with `<unk>` spelled out: words "
            "lower on both (Holm p <0.001 and <0.001)\n",
        "  - gpt, learned: 500.0 in " + bpe +
            " (3 seeds), against 255.0 in words (3 seeds), 566.0 with `<unk>` spelled out: words "
            "lower with `<unk>` for free, subword tokens lower with it spelled out (Holm p ",
        "  - gpt, frozen-random: 280.0 in " + bpe +
            " (3 seeds), against 300.0 in words (3 seeds), 666.0 with `<unk>` spelled out: "
            "subword tokens lower on both (Holm p ",
        "  - gpt, finetune: 600.0 in " + bpe +
            " (1 seed), against 250.0 in words (3 seeds), 555.0 with `<unk>` spelled out: not "
            "decided (Holm p 1.000 and 1.000)\n"})
    BOOST_TEST(line.find(expected) != std::string::npos, expected << " missing in\n" << line);
  BOOST_TEST(line.find("lstm") == std::string::npos, line);
  BOOST_TEST(line.find("nplm") == std::string::npos, line);
  BOOST_TEST(experiments::report::words_against_subwords({row("gpt", "words", 240, 530)}).empty());
}

BOOST_FIXTURE_TEST_CASE(report_adds_the_converged_runs_as_the_full_share_of_the_data_size_sweep,
                        ResultsFolder) {
  // A run's file (with its test loss in 100 blocks, log-perplexity `nll` each) and its entry in
  // the summary; `fraction` 0 for a run of section 1.
  const auto add = [&](std::vector<json>& list, const fs::path& folder, const std::string& mode,
                       double fraction, size_t seed, double nll) {
    fs::create_directories(folder);
    const std::string name =
        "gpt_" + mode + "_" + std::to_string(fraction) + "_seed" + std::to_string(seed) + ".json";
    json r = run("gpt", mode, 300, std::exp(nll));
    r["seed"] = seed;
    r["best_epoch"] = 4;
    r["file"] = "/elsewhere/" + name;
    if (fraction > 0) r["fraction"] = fraction, r["train_tokens"] = 800 * fraction;
    json file = r;
    file["data"] = {{"train_tokens", 800}};
    // A share's budget: as many tokens as 12 full epochs, patience 2 full epochs' worth.
    if (fraction > 0)
      file["config"] = {{"train_fraction", fraction},
                        {"epochs", std::lround(12 / fraction)},
                        {"patience", std::lround(2 / fraction)}};
    file["test_blocks"] = {
        {"tokens", 1000}, {"count", 100000}, {"nll_sums", std::vector<double>(100, 1000 * nll)}};
    std::ofstream(folder / name) << file.dump();
    list.push_back(r);
  };
  std::vector<json> full, sweep;
  for (size_t seed : {1, 2}) {
    add(full, dir / "converged" / "gpt", "learned", 0, seed, 5.5);
    add(full, dir / "converged" / "gpt", "finetune-pretrained", 0, seed, 5.4);
    for (double f : {0.05, 0.25}) {
      add(sweep, dir / "converged" / "data_size", "learned", f, seed, 6.5 - f);
      add(sweep, dir / "converged" / "data_size", "finetune-pretrained-full", f, seed, 6.3 - f);
    }
  }
  std::ofstream(dir / "converged" / "gpt" / "summary.json")
      << json({{"rows", experiments::aggregate(full, {"model", "mode"}, kMetrics)},
               {"runs", full},
               {"base_config", {{"model", "gpt"}, {"epochs", 12}}}})
             .dump();
  std::ofstream(dir / "converged" / "data_size" / "summary.json")
      << json({{"fractions", {0.05, 0.25}},
               {"rows", experiments::aggregate(sweep, {"model", "mode", "fraction", "train_tokens"},
                                               kMetrics)},
               {"runs", sweep}})
             .dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(md.find("## 2. How much data: where does pretraining help? (at convergence)") !=
                 std::string::npos,
             md);
  BOOST_TEST(md.find("Each share's cap on epochs and its patience, both in passes over the share: "
                     "5%: at most 240 epochs, patience 40; 25%: at most 48 epochs, patience 8.") !=
                 std::string::npos,
             md);
  // The 100% column: section 1's finetune-pretrained runs for the -full row (word2vec on the
  // full split either way), learned for learned.
  char row[160];
  std::snprintf(row, sizeof row,
                "| gpt | finetune-pretrained-full | %.1f ± 0.0 | %.1f ± 0.0 | %.1f ± 0.0 |",
                std::exp(6.25), std::exp(6.05), std::exp(5.4));
  BOOST_TEST(md.find(row) != std::string::npos, row << "\n" << md);
  std::snprintf(row, sizeof row, "| gpt | learned | %.1f ± 0.0 | %.1f ± 0.0 | %.1f ± 0.0 |",
                std::exp(6.45), std::exp(6.25), std::exp(5.5));
  BOOST_TEST(md.find(row) != std::string::npos, row << "\n" << md);
  // Each share's modes against learned at the same share; every block and seed agrees.
  std::snprintf(row, sizeof row, "| gpt 5%% | finetune-pretrained-full | %.1f | ",
                std::exp(6.25) - std::exp(6.45));
  const size_t at = md.find(row);
  BOOST_TEST(at != std::string::npos, row << "\n" << md);
  BOOST_TEST(md.substr(at, md.find('\n', at) - at).ends_with("| better |"), md);
  BOOST_TEST(md.find("| gpt 25% | learned | 4/2 (2.0 min), 4/2 (2.0 min) |") != std::string::npos,
             md);
  BOOST_TEST(md.find("  - gpt 5%, finetune-pretrained-full: ") < md.find("## 1. At convergence"),
             md);
  // In short: each share, then the whole split.
  const size_t five = md.find("  - 5% of the training split: better: finetune-pretrained-full\n");
  const size_t quarter =
      md.find("  - 25% of the training split: better: finetune-pretrained-full\n");
  const size_t whole = md.find("  - the whole training split: better: finetune-pretrained\n");
  BOOST_TEST(five < quarter, md);
  BOOST_TEST(quarter < whole, md);
  BOOST_TEST(whole < md.find("## 1. At convergence"), md);
  // A -full row's gain is that of more text: both places that name the rows say so.
  BOOST_TEST(md.find("so a -full row measures that extra text, not word2vec against a table "
                     "learned end to end") < md.find("## 1. At convergence"),
             md);
  const size_t caveat = md.find("A -full row's word2vec saw 1 / share times the text");
  BOOST_TEST(caveat != std::string::npos, md);
  BOOST_TEST(caveat > md.find("## 2. How much data"), md);
}

// The converged life cycle comes first, as section 3, with how each run ended; the short one
// follows as 3a.
BOOST_FIXTURE_TEST_CASE(report_puts_the_converged_life_cycle_before_the_short_one, ResultsFolder) {
  fs::create_directories(dir / "lifecycle");
  fs::create_directories(dir / "converged" / "lifecycle");
  std::ofstream(dir / "lifecycle" / "summary.json") << life_cycle_summary(2, 0.1).dump();
  std::ofstream(dir / "converged" / "lifecycle" / "summary.json")
      << life_cycle_summary(7, 0.05).dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t converged = md.find("## 3. The life cycle of an embedding table (at convergence)");
  const size_t short_one = md.find("## 3a. The life cycle: a short budget");
  BOOST_TEST(converged != std::string::npos, md);
  BOOST_TEST(short_one != std::string::npos, md);
  BOOST_TEST(converged < short_one);
  BOOST_TEST(md.find("- best validation after epoch 5 of 7 (then early stopping); test perplexity "
                     "280.0") != std::string::npos,
             md);
  BOOST_TEST(md.find("| 7 | 0.350 |") != std::string::npos, md);
  // Its measurements join the conclusions; the short one's do not.
  const size_t bullet = md.find(
      "- **What the tables learn** (section 3, one seed), WordSim-353 Spearman of their rows:\n"
      "  - gpt learned: input table 0.200, output rows 0.300; a step gives 5.0% of the input "
      "rows a non-zero gradient");
  BOOST_TEST(bullet != std::string::npos, md);
  BOOST_TEST(bullet < converged, md);
  const size_t first = md.find("What the tables learn");
  BOOST_TEST(md.find("What the tables learn", first + 1) == std::string::npos, md);
}

// A run's table census (LifecycleProbe::census) of 100 rows, 61 of them in training: the
// never-seen rows' median input norm `unseen_norm`, the rest 0.09; the under-trained search's
// ROC AUC `auc`, 28 of the 39 never-seen rows among 30 flagged, and Ġzebra.
json table_census(size_t with_gradient, size_t unchanged, double drift, double unseen_norm,
                  double auc) {
  const json unseen = {{"q1", unseen_norm - 0.01},
                       {"median", unseen_norm},
                       {"q3", unseen_norm + 0.01}},
             seen = {{"q1", 0.08}, {"median", 0.09}, {"q3", 0.1}};
  return {{"rows", 100},
          {"rows_with_gradient", with_gradient},
          {"rows_in_training", 61},
          {"unseen_rows", 39},
          {"unseen_rows_unchanged", unchanged},
          {"unseen_rows_drift", drift},
          {"norms_by_count",
           {{{"min_count", 0},
             {"max_count", 0},
             {"rows", 39},
             {"input_norm", unseen},
             {"output_norm", unseen}},
            {{"min_count", 4},
             {"max_count", 15},
             {"rows", 61},
             {"input_norm", seen},
             {"output_norm", seen}}}},
          {"under_trained",
           {{"reference", 3},
            {"threshold", 0.2},
            {"flagged", 30},
            {"flagged_unseen", 28},
            {"precision", 28.0 / 30},
            {"recall", 28.0 / 39},
            {"auc_output_cosine", auc},
            {"auc_low_input_norm", 0.6},
            {"flagged_seen", {{{"token", "Ġzebra"}, {"count", 4}, {"score", 0.3}}}}}}};
}

// A run with the table's census: its counts, the norms by training count (a table, and a plot
// where gnuplot is installed) and the under-trained token search.
BOOST_FIXTURE_TEST_CASE(report_shows_the_census_of_a_table, ResultsFolder) {
  json summary = life_cycle_summary(2, 0.1);
  summary["runs"][0]["table"] = table_census(60, 39, 0.0, 0.09, 0.91);
  fs::create_directories(dir / "lifecycle");
  std::ofstream(dir / "lifecycle" / "summary.json") << summary.dump();
  const bool plots = experiments::report::have_gnuplot();
  const std::string md = experiments::report::render_report(dir.string(), plots);
  BOOST_TEST(md.find("Rows: 100; in the training split 61; given a gradient at some step 60. Of "
                     "the 39 rows the training split never has, 39 are bitwise as initialised") !=
                 std::string::npos,
             md);
  BOOST_TEST(
      md.find("| 4-15 | 61 | 0.090 [0.080, 0.100] | 0.090 [0.080, 0.100] |") != std::string::npos,
      md);
  BOOST_TEST(md.find("mean of the 3 unreachable tokens' rows") != std::string::npos, md);
  BOOST_TEST(md.find("ROC AUC 0.910 (a low input-row norm: 0.600)") != std::string::npos, md);
  BOOST_TEST(md.find("flags 30 tokens, 28 of them unseen (recall 71.8%); the top flagged tokens "
                     "that do occur (training count): Ġzebra (4).") != std::string::npos,
             md);
  if (plots)
    BOOST_TEST(fs::exists(dir / "lifecycle" / "norms.png"), md);
  else
    BOOST_TEST_MESSAGE("gnuplot absent: the norms plot is not drawn");
  // One run alone gets no side-by-side table.
  BOOST_TEST(md.find("The tables' rows in each run") == std::string::npos, md);

  // The census is read as the probe wrote it (experiments::TableCensus, one field table each
  // way): the numbers back, and a value of the wrong kind refused, naming the file and field.
  const json written = table_census(60, 39, 0.0, 0.09, 0.91);
  const experiments::TableCensus census = experiments::TableCensus::from_json(written, "x: ");
  BOOST_TEST(census.rows_with_gradient.value() == 60u);
  BOOST_TEST(census.unseen_input_norm().value() == 0.09);
  BOOST_TEST(census.under_trained->auc_output_cosine == 0.91);
  BOOST_TEST(census.under_trained->flagged_seen.at(0).token == "Ġzebra");
  BOOST_TEST(census.to_json() == written);
  json unknown = written;
  unknown["rows_with_gradient"] = nullptr;
  unknown["under_trained"] = nullptr;
  BOOST_TEST(!experiments::TableCensus::from_json(unknown, "x: ").rows_with_gradient);
  BOOST_TEST(experiments::TableCensus::from_json(unknown, "x: ").to_json() == unknown);
  json damaged = summary;
  damaged["runs"][0]["table"]["norms_by_count"][1]["input_norm"]["median"] = "big";
  std::ofstream(dir / "lifecycle" / "summary.json") << damaged.dump();
  BOOST_CHECK_EXCEPTION(experiments::report::render_report(dir.string(), false), std::runtime_error,
                        [](const std::runtime_error& e) {
                          return std::string(e.what()).find(
                                     "lifecycle/summary.json: \"runs[0].table\": field "
                                     "'norms_by_count': [1]: field 'input_norm': field 'median' "
                                     "is \"big\", not a number") != std::string::npos;
                        });

  // A tokenizer whose every token occurs in training: no unseen row, so no detector to score
  // (the probe writes its ROC AUCs as null); the report says so instead of failing.
  json& all_seen = summary["runs"][0]["table"];
  all_seen["unseen_rows"] = all_seen["unseen_rows_unchanged"] = 0;
  all_seen["under_trained"]["auc_output_cosine"] = nullptr;
  all_seen["under_trained"]["auc_low_input_norm"] = nullptr;
  std::ofstream(dir / "lifecycle" / "summary.json") << summary.dump();
  const std::string seen = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(seen.find("ROC AUC undefined (the training split has every token) (a low input-row "
                       "norm: -)") != std::string::npos,
             seen);
}

// Two runs with their census: side by side, untied and tied (whose softmax reaches every row).
BOOST_FIXTURE_TEST_CASE(report_sets_two_censuses_side_by_side, ResultsFolder) {
  json summary = life_cycle_summary(2, 0.1);
  summary["runs"][0]["table"] = table_census(61, 39, 0.0, 0.225, 0.786);
  json tied = summary["runs"][0];
  tied["name"] = "gpt learned-tied", tied["tied"] = true, tied["test_ppl"] = 270.5;
  tied["table"] = table_census(100, 0, 0.412, 0.08, 0.93);
  tied["table"]["under_trained"]["auc_low_input_norm"] = 0.02;
  summary["runs"].push_back(tied);
  // In GPT-2's tokens (section 3d), whose census the conclusions sum up too.
  fs::create_directories(dir / "converged" / "lifecycle_gpt2");
  std::ofstream(dir / "converged" / "lifecycle_gpt2" / "summary.json") << summary.dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t table = md.find("The tables' rows in each run");
  BOOST_TEST_REQUIRE(table != std::string::npos, md);
  // The tied table's never-seen rows have the largest norms: a low norm ranks them last.
  BOOST_TEST(md.find("ROC AUC 0.930 (a low input-row norm: 0.020, the other way round: a high "
                     "norm finds them with 0.980)") != std::string::npos,
             md);
  for (const char* row : {"| | gpt learned | gpt learned-tied |\n",
                          "| rows given a gradient at some step | 61 | 100 |\n",
                          "| rows the training split never has | 39 | 39 |\n",
                          "| of those, bitwise as initialised | 39 | 0 |\n",
                          "| their mean cosine drift from initialisation | 0.000 | 0.412 |\n",
                          "| their median input-row norm | 0.225 | 0.080 |\n",
                          "| under-trained search: ROC AUC for them | 0.786 | 0.930 |\n",
                          "| test perplexity | 280.0 | 270.5 |\n"})
    BOOST_TEST(md.find(row, table) != std::string::npos, row << "\n" << md);
  const size_t conclusion = md.find("- **GPT-2's 50,257-row table** (section 3d, one seed)");
  BOOST_TEST_REQUIRE(conclusion != std::string::npos, md);
  BOOST_TEST(conclusion < md.find("## 3d."), md);
  BOOST_TEST(md.find("  - gpt learned: 61 of 100 rows given a gradient; of the 39 never in "
                     "training, all bitwise as initialised (mean drift 0.000, median input-row "
                     "norm 0.225); the under-trained search finds them with ROC AUC 0.786\n",
                     conclusion) != std::string::npos,
             md);
  BOOST_TEST(md.find("  - gpt learned-tied: 100 of 100 rows given a gradient; of the 39 never in "
                     "training, 0 bitwise as initialised (mean drift 0.412",
                     conclusion) != std::string::npos,
             md);
}

// Alone, the short life cycle is still labelled short, with its budget, and says that the
// converged one is missing.
BOOST_FIXTURE_TEST_CASE(report_labels_a_lone_short_life_cycle, ResultsFolder) {
  fs::create_directories(dir / "lifecycle");
  std::ofstream(dir / "lifecycle" / "summary.json")
      << life_cycle_summary(2, 0.1, {{"model", "gpt"}, {"seed", 1}, {"epochs", 2}, {"patience", 0}})
             .dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(md.find("## 3. The life cycle of an embedding table: a short budget\n\nNot yet run "
                     "at convergence") != std::string::npos,
             md);
  BOOST_TEST(md.find("up to 2 epochs, patience 0.") != std::string::npos, md);
  BOOST_TEST(md.find("What the tables learn") == std::string::npos, md);
}

BOOST_FIXTURE_TEST_CASE(report_refuses_an_empty_folder_and_corrupt_json, ResultsFolder) {
  fs::create_directories(dir / "embeddings");
  BOOST_CHECK_THROW(experiments::report::render_report(dir.string(), false), std::runtime_error);
  // Infinity is no JSON literal: the error says where, without nlohmann's tag.
  std::ofstream(dir / "embeddings" / "summary.json") << "{\"test_ppl\": Infinity}";
  try {
    experiments::report::render_report(dir.string(), false);
    BOOST_FAIL("accepted corrupt JSON");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    BOOST_TEST(
        what.find("summary.json: not valid JSON: parse error at line 1") != std::string::npos,
        what);
    BOOST_TEST(what.find("json.exception") == std::string::npos, what);
  }
}

BOOST_FIXTURE_TEST_CASE(a_study_without_a_finished_run_gets_no_section, ResultsFolder) {
  // converged/nplm as a study leaves it before its first run ends: a summary with no runs.
  for (const char* model : {"gpt", "nplm"}) fs::create_directories(dir / "converged" / model);
  json gpt = run("gpt", "learned", 300, 280);
  gpt["file"] = "gpt_learned_seed1.json";
  std::ofstream(dir / "converged" / "gpt" / "gpt_learned_seed1.json") << gpt.dump();
  const auto summary = [](const json& runs) {
    return json{{"rows", experiments::aggregate(runs, {"model", "mode"}, kMetrics)},
                {"runs", runs},
                {"base_config", {{"model", "gpt"}, {"epochs", 12}}}};
  };
  std::ofstream(dir / "converged" / "gpt" / "summary.json") << summary(json::array({gpt})).dump();
  std::ofstream(dir / "converged" / "nplm" / "summary.json") << summary(json::array()).dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(md.find("| gpt | learned |") != std::string::npos, md);
  BOOST_TEST(md.find("nplm") == std::string::npos, md);
}

// Puts a folder first on PATH for its lifetime, so that a failing check or an exception cannot
// leave the rest of the test process with the changed PATH.
class PathFirst {
 public:
  explicit PathFirst(const fs::path& folder)
      : saved_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    ::setenv("PATH", (folder.string() + ":" + saved_).c_str(), 1);
  }
  ~PathFirst() { ::setenv("PATH", saved_.c_str(), 1); }
  PathFirst(const PathFirst&) = delete;
  PathFirst& operator=(const PathFirst&) = delete;

 private:
  std::string saved_;
};

BOOST_FIXTURE_TEST_CASE(a_plot_that_gnuplot_fails_to_draw_leaves_no_file, ResultsFolder) {
  // A gnuplot that starts the picture and then fails, found first on PATH.
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "gnuplot") << "#!/bin/sh\n"
                                    "[ \"$1\" = --version ] && exit 0\n"
                                    "for f in *.gp; do : > \"${f%.gp}.png.tmp\"; done\n"
                                    "exit 1\n";
  fs::permissions(bin / "gnuplot", fs::perms::owner_all);
  fs::create_directories(dir / "lifecycle");
  std::ofstream(dir / "lifecycle" / "summary.json") << life_cycle_summary(2, 0.1).dump();
  const std::string md = [&] {
    const PathFirst fake_gnuplot(bin);
    return experiments::report::render_report(dir.string(), true);
  }();
  BOOST_TEST(md.find("## 3. The life cycle") != std::string::npos, md);
  BOOST_TEST(md.find("![") == std::string::npos, md);
  for (const auto& entry : fs::directory_iterator(dir / "lifecycle"))
    BOOST_TEST(entry.path().filename() == "summary.json", entry.path());
}

BOOST_FIXTURE_TEST_CASE(report_adds_up_the_compute_of_the_finished_runs, ResultsFolder) {
  fs::create_directories(dir / "paper_nplm");
  fs::create_directories(dir / "converged" / "gpt");
  fs::create_directories(dir / "ngram");
  const auto write = [&](const fs::path& file, const json& value) {
    std::ofstream(dir / file) << value.dump();
  };
  write("ngram/kneser-ney_5.json", {{"program", "ngram"},
                                    {"config", {{"smoothing", "kneser-ney"}, {"order", 5}}},
                                    {"valid_ppl", 350.0},
                                    {"test_ppl", 330.0}});
  write("paper_nplm/mlp9_seed1.json", {{"train_seconds", 7200.0},
                                       {"valid_ppl", 300.0},
                                       {"test_ppl", 280.0},
                                       {"epochs", json::array()}});
  write("paper_nplm/mixture_mlp9_seed1.json", {{"test_ppl", 260.0}});  // no training of its own
  write("converged/gpt/gpt_learned_seed1.json", {{"train_seconds", 5400.0}, {"test_ppl", 250.0}});
  write("converged/gpt/gpt_learned_seed2.json",  // still in progress
        {{"train_seconds", 900.0}, {"test_ppl", 300.0}, {"interrupted", "SIGTERM"}});
  write("converged/gpt/word2vec_d128.bin.json", {{"seconds", 30.0}});
  // A folder of seeds trained apart (the report has no section of its own for it) counts too.
  fs::create_directories(dir / "converged" / "nplm_seeds4-5");
  write("converged/nplm_seeds4-5/nplm_learned_seed4.json",
        {{"train_seconds", 1800.0}, {"cpu_s", 1500.0}, {"test_ppl", 260.0}});
  const std::string md = experiments::report::render_report(dir.string(), false);
  // CPU time where a run records it (cpu_s); the total says how many of its runs do.
  BOOST_TEST(md.find("| `paper_nplm/` | 1 | 2.0 h | - | 0 s |") != std::string::npos, md);
  BOOST_TEST(md.find("| `converged/gpt/` | 1 | 90.0 min | - | 30 s |") != std::string::npos, md);
  BOOST_TEST(md.find("| `converged/nplm_seeds4-5/` | 1 | 30.0 min | 25.0 min | 0 s |") !=
                 std::string::npos,
             md);
  BOOST_TEST(md.find("| total | 3 | 4.0 h | 25.0 min (1 of 3 runs) | 30 s |") != std::string::npos,
             md);
  BOOST_TEST(md.find("- **Compute.** 3 runs, 4.0 h of training") < md.find("## Calibration"), md);
}

BOOST_FIXTURE_TEST_CASE(a_run_file_without_its_curve_is_an_error_not_a_crash, ResultsFolder) {
  fs::create_directories(dir / "converged" / "gpt");
  json learned = run("gpt", "learned", 300, 280);
  learned["file"] = "gpt_learned_seed1.json";
  learned.erase("epochs");
  std::ofstream(dir / "converged" / "gpt" / "gpt_learned_seed1.json")
      << json{{"valid_ppl", 300.0}, {"test_ppl", 280.0}}.dump();
  const json summary = {{"rows", experiments::aggregate({learned}, {"model", "mode"}, kMetrics)},
                        {"runs", json::array({learned})},
                        {"base_config", {{"model", "gpt"}, {"epochs", 12}}}};
  std::ofstream(dir / "converged" / "gpt" / "summary.json") << summary.dump();
  if (!fs::exists("/usr/bin/gnuplot")) return;  // the curve is read for its plot
  try {
    experiments::report::render_report(dir.string(), true);
    BOOST_FAIL("rendered a run without its validation curve");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(std::string(e.what()).find("lacks what the report needs") != std::string::npos,
               e.what());
    BOOST_TEST(std::string(e.what()).find("'epochs'") != std::string::npos, e.what());
  }
}

// Tying under one decay policy: section 1's learned-tied runs against the untied GPT of
// converged/gpt_table_decay_none, seed by seed, in its own section and in the conclusions.
BOOST_FIXTURE_TEST_CASE(report_compares_tying_under_one_decay_policy, ResultsFolder) {
  const auto write = [&](const std::string& folder, const std::string& mode, double shift) {
    const fs::path runs = dir / "converged" / folder;
    fs::create_directories(runs);
    std::vector<json> list;
    for (size_t seed : {1, 2}) {
      std::vector<double> sums;
      for (size_t k = 0; k < 100; ++k)
        sums.push_back(1000.0 * (5.6 + 0.1 * std::cos(static_cast<double>(k)) + shift +
                                 0.001 * static_cast<double>(seed)));
      double total = 0;
      for (double v : sums) total += v;
      json r = run("gpt", mode, 300, std::exp(total / 100000.0));
      r["seed"] = seed;
      const std::string name = "gpt_" + mode + "_seed" + std::to_string(seed) + ".json";
      r["file"] = (runs / name).string();
      json file = r;
      file["test_blocks"] = {{"tokens", 1000}, {"count", 100000}, {"nll_sums", sums}};
      std::ofstream(runs / name) << file.dump();
      list.push_back(r);
    }
    json summary = {{"rows", experiments::aggregate(list, {"model", "mode"}, kMetrics)},
                    {"runs", list},
                    {"base_config", {{"model", "gpt"}, {"epochs", 12}}}};
    std::ofstream(runs / "summary.json") << summary.dump();
  };
  write("gpt", "learned-tied", -0.06);
  write("gpt_table_decay_none", "learned", 0.0);
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t section = md.find("## 1c. Tying with one decay policy");
  BOOST_TEST(section != std::string::npos, md);
  const size_t row = md.find("| gpt d128 | learned-tied | -", section);
  BOOST_TEST(row != std::string::npos, md);
  BOOST_TEST(md.find("- **Tying with one decay policy** (section 1c)") < section, md);
  BOOST_TEST(md.find("  - gpt d128, learned-tied: -",
                     md.find("- **Tying with one decay policy**")) < section,
             md);
  // One width: no second width named, nothing said about widths.
  BOOST_TEST(md.find("gpt_d256") == std::string::npos, md);
  BOOST_TEST(md.find("change with the width") == std::string::npos, md);
}

// bf16 against fp32 (section 1d): seed by seed, within 1% only when the whole 90% interval of
// the changes is; a 5% cost is outside; too few or too noisy seeds decide nothing.
BOOST_FIXTURE_TEST_CASE(report_tests_bf16_against_fp32_seed_by_seed, ResultsFolder) {
  // test ppl per (folder, mode) and seed
  const auto write = [&](const std::string& folder, const std::string& mode,
                         const std::vector<double>& ppl) {
    const fs::path runs = dir / "converged" / folder;
    fs::create_directories(runs);
    json list = json::array();
    if (fs::exists(runs / "summary.json"))
      list = json::parse(std::ifstream(runs / "summary.json"))["runs"];
    for (size_t i = 0; i < ppl.size(); ++i) {
      json r = run("gpt", mode, 300, ppl[i]);
      r["seed"] = i + 1;
      const std::string name = "gpt_" + mode + "_seed" + std::to_string(i + 1) + ".json";
      r["file"] = name;
      json file = r;
      file["test_blocks"] = {
          {"tokens", 1000}, {"count", 1000}, {"nll_sums", {1000 * std::log(ppl[i])}}};
      std::ofstream(runs / name) << file.dump();
      list.push_back(r);
    }
    std::vector<json> all(list.begin(), list.end());
    const json summary = {{"rows", experiments::aggregate(all, {"model", "mode"}, kMetrics)},
                          {"runs", list},
                          {"base_config", {{"model", "gpt"}, {"epochs", 12}}}};
    std::ofstream(runs / "summary.json") << summary.dump();
  };
  write("gpt", "learned", {250.0, 255.0, 252.0});
  write("gpt", "learned-tied", {238.0, 240.0, 236.0});
  write("gpt_bf16", "learned", {250.5, 255.4, 252.6});       // +0.20%, +0.16%, +0.24%
  write("gpt_bf16", "learned-tied", {250.0, 251.5, 247.5});  // about +5%
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t section = md.find("## 1d. bf16 products against fp32");
  BOOST_REQUIRE_MESSAGE(section != std::string::npos, md);
  BOOST_TEST(md.find("| learned | 3 | 252.3 | 252.8 | +0.20% (", section) != std::string::npos, md);
  BOOST_TEST(md.find(") | within 1% |", section) != std::string::npos, md);
  BOOST_TEST(md.find(") | outside 1% |", section) != std::string::npos, md);
  const size_t conclusion = md.find("- **bf16 products** (section 1d)");
  BOOST_TEST(conclusion < section, md);
  BOOST_TEST(md.find("  - learned: +0.20% (90% interval", conclusion) < section, md);
}

// Section 3b renders each optimizer's run of lifecycle_optimizers/ from its file: gradient rows
// beside changed rows, the optimizer's setting from its configuration, and a conclusion line.
BOOST_FIXTURE_TEST_CASE(report_shows_the_rows_each_optimizer_changes, ResultsFolder) {
  const auto write = [&](const std::string& name, const json& config, double changed) {
    fs::create_directories(dir / "lifecycle_optimizers" / name);
    json r = run("gpt", "learned", 400, 380);
    r["config"] = config;
    r["commit"] = "0123456789ab";
    r["lifecycle"] = {{"rows_per_step_mean", 0.05},
                      {"rows_changed_per_step_mean", changed},
                      {"rows_changed_last_step", changed}};
    std::ofstream(dir / "lifecycle_optimizers" / name / "gpt_learned.json") << r.dump();
  };
  write("adamw", {{"optimizer", "adamw"}, {"lr", 0.001}, {"weight_decay", 0.1}}, 0.8);
  write("lazy-adam", {{"optimizer", "lazy-adam"}, {"lr", 0.001}, {"weight_decay", 0.1}}, 0.05);
  write("sgd", {{"optimizer", "sgd"}, {"lr", 0.1}, {"weight_decay", 0.0}}, 0.05);
  const std::string md = experiments::report::render_report(dir.string(), false);
  const size_t section = md.find("## 3b. Which rows of the table a step changes, by optimizer");
  BOOST_REQUIRE_MESSAGE(section != std::string::npos, md);
  BOOST_TEST(md.find("| adamw | adamw lr 0.001, decay 0.1 (not on the token table) | 5.00% | "
                     "80.00% | 80.00% | 380.0 | 0123456789ab |",
                     section) != std::string::npos,
             md);
  BOOST_TEST(
      md.find("| sgd | sgd lr 0.1, no decay | 5.00% | 5.00% |", section) != std::string::npos, md);
  BOOST_TEST(md.find("- **Which rows a step changes** (section 3b") < section, md);
  BOOST_TEST(md.find("adamw 5.0% and 80.0%; lazy-adam 5.0% and 5.0%; sgd 5.0% and 5.0%.") < section,
             md);
}

// Holm's correction decides over the whole family: a p of 0.01 is a decision alone, not among
// eighteen; one seed is never tested; the sign of the mean difference names the verdict.
BOOST_AUTO_TEST_CASE(verdicts_come_from_the_corrected_test_over_seeds) {
  const auto comparison = [](double mean, double p, size_t seeds) {
    experiments::report::Comparison c;
    c.seeds = seeds;
    c.per_seed.mean = mean;
    c.test.p = p;
    return c;
  };
  std::vector<experiments::report::Comparison> alone{comparison(-3.0, 0.01, 3)};
  experiments::report::decide({&alone[0]});
  BOOST_TEST((alone[0].verdict == experiments::report::Verdict::better));
  std::vector<experiments::report::Comparison> many(18, comparison(4.0, 0.01, 3));
  many[0] = comparison(4.0, 0.001, 3);  // 18 x 0.001 = 0.018: still decided
  many[1] = comparison(-40.0, 0.5, 1);  // one seed: not tested, not counted
  std::vector<experiments::report::Comparison*> family;
  for (auto& c : many) family.push_back(&c);
  experiments::report::decide(family);
  BOOST_TEST((many[0].verdict == experiments::report::Verdict::worse));
  BOOST_TEST(many[0].holm_p == 17 * 0.001, boost::test_tools::tolerance(1e-12));
  BOOST_TEST((many[1].verdict == experiments::report::Verdict::one_seed));
  for (size_t i = 2; i < many.size(); ++i)
    BOOST_TEST((many[i].verdict == experiments::report::Verdict::not_decided),
               i << ": " << many[i].holm_p);
  // A study that declared 6 comparisons and has run 1: Holm's p is over the 6, not the 1.
  std::vector<experiments::report::Comparison> declared{comparison(-3.0, 0.01, 3)};
  experiments::report::decide({&declared[0]}, 6);
  BOOST_TEST(declared[0].holm_p == 0.06, boost::test_tools::tolerance(1e-12));
  BOOST_TEST((declared[0].verdict == experiments::report::Verdict::not_decided));
}

// A results folder is untrusted input (docs/errors.md): the committed results with every string
// of every file carrying gnuplot, shell and Markdown metacharacters render, run nothing, and
// show the text escaped; a model or mode that is not a plain name is refused, naming its file.
namespace {

// Copies the JSON files of `from` into `to`, each string `s` that `mutate` accepts (by its key)
// becoming s + payload.
void copy_with_payload(const fs::path& from, const fs::path& to, const std::string& payload,
                       const std::function<bool(const std::string&)>& mutate) {
  const std::function<void(json&, const std::string&)> walk = [&](json& v, const std::string& key) {
    if (v.is_string() && mutate(key)) v = v.get<std::string>() + payload;
    if (v.is_array())
      for (json& item : v) walk(item, key);
    if (v.is_object())
      for (auto& [k, item] : v.items()) walk(item, k);
  };
  for (const auto& entry : fs::recursive_directory_iterator(from)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    const fs::path target = to / fs::relative(entry.path(), from);
    fs::create_directories(target.parent_path());
    json file = json::parse(std::ifstream(entry.path()));
    walk(file, "");
    std::ofstream(target) << file.dump();
  }
}

// The text outside Markdown code spans (a run of n backticks up to the next run of n).
std::string outside_code_spans(const std::string& md) {
  std::string out;
  for (size_t i = 0; i < md.size();) {
    if (md[i] != '`') {
      out += md[i++];
      continue;
    }
    const size_t run = md.find_first_not_of('`', i) == std::string::npos
                           ? md.size() - i
                           : md.find_first_not_of('`', i) - i;
    const std::string fence(run, '`');
    size_t close = md.find(fence, i + run);
    while (close != std::string::npos && close + run < md.size() && md[close + run] == '`')
      close = md.find(fence, md.find_first_not_of('`', close));
    i = close == std::string::npos ? md.size() : close + run;
  }
  return out;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_results_folder_is_untrusted_input, ResultsFolder) {
  const fs::path committed = fs::path(TAPEGRAD_SOURCE_DIR) / "results";
  const fs::path ran_quote = dir / "ran_quote", ran_backquote = dir / "ran_backquote";
  const std::string payload = "x' ; system 'touch " + ran_quote.string() + "' ; x='`touch " +
                              ran_backquote.string() + "`@x|<b>*_[l](u)\n| fake | row |\x1b[2J";
  // Typed settings are refused by name (a test of their own); names (model, mode, a study's
  // reference arm) too, model's below.
  const std::set<std::string> typed = {
      "smoothing", "embedding", "optimizer", "positions", "schedule", "table_decay", "vocab_counts",
      "precision", "model",     "mode",      "reference", "folders",  "effects",     "shares",
      "whole",     "words",     "arms",      "bpe8k",     "gpt2"};
  const fs::path text = dir / "text";
  copy_with_payload(committed, text, payload,
                    [&](const std::string& key) { return !typed.contains(key); });
  const bool plots = experiments::report::have_gnuplot();
  const std::string md = experiments::report::render_report(text.string(), plots);
  BOOST_TEST(!fs::exists(ran_quote));
  BOOST_TEST(!fs::exists(ran_backquote));
  // Still a report: its sections and their numbers (converged/gpt/'s learned-tied row).
  BOOST_TEST(md.find("## 1. ") != std::string::npos);
  BOOST_TEST(md.find("| gpt | learned-tied |") != std::string::npos);
  // Each section number once: the conclusions and docs cite sections by number ("## 3c. ...").
  std::istringstream lines(md);
  std::set<std::string> numbers;
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("## ") && std::isdigit(static_cast<unsigned char>(line[3])))
      BOOST_TEST(numbers.insert(line.substr(3, line.find(' ', 3) - 3)).second, line);
  BOOST_TEST(numbers.contains("3c."));
  // The payload shows as text: no tag, link, table row or escape sequence of its own.
  const std::string prose = outside_code_spans(md);
  BOOST_TEST(prose.find("<b>") == std::string::npos);
  BOOST_TEST(prose.find("[l](u)") == std::string::npos);
  BOOST_TEST(md.find("\n| fake | row |") == std::string::npos);
  BOOST_TEST(md.find('\x1b') == std::string::npos);
  BOOST_TEST(prose.find("\\<b\\>\\*\\_\\[l\\](u)") != std::string::npos);

  // A name the tables and plots are keyed by is refused, naming its file and field.
  const fs::path named = dir / "named";
  copy_with_payload(committed, named, payload,
                    [](const std::string& key) { return key == "model"; });
  try {
    experiments::report::render_report(named.string(), plots);
    BOOST_FAIL("a model named with metacharacters was rendered");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    BOOST_TEST_MESSAGE(what);
    BOOST_TEST(what.find(".json: \"model\" is \"") != std::string::npos);
    BOOST_TEST(what.find("not a name") != std::string::npos);
    BOOST_TEST(what.find('\n') == std::string::npos);
  }
  BOOST_TEST(!fs::exists(ran_quote));
  BOOST_TEST(!fs::exists(ran_backquote));
}

// report --csv: every run of every study folder, whatever its name, one row each; text quoted,
// and a cell a spreadsheet would evaluate defused.
BOOST_FIXTURE_TEST_CASE(a_table_of_every_run_in_any_study_folder, ResultsFolder) {
  write_block_study(dir / "my_study", {{"model", "gpt"}, {"d_model", 64}, {"layers", 3}},
                    {{"learned", 0.0}, {"learned-tied", -0.02}});
  write_block_study(dir / "nested" / "other", {{"model", "nplm"}}, {{"learned", 0.0}});
  // A run file naming a hostile commit.
  const fs::path hostile = dir / "my_study" / "gpt_learned-tied_seed2.json";
  json run = json::parse(std::ifstream(hostile));
  run["provenance"] = {{"commit", "=HYPERLINK(\"x\")"}, {"dirty", true}};
  std::ofstream(hostile) << run.dump();
  const std::string csv = experiments::report::runs_csv(dir.string());
  std::istringstream lines(csv);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  BOOST_REQUIRE_EQUAL(rows.size(), 1u + 6 + 3);
  BOOST_TEST(rows[0].starts_with("study,model,mode,d_model,layers,train_fraction,optimizer,lr,"));
  BOOST_TEST(std::count(rows[0].begin(), rows[0].end(), ',') == 17);
  for (const std::string& row : rows)
    BOOST_TEST(std::count(row.begin(), row.end(), ',') == 17, row);
  BOOST_TEST(
      csv.find("\n\"my_study\",\"gpt\",\"learned-tied\",64,3,1,\"adamw\",0.001,\"fp32\",2,") !=
          std::string::npos,
      csv);
  BOOST_TEST(csv.find("\n\"nested/other\",\"nplm\",\"learned\",") != std::string::npos, csv);
  BOOST_TEST(csv.find(",\"'=HYPERLINK(\"\"x\"\")-dirty\"\n") != std::string::npos, csv);
}

// A study file of exp_embeddings declaring one comparison: gpt's learned-tied against learned.
json declares_tying() {
  return {{"schema", 1},
          {"program", "embeddings"},
          {"reference", "learned"},
          {"family",
           {{{"group", {{"model", "gpt"}}}, {"mode", "learned-tied"}, {"against", "learned"}}}}};
}

// A folder of any name with a study.json renders: only the comparisons it declared are tested,
// Holm's correction runs over them alone, and a study file that cannot be read is refused.
BOOST_FIXTURE_TEST_CASE(a_study_that_describes_itself_renders_under_any_name, ResultsFolder) {
  const fs::path folder = dir / "sweeps" / "my study";
  write_block_study(folder, {{"model", "gpt"}, {"weight_decay", 0.1}, {"table_decay", "none"}},
                    {{"learned", 0.0}, {"learned-tied", -0.03}, {"frozen-random", 0.05}}, 0.2);
  const json declared = declares_tying();
  std::ofstream(folder / "study.json") << declared.dump();
  const std::string md = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(md.find("`sweeps/my study/`: gpt") != std::string::npos, md);
  BOOST_TEST(md.find("weight decay 0.1 (not on the vocabulary matrices)") != std::string::npos, md);
  BOOST_TEST(md.find("Holm over this study's family (the 1 comparison its") != std::string::npos,
             md);
  // The undeclared row has its numbers in the table of rows but no test.
  BOOST_TEST(md.find("| gpt | frozen-random | 1.50M | 300.0") != std::string::npos, md);
  BOOST_TEST(md.find("  - gpt, frozen-random:") == std::string::npos, md);
  const size_t verdict = md.find("  - gpt, learned-tied: ");
  BOOST_REQUIRE(verdict != std::string::npos);
  // One comparison: Holm's p is the t-test's own.
  const std::string line = md.substr(verdict, md.find('\n', verdict) - verdict);
  const size_t p = line.find(", p "), holm = line.find(", Holm ");
  BOOST_TEST(line.substr(p + 4, line.find(',', p + 4) - p - 4) ==
                 line.substr(holm + 7, line.find(')', holm) - holm - 7),
             line);

  // A declared comparison without runs yet still counts in the correction (the numbers:
  // verdicts_come_from_the_corrected_test_over_seeds).
  json two = declared;
  two["family"].push_back(
      {{"group", {{"model", "gpt"}}}, {"mode", "finetune-pretrained"}, {"against", "learned"}});
  std::ofstream(folder / "study.json") << two.dump();
  const std::string md2 = experiments::report::render_report(dir.string(), false);
  BOOST_TEST(md2.find("(the 2 comparisons its study.json declared before its runs, 1 of them with "
                      "runs so far)") != std::string::npos,
             md2);

  std::ofstream(folder / "study.json") << json{{"schema", 1}, {"reference", "x' y"}}.dump();
  BOOST_CHECK_EXCEPTION(experiments::report::render_report(dir.string(), false), std::runtime_error,
                        [](const std::runtime_error& e) {
                          return std::string(e.what()).find("study.json: \"reference\" is") !=
                                 std::string::npos;
                        });
}

// A study folder reached through a link is not rendered (its plots would be drawn at the link's
// target, outside --results) and its runs are not in the table of runs.
BOOST_FIXTURE_TEST_CASE(a_linked_study_folder_is_passed_over, ResultsFolder) {
  const json declared = declares_tying();
  const fs::path mine = dir / "results" / "mine", outside = dir / "outside";
  for (const fs::path& folder : {mine, outside}) {
    write_block_study(folder, {{"model", "gpt"}}, {{"learned", 0.0}, {"learned-tied", -0.03}});
    std::ofstream(folder / "study.json") << declared.dump();
  }
  fs::create_directory_symlink(outside, dir / "results" / "linked");
  const bool plots = experiments::report::have_gnuplot();
  const std::string md = experiments::report::render_report((dir / "results").string(), plots);
  BOOST_TEST(md.find("`mine/`: gpt") != std::string::npos, md);
  BOOST_TEST(md.find("linked") == std::string::npos, md);
  BOOST_TEST(!fs::exists(outside / "valid_curves.png"));
  if (plots) BOOST_TEST(fs::exists(mine / "valid_curves.png"));
  const std::string csv = experiments::report::runs_csv((dir / "results").string());
  BOOST_TEST(csv.find("\"mine\",") != std::string::npos, csv);
  BOOST_TEST(csv.find("linked") == std::string::npos, csv);
}

// A folder the report renders by name may be a link too: its plots would land at the link's
// target, so the report stops, naming it, and draws nothing there.
BOOST_FIXTURE_TEST_CASE(a_linked_named_folder_gets_no_plots, ResultsFolder) {
  const fs::path outside = dir / "outside", results = dir / "results";
  write_block_study(outside, {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}},
                    {{"learned", 0}, {"learned-tied", -0.05}});
  fs::create_directories(results / "converged");
  fs::create_directory_symlink(outside, results / "converged" / "gpt");
  BOOST_TEST(base::behind_link(results, "converged/gpt/valid_curves.png"));
  BOOST_TEST(!base::behind_link(results, "converged/new/valid_curves.png"));
  if (!experiments::report::have_gnuplot()) {
    BOOST_TEST_MESSAGE("SKIPPED: gnuplot is not installed; no plot is drawn either way");
    return;
  }
  BOOST_CHECK_EXCEPTION(
      experiments::report::render_report(results.string(), true), std::runtime_error,
      [](const std::runtime_error& e) {
        return std::string(e.what()).find(
                   "converged/gpt: a link; the report draws its plots only inside --results") !=
               std::string::npos;
      });
  for (const auto& entry : fs::directory_iterator(outside))
    BOOST_TEST(entry.path().extension() != ".png", entry.path());
}

// A field of the wrong type in a run file is an error naming the file and the field, not a raw
// JSON exception naming the folder.
// A folder the report reads by name is tested as its study file declares: the converter gives
// a finished study without one the family the report tested there, and a study file that
// declares less has the rest left untested.
BOOST_FIXTURE_TEST_CASE(a_named_folders_study_file_decides_what_is_tested, ResultsFolder) {
  const fs::path gpt = dir / "converged" / "gpt";
  write_block_study(gpt, {{"model", "gpt"}, {"d_model", 128}, {"epochs", 12}},
                    {{"learned", 0}, {"learned-tied", -0.05}, {"frozen-random", 0.05}});
  json summary = json::parse(std::ifstream(gpt / "summary.json"));
  BOOST_TEST(!experiments::declare_finished_study(gpt, "learned"), "no program named");
  summary["experiment"] = 5;  // not a program's name: passed over, not a raw JSON error
  std::ofstream(gpt / "summary.json") << summary.dump();
  BOOST_TEST(!experiments::declare_finished_study(gpt, "learned"));
  summary["experiment"] = "embeddings";
  std::ofstream(gpt / "summary.json") << summary.dump();
  BOOST_TEST(!experiments::report::load_study(gpt).declared);
  BOOST_TEST(experiments::report::load_study(gpt).comparisons.size() == 2u);
  BOOST_TEST_REQUIRE(experiments::declare_finished_study(gpt, "learned"));
  BOOST_TEST(!experiments::declare_finished_study(gpt, "learned"), "declared once");
  json declared = json::parse(std::ifstream(gpt / "study.json"));
  BOOST_TEST(declared.contains("declared_after_its_runs"));
  BOOST_TEST(declared.at("axes").at("modes").size() == 3u);
  BOOST_TEST(declared.at("axes").at("seeds") == json({1, 2, 3}));
  BOOST_TEST_REQUIRE(declared.at("family").size() == 2u);
  const experiments::report::Study both = experiments::report::load_study(gpt);
  BOOST_TEST(both.declared->size() == 2u);
  BOOST_TEST(both.comparisons.size() == 2u);
  // Declaring learned-tied alone: frozen-random is no longer tested.
  declared["family"].erase(declared["family"][1].at("mode") == "frozen-random" ? 1 : 0);
  std::ofstream(gpt / "study.json") << declared.dump();
  const experiments::report::Study one = experiments::report::load_study(gpt);
  BOOST_TEST_REQUIRE(one.comparisons.size() == 1u);
  BOOST_TEST(one.comparisons[0].key.second == "learned-tied");
  // A data-size sweep's comparisons are within a model and share; a life cycle has none.
  const fs::path sweep = dir / "sweep";
  fs::create_directories(sweep);
  json runs = json::array();
  for (double fraction : {0.25, 0.5})
    for (const char* mode : {"learned", "finetune-pretrained"})
      runs.push_back({{"model", "gpt"}, {"mode", mode}, {"fraction", fraction}, {"seed", 1}});
  std::ofstream(sweep / "summary.json") << json{{"experiment", "data_size"}, {"runs", runs}}.dump();
  BOOST_TEST_REQUIRE(experiments::declare_finished_study(sweep, "learned"));
  const experiments::report::Declaration shares =
      experiments::report::declaration_of(sweep / "study.json");
  BOOST_TEST(shares.family.size() == 2u);
  BOOST_TEST(shares.family.contains({"gpt 25%", "finetune-pretrained"}));
  BOOST_TEST(shares.family.contains({"gpt 50%", "finetune-pretrained"}));
  BOOST_TEST((shares.rows == experiments::report::StudyRows::by_share));
  const fs::path life = dir / "life";
  fs::create_directories(life);
  std::ofstream(life / "summary.json") << life_cycle_summary(2, 0.1).dump();
  BOOST_TEST(!experiments::declare_finished_study(life, "learned"));
  BOOST_TEST(!fs::exists(life / "study.json"));

  // The walk over a results folder writes inside it only: a linked folder is passed over.
  const fs::path results = dir / "results", elsewhere = dir / "elsewhere";
  fs::create_directories(results / "sweep");
  fs::create_directories(elsewhere);
  fs::copy_file(sweep / "summary.json", results / "sweep" / "summary.json");
  fs::copy_file(sweep / "summary.json", elsewhere / "summary.json");
  fs::create_directory_symlink(elsewhere, results / "linked");
  const std::vector<fs::path> written = experiments::declare_finished_studies(results, "learned");
  BOOST_TEST_REQUIRE(written.size() == 1u);
  BOOST_TEST(written[0] == results / "sweep" / "study.json");
  BOOST_TEST(!fs::exists(elsewhere / "study.json"));
  // A summary that is not JSON, or whose runs carry markup for names, is refused, naming it.
  const fs::path bad = dir / "bad";
  fs::create_directories(bad);
  std::ofstream(bad / "summary.json") << "{\"runs\": [";
  BOOST_CHECK_EXCEPTION(experiments::declare_finished_study(bad, "learned"), std::runtime_error,
                        [&](const std::runtime_error& e) {
                          return std::string(e.what()).find((bad / "summary.json").string() +
                                                            ": not JSON") != std::string::npos;
                        });
  runs[0]["mode"] = "learned](x)";
  std::ofstream(bad / "summary.json") << json{{"experiment", "data_size"}, {"runs", runs}}.dump();
  BOOST_CHECK_EXCEPTION(
      experiments::declare_finished_study(bad, "learned"), std::runtime_error,
      [](const std::runtime_error& e) {
        return std::string(e.what()).find("a run's 'mode' is neither a number nor a name") !=
               std::string::npos;
      });
  BOOST_TEST(!fs::exists(bad / "study.json"));
}

BOOST_FIXTURE_TEST_CASE(a_run_field_of_the_wrong_type_names_its_file_and_field, ResultsFolder) {
  const fs::path folder = dir / "converged" / "gpt";
  write_block_study(folder, {{"model", "gpt"}}, {{"learned", 0.0}, {"learned-tied", -0.03}});
  const fs::path file = folder / "gpt_learned-tied_seed2.json";
  const json good = json::parse(std::ifstream(file));
  const auto refused = [&](const json& damaged, const std::string& expected) {
    std::ofstream(file) << damaged.dump();
    try {
      experiments::report::render_report(dir.string(), false);
      BOOST_ERROR("rendered a run file with " << expected);
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      BOOST_TEST(what.find("gpt_learned-tied_seed2.json: field '" + expected) != std::string::npos,
                 what);
    }
  };
  json damaged = good;
  damaged["seed"] = "two";
  refused(damaged, "seed' is \"two\", not a whole number");
  damaged = good;
  damaged["epochs"][1]["valid_ppl"] = "x";
  refused(damaged, "epochs': [1].valid_ppl is \"x\", not a number");
  damaged = good;
  damaged["config"] = json::array();
  refused(damaged, "config' is [], not an object");
  damaged = good;
  damaged["schema"] = 3;
  refused(damaged, "schema' is 3, not a schema this build reads (1 to 2)");
  damaged = good;
  damaged["config"]["lr"] = "fast";
  refused(damaged, "config': configuration key 'lr' is \"fast\", not a number");
  damaged = good;  // a study's own field (experiments/test_losses.hpp), read by its own table
  damaged["test_blocks"]["nll_sums"][0] = "x";
  refused(damaged, "test_blocks': field 'nll_sums' is [\"x\"");
}

// The sinks' escapes, one by one.
BOOST_AUTO_TEST_CASE(text_from_a_file_is_escaped_for_each_sink) {
  using experiments::report::gnuplot_string;
  using experiments::report::markdown_code;
  using experiments::report::markdown_text;
  BOOST_TEST(markdown_text("learned-tied") == "learned-tied");
  BOOST_TEST(markdown_text("a|b <c> *d* [e](f) `g` $h$ ~i~ &j; #k \\") ==
             "a\\|b \\<c\\> \\*d\\* \\[e\\](f) \\`g\\` \\$h\\$ \\~i\\~ \\&j; \\#k \\\\");
  BOOST_TEST(markdown_text("a\nb\x1b") ==
             "a\xEF\xBF\xBD"
             "b\xEF\xBF\xBD");
  BOOST_TEST(markdown_code("bpe8k") == "`bpe8k`");
  BOOST_TEST(markdown_code("a`b``c|d") == "```a`b``c\\|d```");
  BOOST_TEST(markdown_code("`a") == "`` `a ``");
  BOOST_TEST(gnuplot_string("gpt learned") == "'gpt learned'");
  BOOST_TEST(gnuplot_string("x' ; system 'y") == "'x'' ; system ''y'");
  BOOST_TEST(gnuplot_string("a\nb") ==
             "'a\xEF\xBF\xBD"
             "b'");
}

// Least squares with the slope's t interval, against the numbers worked by hand: x 1..5,
// y 2.1 3.9 6.2 7.8 10.1: Sxx 10, Sxy 19.9, slope 1.99, intercept 0.05, residuals .06 -.13 .18
// -.21 .10 (SSE 0.107), s = sqrt(0.107 / 3), se = s / sqrt(10) = 0.059722, t(0.975, 3) =
// 3.182446: 1.99 +- 0.190062.
BOOST_AUTO_TEST_CASE(a_line_fit_gives_the_slope_and_its_t_interval) {
  const std::vector<double> x = {1, 2, 3, 4, 5}, y = {2.1, 3.9, 6.2, 7.8, 10.1};
  const experiments::report::LineFit f = experiments::report::fit_line(x, y);
  const auto close = boost::test_tools::tolerance(1e-5);
  BOOST_TEST(f.slope == 1.99, close);
  BOOST_TEST(f.intercept == 0.05, close);
  BOOST_TEST(f.slope_low == 1.99 - 0.190062, close);
  BOOST_TEST(f.slope_high == 1.99 + 0.190062, close);
  BOOST_TEST(f.p < 0.001);
  // The band of the fitted mean is narrowest at the mean x: t s sqrt(1/5).
  BOOST_TEST(f.band_half_width(3) == 3.182446 * std::sqrt(0.107 / 3) * std::sqrt(0.2), close);
  // Two points: an estimate, no inference.
  const experiments::report::LineFit two =
      experiments::report::fit_line(std::vector<double>{1, 2}, std::vector<double>{1, 3});
  BOOST_TEST(two.slope == 2.0, close);
  BOOST_TEST(two.p == 1.0);
}

// The study across scale: with its declared trends file, each effect per size and the line
// through the seeds. Tying here helps by 10%, 5% and 0% at 1e5, 1e6 and 1e7 body parameters,
// with the same seed noise at every size: a slope of exactly +5 points per tenfold body.
BOOST_AUTO_TEST_CASE(the_scaling_section_fits_each_effect_against_size) {
  const ResultsFolder folder;
  const fs::path scaling = folder.dir / "scaling";
  const double bodies[] = {1e5, 1e6, 1e7}, tied_effect[] = {-0.10, -0.05, 0.0};
  const double noise[] = {-0.005, 0.0, 0.005};
  std::vector<std::string> names;
  for (int s = 0; s < 3; ++s) {
    const std::string name = "gpt_s" + std::to_string(s);
    names.push_back(name);
    std::vector<json> list;
    for (size_t seed = 1; seed <= 3; ++seed) {
      const double learned = 300 + 10.0 * static_cast<double>(seed);
      json a = run("gpt", "learned", learned, learned);
      json b =
          run("gpt", "learned-tied", learned, learned * (1 + tied_effect[s] + noise[seed - 1]));
      a["seed"] = b["seed"] = seed;
      a["total_params"] = bodies[s] + 2 * 100 * 16;  // the body and two 100 x 16 matrices
      list.push_back(a);
      list.push_back(b);
    }
    write_size_summary(scaling / name, list);
  }
  std::ofstream(scaling / "trends.json") << json{
      {"schema", 1},
      {"reference", "learned"},
      {"effects", {"learned-tied", "finetune-pretrained"}},
      {"folders", names},
      {"declared", "2026-12-07T06:50:00Z"},
      {"commit", "abc123"}}.dump();
  // The findings, as numbers: tying's effect -10%, -5% and 0% at 1e5, 1e6 and 1e7 body
  // parameters is a slope of +5 points per tenfold body, zero at 1e7; fine-tuning has no run.
  const experiments::report::SizeTrends found = experiments::report::size_trends(folder.dir);
  BOOST_TEST_REQUIRE(found.sizes.size() == 3u);
  BOOST_TEST(found.sizes[0].x == 1e5, boost::test_tools::tolerance(1e-9));
  BOOST_TEST_REQUIRE(found.trends.size() == 2u);
  const experiments::report::Trend& tied = found.trends[0];
  BOOST_TEST(tied.effect == "learned-tied");
  BOOST_TEST(tied.sizes == 3u);
  BOOST_TEST(tied.y.size() == 9u);
  BOOST_TEST(tied.fit.slope == 0.05, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(-tied.fit.intercept / tied.fit.slope == 7.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(tied.fit.slope_low > 0.0);
  BOOST_TEST(tied.holm_p < 0.05);
  BOOST_TEST(tied.holm_p >= tied.fit.p);
  BOOST_TEST(found.trends[1].sizes == 0u);
  BOOST_TEST(found.trends[1].holm_p == 1.0);
  const std::string md = experiments::report::scaling_section(folder.dir, false);
  BOOST_TEST(
      md.find("| learned-tied | -10.00% (-11.24% to -8.76%; 3) | -5.00% ") != std::string::npos,
      md);
  BOOST_TEST(md.find("| learned-tied | 3 (9) | +5.00% | ") != std::string::npos, md);
  BOOST_TEST(md.find("the effect shrinks toward zero as the model grows") != std::string::npos, md);
  BOOST_TEST(md.find("crosses zero inside the measured range, at about 10.00M body parameters") !=
                 std::string::npos,
             md);
  // An effect no size ran is listed, with nothing fitted.
  BOOST_TEST(md.find("| finetune-pretrained | 0 (0) | - | - | - | - | no size has run it yet") !=
                 std::string::npos,
             md);
  BOOST_TEST(md.find("declared before the sweep's runs (2026-12-07T06:50:00Z, commit `abc123`)") !=
                 std::string::npos,
             md);
  // Its names become paths and Markdown: a folder that climbs out, or markup, is refused.
  for (const char* hostile : {"../../etc", "gpt|x"}) {
    std::ofstream(scaling / "trends.json") << json{
        {"reference", "learned"},
        {"effects", {"learned-tied"}},
        {"folders", {hostile}}}.dump();
    BOOST_CHECK_EXCEPTION(experiments::report::scaling_section(folder.dir, false),
                          std::runtime_error, [](const std::runtime_error& e) {
                            return std::string(e.what()).find("in 'folders' is not a name") !=
                                   std::string::npos;
                          });
  }
  std::ofstream(scaling / "trends.json") << json{
      {"reference", "learned`x"},
      {"effects", {"learned-tied"}},
      {"folders", {"gpt_d64"}}}.dump();
  BOOST_CHECK_EXCEPTION(experiments::report::scaling_section(folder.dir, false), std::runtime_error,
                        [](const std::runtime_error& e) {
                          return std::string(e.what()).find("in 'reference' is not a name") !=
                                 std::string::npos;
                        });
}

// Without a trend, the line's words claim the effect only where its band keeps clear of zero:
// tying at a steady -5% holds; fine-tuning, scattered about zero, establishes nothing.
BOOST_AUTO_TEST_CASE(a_flat_line_claims_the_effect_only_where_its_band_excludes_zero) {
  const ResultsFolder folder;
  const fs::path scaling = folder.dir / "scaling";
  const double noise[] = {-0.01, 0.0, 0.01};
  std::vector<std::string> names;
  for (int s = 0; s < 2; ++s) {
    const std::string name = "gpt_s" + std::to_string(s);
    names.push_back(name);
    std::vector<json> list;
    for (size_t seed = 1; seed <= 3; ++seed) {
      const double learned = 300 + 10.0 * static_cast<double>(seed);
      json a = run("gpt", "learned", learned, learned);
      json b = run("gpt", "learned-tied", learned, learned * (0.95 + noise[seed - 1]));
      json c = run("gpt", "finetune-pretrained", learned, learned * (1 + noise[(seed + s) % 3]));
      for (json* r : {&a, &b, &c}) {
        (*r)["seed"] = seed;
        (*r)["total_params"] = (s == 0 ? 1e5 : 1e6) + 2 * 100 * 16;
        list.push_back(*r);
      }
    }
    write_size_summary(scaling / name, list);
  }
  std::ofstream(scaling / "trends.json") << json{
      {"schema", 1},
      {"reference", "learned"},
      {"effects", {"learned-tied", "finetune-pretrained"}},
      {"folders", names}}.dump();
  const std::string md = experiments::report::scaling_section(folder.dir, false);
  const auto line_of = [&](const std::string& effect) {
    const size_t at = md.find("| " + effect + " | 2 (6) |");
    BOOST_TEST_REQUIRE(at != std::string::npos, md);
    return md.substr(at, md.find('\n', at) - at);
  };
  const std::string tied = line_of("learned-tied"), tuned = line_of("finetune-pretrained");
  BOOST_TEST(tied.find("no trend detected") != std::string::npos, tied);
  BOOST_TEST(tied.find("excludes zero over the whole measured range: the effect holds") !=
                 std::string::npos,
             tied);
  BOOST_TEST(tuned.find("no trend detected") != std::string::npos, tuned);
  BOOST_TEST(tuned.find("includes zero somewhere in the measured range: neither a trend nor the "
                        "effect itself is established") != std::string::npos,
             tuned);
  BOOST_TEST(tuned.find("the effect holds") == std::string::npos, tuned);
}

// A learning-rate search (scaling/lr/, subwords/lr/): one table in its study's section, groups
// in order of width, per group the rate whose arms have the lowest mean validation perplexity
// in bold, a rate with an arm still to run without a mean; per word where the runs have it; its
// folders are not rendered again as studies of their own.
BOOST_AUTO_TEST_CASE(a_learning_rate_search_is_one_table_with_each_groups_rate) {
  const ResultsFolder folder;
  const fs::path scaling = folder.dir / "scaling";
  std::vector<json> sweep;
  for (size_t seed = 1; seed <= 2; ++seed)
    for (const char* mode : {"learned", "learned-tied"}) {
      json r = run("gpt", mode, 300, 280);
      r["seed"] = seed;
      r["total_params"] = 1e5 + 2 * 100 * 16;
      sweep.push_back(r);
    }
  write_size_summary(scaling / "gpt_s0", sweep);
  std::ofstream(scaling / "trends.json") << json{
      {"reference", "learned"},
      {"effects", {"learned-tied"}},
      {"folders", {"gpt_s0"}}}.dump();
  const auto search = [&](const fs::path& dir, size_t d, double lr,
                          std::vector<std::pair<std::string, double>> arms, double per_word = 0) {
    std::vector<json> runs;
    for (const auto& [mode, valid] : arms) {
      json r = run("gpt", mode, valid, valid - 20);
      r["best_epoch"] = 2;
      if (per_word > 0)
        r["valid_ppl_per_word"] = per_word * valid,
        r["test_ppl_per_word"] = per_word * (valid - 20);
      runs.push_back(r);
    }
    fs::create_directories(dir);
    std::ofstream(dir / "summary.json")
        << json{{"runs", runs},
                {"base_config",
                 {{"model", "gpt"}, {"d_model", d}, {"layers", 2}, {"lr", lr}, {"epochs", 2}}}}
               .dump();
    std::ofstream(dir / "study.json") << declares_tying().dump();
  };
  // d16: 1e-3 (mean 295) beats 2e-3 (mean 302.5); d128: 1e-3 has only its learned run.
  search(scaling / "lr" / "d16_lr1e-3", 16, 1e-3, {{"learned", 300}, {"learned-tied", 290}});
  search(scaling / "lr" / "d16_lr2e-3", 16, 2e-3, {{"learned", 310}, {"learned-tied", 295}});
  search(scaling / "lr" / "d128_lr1e-3", 128, 1e-3, {{"learned", 280}});
  search(folder.dir / "subwords" / "lr" / "bpe8k_lr5e-4", 128, 5e-4, {{"learned", 400}}, 2.0);
  std::ofstream(folder.dir / "subwords" / "comparisons.json") << json{
      {"words", "converged/gpt"},
      {"tokenizations", {{"bpe8k", "subwords/bpe8k"}}},
      {"arms", {"learned"}}}.dump();
  const std::string md = experiments::report::render_report(folder.dir.string(), false);
  BOOST_TEST(
      md.find("| size | lr | learned | learned-tied | mean valid ppl |") != std::string::npos, md);
  const size_t d16 = md.find(
      "| d16 | 0.001 | 300.0 / 280.0 (2 of 2, cap) | 290.0 / 270.0 (2 of 2, cap) | **295.0** |");
  BOOST_TEST(d16 != std::string::npos, md);
  BOOST_TEST(md.find("| d16 | 0.002 | 310.0 / 290.0 (2 of 2, cap) | 295.0 / 275.0 (2 of 2, cap) | "
                     "302.5 |") != std::string::npos,
             md);
  const size_t d128 = md.find("| d128 | 0.001 | 280.0 / 260.0 (2 of 2, cap) | - | - |");
  BOOST_TEST(d128 != std::string::npos, md);
  BOOST_TEST(d16 < d128, md);
  // Subwords: per word, under their own section before any sweep run.
  const size_t words = md.find("## Words against subwords, fairly");
  BOOST_TEST(words != std::string::npos, md);
  BOOST_TEST(md.find("(`subwords/lr/`, `scripts/subwords.sh --parts lr`): seed 1 of each arm at "
                     "each rate, validation / test perplexity per word") > words,
             md);
  BOOST_TEST(
      md.find("| bpe8k | 0.0005 | 800.0 / 760.0 (2 of 2, cap) | **800.0** |") != std::string::npos,
      md);
  BOOST_TEST(md.find("`scaling/lr/d16_lr1e-3/`") == std::string::npos, md);
  BOOST_TEST(md.find("`subwords/lr/bpe8k_lr5e-4/`") == std::string::npos, md);
}

// The data sweep (trends_data.json): at one size, shares of 100 and 1,000 training tokens and
// the whole split's 10,000 (from the size's own folder, read from its run file), tying helping
// by 15%, 10% and 5%: a slope of exactly +5 points per tenfold data, which would reach zero at
// ten times the data measured; Holm over the declared 4.
BOOST_AUTO_TEST_CASE(the_data_sweep_fits_each_effect_against_training_tokens) {
  const ResultsFolder folder;
  const fs::path scaling = folder.dir / "scaling";
  const double noise[] = {-0.005, 0.0, 0.005};
  // Each seed's pair at one point: learned, and tied `effect` better or worse.
  const auto pair = [&](size_t seed, double effect) {
    const double learned = 300 + 10.0 * static_cast<double>(seed);
    json a = run("gpt", "learned", learned, learned);
    json b = run("gpt", "learned-tied", learned, learned * (1 + effect + noise[seed - 1]));
    a["seed"] = b["seed"] = seed;
    a["total_params"] = 100000 + 2 * 100 * 16;
    return std::vector<json>{a, b};
  };
  std::vector<json> shares, whole;
  for (size_t seed = 1; seed <= 3; ++seed) {
    for (const auto& [fraction, effect] : {std::pair{0.01, -0.15}, std::pair{0.1, -0.10}})
      for (json r : pair(seed, effect)) {
        r["fraction"] = fraction;
        r["train_tokens"] = 10000 * fraction;
        shares.push_back(r);
      }
    for (json r : pair(seed, -0.05)) {
      r["file"] = "gpt_" + r["mode"].get<std::string>() + "_seed" + std::to_string(seed) + ".json";
      r["data"] = {{"train_tokens", 10000}, {"description", "toy"}, {"vocab", 100}};
      whole.push_back(r);
    }
  }
  write_size_summary(scaling / "gpt_d16", whole);
  for (const json& r : whole)
    std::ofstream(scaling / "gpt_d16" / r["file"].get<std::string>()) << r.dump();
  write_size_summary(scaling / "data_d16", shares);
  std::ofstream(scaling / "trends.json") << json{
      {"reference", "learned"},
      {"effects", {"learned-tied"}},
      {"folders", {"gpt_d16"}}}.dump();
  json data = {{"reference", "learned"},
               {"effects", {"learned-tied"}},
               {"sizes", {{"d16", {{"shares", "data_d16"}, {"whole", "gpt_d16"}}}}},
               {"family", 4},
               {"declared", "2026-12-07T10:26:53Z"},
               {"commit", "0905e5c"}};
  std::ofstream(scaling / "trends_data.json") << data.dump();
  // The findings, as numbers: -15%, -10% and -5% at 100, 1,000 and 10,000 training tokens is a
  // slope of +5 points per tenfold data, zero at 100,000; Holm over the declared 4 multiplies
  // its p by 4 (the three slopes without runs count as p = 1).
  const experiments::report::DataTrends found = experiments::report::data_trends(folder.dir);
  BOOST_TEST(found.sizes == std::vector<std::string>{"d16"});
  BOOST_TEST_REQUIRE(found.points.size() == 1u);
  BOOST_TEST_REQUIRE(found.points[0].size() == 3u);
  BOOST_TEST(found.points[0][2].x == 10000.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST_REQUIRE(found.trends[0].size() == 1u);
  const experiments::report::Trend& tied = found.trends[0][0];
  BOOST_TEST(tied.effect == "learned-tied at d16");
  BOOST_TEST(tied.y.size() == 9u);
  BOOST_TEST(tied.fit.slope == 0.05, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(-tied.fit.intercept / tied.fit.slope == 5.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(found.family == 4u);
  BOOST_TEST(tied.holm_p == std::min(1.0, 4 * tied.fit.p), boost::test_tools::tolerance(1e-12));
  const std::string md = experiments::report::scaling_section(folder.dir, false);
  BOOST_TEST(md.find("### Against the training data") != std::string::npos, md);
  BOOST_TEST(md.find("| effect | 1% (100) | 10% (1.0k) | 100% (10.0k) |") != std::string::npos, md);
  BOOST_TEST(md.find("| learned-tied at d16 | -15.00% (-16.24% to -13.76%; 3) | -10.00% ") !=
                 std::string::npos,
             md);
  BOOST_TEST(md.find("| learned-tied at d16 | 3 (9) | +5.00% | ") != std::string::npos, md);
  BOOST_TEST(
      md.find("the effect shrinks toward zero as the training data grows") != std::string::npos,
      md);
  BOOST_TEST(md.find("a straight-line extrapolation would reach zero at about 100.0k training "
                     "tokens (10x the most data measured)") != std::string::npos,
             md);
  BOOST_TEST(md.find("Holm's correction is over the 4 slopes") != std::string::npos, md);
  // Holm over the declared 4 (three of them without runs, p = 1): the Holm p is 4 times the p.
  const size_t row = md.find("| learned-tied at d16 | 3 (9) |");
  BOOST_TEST(md.substr(row).find("| <0.001 | <0.001 |") != std::string::npos, md);
  // Its folder names become paths: one that climbs out is refused.
  data["sizes"]["d16"]["shares"] = "../../etc";
  std::ofstream(scaling / "trends_data.json") << data.dump();
  BOOST_CHECK_EXCEPTION(experiments::report::scaling_section(folder.dir, false), std::runtime_error,
                        [](const std::runtime_error& e) {
                          return std::string(e.what()).find("in 'sizes' is not a name") !=
                                 std::string::npos;
                        });
}

// Words against subwords (subwords/comparisons.json): each subword run 10% above its word
// seed's per-word perplexity. Welch over 3 seeds a side finds p about 0.02, which Holm over the
// declared 4 leaves undecided; a tokenization without runs is listed as such.
BOOST_AUTO_TEST_CASE(subwords_are_compared_with_words_per_word_over_seeds) {
  const ResultsFolder folder;
  const auto write_summary = [](const fs::path& dir, const std::vector<json>& runs) {
    fs::create_directories(dir);
    std::ofstream(dir / "summary.json") << json{
        {"rows", experiments::aggregate(runs, {"model", "mode"}, kMetrics)},
        {"runs", runs}}.dump();
  };
  std::vector<json> words, subwords;
  for (size_t seed = 1; seed <= 3; ++seed) {
    const double ppl = 290 + 10.0 * static_cast<double>(seed);
    json w = run("gpt", "learned", ppl, ppl), s = run("gpt", "learned", ppl / 4, ppl / 4);
    w["seed"] = s["seed"] = seed;
    s["test_ppl_per_word"] = 1.1 * ppl;
    words.push_back(w);
    subwords.push_back(s);
  }
  write_summary(folder.dir / "converged" / "gpt", words);
  write_summary(folder.dir / "subwords" / "bpe8k", subwords);
  json declared = {{"words", "converged/gpt"},
                   {"arms", {"learned"}},
                   {"tokenizations", {{"bpe8k", "subwords/bpe8k"}, {"gpt2", "subwords/gpt2"}}},
                   {"family", 4},
                   {"declared", "2026-12-07T13:20:00Z"},
                   {"commit", "a428f95"}};
  std::ofstream(folder.dir / "subwords" / "comparisons.json") << declared.dump();
  const std::string md = experiments::report::subwords_section(folder.dir);
  BOOST_TEST(md.find("| learned | bpe8k | 309.9 (3) | 340.9 (3) | +10.00% (") != std::string::npos,
             md);
  BOOST_TEST(
      md.find("+10.00% (+2.24% to +18.35%) | 0.022 | 0.090 | not decided |") != std::string::npos,
      md);
  BOOST_TEST(md.find("Holm-corrected over the 4 comparisons") != std::string::npos, md);
  BOOST_TEST(
      md.find("| learned | gpt2 | 309.9 (3) | - | - | - | - | no run yet |") != std::string::npos,
      md);
  // Its folder names become paths: one that climbs out is refused.
  declared["tokenizations"]["bpe8k"] = "../../etc";
  std::ofstream(folder.dir / "subwords" / "comparisons.json") << declared.dump();
  BOOST_CHECK_EXCEPTION(experiments::report::subwords_section(folder.dir), std::runtime_error,
                        [](const std::runtime_error& e) {
                          return std::string(e.what()).find("in 'tokenizations' is not a name") !=
                                 std::string::npos;
                        });
}

BOOST_AUTO_TEST_SUITE_END()

// A summary that disagrees with its run files is refused, and so is a file of the wrong shape
// (edited by hand, written by another program), by name and key.
BOOST_FIXTURE_TEST_CASE(a_summary_that_disagrees_with_its_run_files_is_refused, ResultsFolder) {
  fs::create_directories(dir / "embeddings");
  json learned = run("gpt", "learned", 300, 310);
  learned["file"] = "gpt_learned_seed1.json";
  const json agreeing = {{"rows", experiments::aggregate({learned}, {"model", "mode"}, kMetrics)},
                         {"runs", json::array({learned})}};
  const auto render_with = [&](const json& summary, const json& file) {
    std::ofstream(dir / "embeddings" / "summary.json") << summary.dump();
    std::ofstream(dir / "embeddings" / "gpt_learned_seed1.json") << file.dump();
    return experiments::report::render_report(dir.string(), false);
  };
  const auto refused = [&](const json& summary, const json& file, const std::string& says,
                           const std::string& why = "summary.json disagrees with its run files: ") {
    try {
      render_with(summary, file);
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      BOOST_TEST(what.find(why + says) != std::string::npos, what);
      return;
    }
    BOOST_ERROR("rendered a file it should refuse: " + says);
  };
  BOOST_TEST(render_with(agreeing, learned).find("| gpt | learned |") != std::string::npos);
  // The run file says 320, the summary 310.
  json edited = learned;
  edited["test_ppl"] = 320.0;
  refused(agreeing, edited, "test_ppl of gpt_learned_seed1.json is 310.0 there, 320.0 in the file");
  // The same from the files of a folder read once (load_study), not read again from disk.
  const experiments::report::FolderFiles read_once = {{"gpt_learned_seed1.json", edited}};
  BOOST_CHECK_EXCEPTION(
      experiments::report::check_summary(agreeing, dir / "embeddings" / "summary.json", &read_once),
      std::runtime_error, [](const std::runtime_error& e) {
        return std::string(e.what()).find("is 310.0 there, 320.0 in the file") != std::string::npos;
      });
  // The file on disk still says 320: the files given are the ones compared.
  const experiments::report::FolderFiles agreeing_files = {{"gpt_learned_seed1.json", learned}};
  BOOST_CHECK_NO_THROW(experiments::report::check_summary(
      agreeing, dir / "embeddings" / "summary.json", &agreeing_files));
  // A run count that is not the runs listed, or not a whole number (1e30 printed as 0).
  for (const json& count : {json(2), json(1e30), json(-1)}) {
    json summary = agreeing;
    summary["rows"][0]["runs"] = count;
    refused(summary, learned,
            count == json(2) ? "row \"gpt\" \"learned\" counts 2 runs, the summary lists 1"
                             : "a row's run count is " + count.dump());
  }
  // A row's mean that is not its runs'.
  json summary = agreeing;
  summary["rows"][0]["test_ppl"]["mean"] = 250.0;
  refused(summary, learned, "row \"gpt\" \"learned\" has mean test ppl 250.0, its runs 310.0000");

  // Misshapen files.
  json text_ppl = learned;
  text_ppl["test_ppl"] = "abc";
  refused(agreeing, text_ppl, "\"test_ppl\" is \"abc\", not a number", "gpt_learned_seed1.json: ");
  refused(agreeing, json::array({1, 2}), "not a JSON object", "gpt_learned_seed1.json: ");
  summary = agreeing;
  summary["rows"] = 5;
  refused(summary, learned, "\"rows\" is 5, not a list of objects", "summary.json: ");
  summary = agreeing;
  summary["runs"] = json::array({1});
  refused(summary, learned, "\"runs\" is [1], not a list of objects", "summary.json: ");
}

BOOST_AUTO_TEST_CASE(the_band_table_gives_each_rows_test_perplexity_by_frequency) {
  // Two seeds of learned (frequent tokens at ppl e^4 and e^4.2, rare at e^6), one of tied
  // without the rare band, one run of an older version without bands at all.
  const auto bands = [](double frequent, double rare) {
    json b = {{"frequent (100+)", {{"tokens", 1000}, {"nll_sum", 1000 * frequent}}}};
    if (rare > 0) b["rare (1-9)"] = {{"tokens", 10}, {"nll_sum", 10 * rare}};
    return json{{"test_bands", b}};
  };
  const json learned1 = bands(4.0, 6.0), learned2 = bands(4.2, 6.0), tied = bands(3.9, 0),
             older = json::object();
  const experiments::report::RunFiles files = {
      {{"gpt", "learned"}, {{1, &learned1}, {2, &learned2}}},
      {{"gpt", "learned-tied"}, {{1, &tied}}},
      {{"gpt", "frozen-random"}, {{1, &older}}}};
  const std::string table = experiments::report::band_table(files);
  const std::string learned =
      "| gpt | learned | 2 | " + experiments::report::fixed((std::exp(4.0) + std::exp(4.2)) / 2, 1);
  BOOST_TEST(table.find(learned + " ± ") != std::string::npos, table);
  // Only the bands some run recorded have a column: frequent and rare here.
  BOOST_TEST(table.find(" | " + experiments::report::fixed(std::exp(6.0), 1) + " ± 0.0 |\n") !=
                 std::string::npos,
             table);
  BOOST_TEST(table.find("middle") == std::string::npos, table);
  BOOST_TEST(
      table.find("| gpt | learned-tied | 1 | " + experiments::report::fixed(std::exp(3.9), 1) +
                 " | - |\n") != std::string::npos,
      table);
  BOOST_TEST(table.find("frozen-random") == std::string::npos, table);
  BOOST_TEST(table.find("frequent (100+): 1.0k tokens") != std::string::npos, table);
  BOOST_TEST(experiments::report::band_table({{{"gpt", "learned"}, {{1, &older}}}}).empty());
  // Against learned, seed by seed, in nats: tied's one seed pairs with learned's seed 1
  // (3.9 - 4.0); a row with two paired seeds gets a t interval.
  const json tied2 = bands(3.8, 5.0);
  const experiments::report::RunFiles two = {{{"gpt", "learned"}, {{1, &learned1}, {2, &learned2}}},
                                             {{"gpt", "learned-tied"}, {{1, &tied}, {2, &tied2}}}};
  const std::string one_pair = experiments::report::band_difference_table(files, "learned");
  BOOST_TEST(one_pair.find("| gpt | learned-tied | 1 | -0.100 | - |\n") != std::string::npos,
             one_pair);
  const std::string paired = experiments::report::band_difference_table(two, "learned");
  // Frequent: -0.1 and -0.4, mean -0.25, sd 0.212, t(0.975, 1) 12.706: -0.25 +- 1.906.
  BOOST_TEST(paired.find("| gpt | learned-tied | 2 | -0.250 (-2.156 to +1.656) | -1.000 |\n") !=
                 std::string::npos,
             paired);
  BOOST_TEST(experiments::report::band_difference_table(files, "frozen-pretrained").empty());
  // Several models: each row against its own model's reference, whichever comes first.
  const json wide_learned = bands(4.5, 6.0), wide_tied = bands(4.0, 6.0);
  const experiments::report::RunFiles models = {{{"gpt d128", "learned"}, {{1, &learned1}}},
                                                {{"gpt d128", "learned-tied"}, {{1, &tied}}},
                                                {{"gpt d256", "learned-tied"}, {{1, &wide_tied}}},
                                                {{"gpt d256", "learned"}, {{1, &wide_learned}}}};
  const std::string both =
      experiments::report::band_difference_table(models, "learned", "Per width");
  BOOST_TEST(both.starts_with("Per width, each row against its model's `learned` row"), both);
  BOOST_TEST(both.find("| gpt d128 | learned-tied | 1 | -0.100 | - |\n") != std::string::npos,
             both);
  BOOST_TEST(both.find("| gpt d256 | learned-tied | 1 | -0.500 | 0.000 |\n") != std::string::npos,
             both);
}

// The conclusions say where tying gains by band only from two paired seeds on, and name a
// band lower or higher only when its t interval excludes zero.
BOOST_AUTO_TEST_CASE(the_conclusions_name_the_bands_where_tying_gains_or_loses) {
  const auto bands = [](double frequent, double unseen, double rare) {
    return json{{"test_bands",
                 {{"frequent (100+)", {{"tokens", 1000}, {"nll_sum", 1000 * frequent}}},
                  {"rare (1-9)", {{"tokens", 10}, {"nll_sum", 10 * rare}}},
                  {"unseen", {{"tokens", 10}, {"nll_sum", 10 * unseen}}}}}};
  };
  // Tied minus learned per seed: frequent -0.10, -0.12, -0.11 (lower); unseen +1.0, +1.2,
  // +1.1 (higher); rare -0.5, +0.5, 0 (interval across zero: neither).
  const json learned[] = {bands(4.0, 9.0, 6.0), bands(4.2, 9.0, 6.0), bands(4.1, 9.0, 6.0)};
  const json tied[] = {bands(3.90, 10.0, 5.5), bands(4.08, 10.2, 6.5), bands(3.99, 10.1, 6.0)};
  std::vector<experiments::report::ConvergedStudy> converged(1);
  converged[0].folder = converged[0].label = "gpt";
  auto& files = converged[0].study.files;
  files = {{{"gpt", "learned"}, {{1, &learned[0]}, {2, &learned[1]}, {3, &learned[2]}}},
           {{"gpt", "learned-tied"}, {{1, &tied[0]}, {2, &tied[1]}, {3, &tied[2]}}}};
  const std::string line = experiments::report::tying_by_band(converged);
  BOOST_TEST(line.find("  - gpt (3 seeds): frequent (100+) -0.110 (") != std::string::npos, line);
  BOOST_TEST(
      line.find("; uncorrected interval below zero in: frequent (100+); above zero in: unseen\n") !=
          std::string::npos,
      line);
  BOOST_TEST(line.find("rare (1-9) 0.000 (-1.242 to +1.242)") != std::string::npos, line);
  // One paired seed: no line; nor for a model without a tied row.
  files[1].second = {{1, &tied[0]}};
  BOOST_TEST(experiments::report::tying_by_band(converged).empty());
  files.pop_back();
  BOOST_TEST(experiments::report::tying_by_band(converged).empty());
}

// Runs trained again for their bands stand in for the originals when they are the same run: the
// same test perplexity bit for bit (the rerun's file replaces the original's), or within
// kRerunTolerance, a rerun whose sums ran in another order (its bands join the original's other
// numbers). Further off, a rerun is another run and is not used.
BOOST_AUTO_TEST_CASE(band_reruns_stand_in_only_for_the_same_run) {
  using experiments::report::kRerunTolerance;
  const json bands = {{"frequent (100+)", {{"tokens", 1000}, {"nll_sum", 4000.0}}}};
  const json learned1 = {{"test_ppl", 250.0}}, tied1 = {{"test_ppl", 240.0}},
             learned2 = {{"test_ppl", 251.0}, {"test_bands", bands}},
             frozen1 = {{"test_ppl", 260.0}, {"test_blocks", {1.0, 2.0}}},
             random1 = {{"test_ppl", 300.0}};
  json same = learned1, other = tied1, extra = learned1, rounded = frozen1, far = random1;
  same["test_bands"] = other["test_bands"] = extra["test_bands"] = bands;
  rounded["test_bands"] = far["test_bands"] = bands;
  other["test_ppl"] = 240.0 * (1 + 2 * kRerunTolerance);  // another run
  rounded["test_ppl"] = 260.0 * (1 + kRerunTolerance / 4);
  rounded["test_blocks"] = {1.5, 2.5};
  far["test_ppl"] = 300.0 * (1 + kRerunTolerance * 1.01);
  experiments::report::Study study, reruns;
  study.summary = reruns.summary = json::object();
  study.files = {{{"gpt", "learned"}, {{1, &learned1}, {2, &learned2}}},
                 {{"gpt", "learned-tied"}, {{1, &tied1}}},
                 {{"gpt", "frozen-pretrained"}, {{1, &frozen1}}},
                 {{"gpt", "frozen-random"}, {{1, &random1}}}};
  reruns.files = {{{"gpt", "learned"}, {{1, &same}, {2, &extra}}},
                  {{"gpt", "learned-tied"}, {{1, &other}}},
                  {{"gpt", "frozen-pretrained"}, {{1, &rounded}}},
                  {{"gpt", "frozen-random"}, {{1, &far}}}};
  experiments::report::supplement_bands(study, reruns);
  BOOST_TEST(study.files[0].second.at(1) == &same);      // lacked bands, same run: replaced
  BOOST_TEST(study.files[0].second.at(2) == &learned2);  // had its own bands: kept
  BOOST_TEST(study.files[1].second.at(1) == &tied1);     // a different run: kept
  BOOST_TEST(study.files[3].second.at(1) == &random1);   // just past the tolerance: kept
  // Up to rounding: the original's numbers with the rerun's bands.
  const json& joined = *study.files[2].second.at(1);
  BOOST_TEST(joined.at("test_ppl").get<double>() == 260.0);
  BOOST_TEST(joined.at("test_blocks") == frozen1.at("test_blocks"));
  BOOST_TEST(joined.at("test_bands") == bands);
  BOOST_TEST(study.reruns_used == 1u);
  BOOST_TEST(study.reruns_rounding == 1u);
  BOOST_TEST(study.reruns_differing == 2u);
  BOOST_TEST(study.reruns_largest_difference == kRerunTolerance / 4,
             boost::test_tools::tolerance(1e-9));
  // Without a reruns folder nothing changes.
  experiments::report::Study none;
  experiments::report::supplement_bands(study, none);
  BOOST_TEST(study.reruns_used == 1u);
}

BOOST_AUTO_TEST_CASE(plots_tell_models_apart_and_tick_any_length_of_run) {
  using experiments::report::model_point_and_dash;
  using experiments::report::tick_step;
  BOOST_TEST((model_point_and_dash("gpt") == std::pair{7, 1}));
  BOOST_TEST((model_point_and_dash("nplm") == std::pair{5, 2}));
  for (const char* user : {"llama-gpt", "lstm", "my-gpt"}) {
    BOOST_TEST((model_point_and_dash(user) != model_point_and_dash("gpt")), user);
    BOOST_TEST((model_point_and_dash(user) != model_point_and_dash("nplm")), user);
  }
  BOOST_TEST(tick_step(12) == 2.0);
  BOOST_TEST(tick_step(240) == 50.0);
  BOOST_TEST(tick_step(0.3) == 0.05, boost::test_tools::tolerance(1e-12));  // a --steps run
  BOOST_TEST(tick_step(0) == 1.0);
}
