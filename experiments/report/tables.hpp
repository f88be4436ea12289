// The report's building blocks: the tables and sentences several sections share.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/report/analysis.hpp"

namespace tg::experiments::report {

// The comparison table of a study's summary; its time and speed columns, by row of the summary.
struct TimeColumns {
  std::string time_header, speed_header;
  std::function<double(const nlohmann::json&row)> seconds, tokens_per_second;
};
std::string comparison_table(const nlohmann::json& summary, const TimeColumns& time);
std::string embeddings_table(const nlohmann::json& summary);  // exp_embeddings' summary.json
std::string data_size_table(const nlohmann::json& summary);   // exp_data_size's summary.json
// Best epoch / epochs run (and the time by `clock`) of every run, row by row.
std::string epochs_table(const RunFiles& files, RunClock clock);

// Test perplexity by frequency band of the target (the runs' test_bands), row by row: mean ±
// sample standard deviation over the seeds that recorded it; "" when no run did.
std::string band_table(const RunFiles& files);

// A learning-rate search as one table: the folders NAME_lr<rate>/ in results/`search` (seed 1
// of each arm at one rate), grouped by NAME (a size, a tokenization: the `group` column) in
// order of the model's width, each run's validation / test perplexity (per word where the runs
// have it) and best epoch, and per group, in bold, the rate whose arms have the lowest mean
// validation perplexity (the rule the search's script, `made_by`, chooses by). "" without such
// folders.
std::string search_table(const std::filesystem::path& results, const std::filesystem::path& search,
                         const std::string& group, const std::string& made_by);
// The frequency bands, frequent to never seen in training, then the words outside the
// vocabulary.
inline constexpr const char* kBands[] = {"frequent (100+)", "middle (10-99)", "rare (1-9)",
                                         "unseen", "<unk>"};
// A row's mean test loss per token in each band minus the reference row's (same model), one
// difference (nats) per seed both recorded.
struct BandDifferences {
  RowKey key;
  size_t seeds = 0;
  std::map<std::string, std::vector<double>> by_band;
};
// Every row of `files` but the references, paired with the reference row of its model; rows
// without a pair left out.
std::vector<BandDifferences> band_differences(const RunFiles& files, const std::string& reference);
// "-0.080 (-0.118 to -0.041)": the mean difference and, from two seeds on, its 95% t interval.
std::string band_difference_cell(const experiments::TInterval& interval);
std::string band_difference_cell(const std::vector<double>& differences);
// "frequent (100+) -0.080 (-0.118 to -0.041), ...; lower in: frequent (100+); higher in: none":
// a band is lower or higher when its interval excludes zero (not corrected across the bands).
std::string band_verdicts(const BandDifferences& row);
// band_differences as a table, introduced by "<opening>, each row against its model's
// `<reference>` row ..."
// (after the band table, "The same"); "" when no pair did.
std::string band_difference_table(const RunFiles& files, const std::string& reference,
                                  std::string_view opening = "The same");

// How long a study's runs trained, as its base configuration says: "2 epochs", "300 steps";
// "" without one.
std::string budget_of(const nlohmann::json& summary);
// Whether a study trained on the built-in Brown corpus (Bengio et al.'s protocol), not on a
// --corpus-file: only then do its rows stand beside the paper's.
bool on_brown(const nlohmann::json& summary);

// A study's data, in one line.
std::string data_line(const nlohmann::json& summary);
// The setup of a study's runs in one sentence (`run_config`: a run's own configuration, or
// null).
std::string training_setup(const nlohmann::json& summary,
                           const nlohmann::json& run_config = nlohmann::json());

// The verdicts' method, in the words the tables and the conclusions use.
// `family`: the comparisons Holm's correction runs over, as the sentence names them.
std::string method_sentence(const std::string& family = kHolmFamily);
// The comparisons against `reference` as a table, after a paragraph saying how they are drawn.
// "-3.1 to -1.2": a comparison's 95% t interval.
std::string t_interval_text(const experiments::TInterval& interval);
// The verdict's name; an undecided one adds the seeds that would decide it.
std::string verdict_text(const Comparison& c);
std::string significance_rows(const std::vector<Comparison>& rows, const std::string& reference,
                              const std::string& family = kHolmFamily);
// "  - learned-tied: -14.9 (95% interval ...): not decided" for each row.
std::string verdict_lines(const std::vector<Comparison>& rows, bool with_model = false);

}  // namespace tg::experiments::report
