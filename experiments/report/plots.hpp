// The report's pictures: gnuplot (run without a shell) draws each into its study's folder, with
// the same colour for a mode and the same point and dash for a model in every plot.
#pragma once

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/report/results.hpp"

namespace tg::experiments::report {

bool have_gnuplot();

// A model's gnuplot point type and dash type: the built-in ones fixed, any other (a user's
// model) one of a few more by its name's hash, so that the same model looks the same in every
// plot and two models sharing a mode's colour are still told apart.
std::pair<int, int> model_point_and_dash(const std::string& model);
// A tick spacing of 1, 2 or 5 times a power of ten that puts five to ten ticks on [0, last]: a
// run of a fraction of an epoch (--steps) gets ticks too, a long one no more than a dozen.
double tick_step(double last);

// Each draws root/sub/NAME.png and returns the Markdown that shows it (REPORT.md is in root),
// or "" when gnuplot failed.
// Validation perplexity against epochs (fractional with --eval-every) of a study's runs, from
// their own files (`files`, as load_run_files reads them for the summary's rows): the mean
// over seeds with one standard deviation as error bars.
// with_near_best adds a second panel near the best (near_best_range) when one helps: for runs
// to convergence, where the modes end close together under a curve that stays far above.
enum class CurvePanels { all_runs, with_near_best };
std::string validation_curves(const nlohmann::json& summary, const RunFiles& files,
                              const std::filesystem::path& root, const std::filesystem::path& sub,
                              CurvePanels panels = CurvePanels::all_runs);
// The y range of a second panel that shows the runs near the best: from the lowest mean to
// `above` times it, when some mean lies well beyond that (a frozen random table, the first
// epochs) and would squash the close modes into a few pixels of the full plot; nullopt when
// the full plot already shows them.
std::optional<std::pair<double, double>> near_best_range(const std::vector<double>& means,
                                                         double above = 1.12);
// Test perplexity against training tokens for each mode (a data-size sweep's summary).
std::string data_size_plot(const nlohmann::json& size, const std::filesystem::path& root,
                           const std::filesystem::path& sub);
// Drift of each frequency band over training: one colour per band, a dash per run.
std::string drift_plot(const nlohmann::json& life, const std::filesystem::path& root,
                       const std::filesystem::path& sub);

// Row norms (median and quartiles) by training count, each run's input and output rows (a tied
// table once), on a log count axis with the unseen rows at its left; "" when no run has them.
std::string norms_plot(const nlohmann::json& life, const std::filesystem::path& root,
                       const std::filesystem::path& sub);

// An effect (a row against the reference arm, in percent) against the model's body
// parameters or its training tokens on a log axis: at each point its mean with its t interval
// over the seeds as error bars, and the fitted straight line (intercept and slope in percent
// per log10 x), one colour per mode and one point type and dash per group (the data sweep's
// sizes); a dashed line at zero. Drawn into root/sub/<axis name>.png.
struct EffectSeries {
  std::string effect;                              // its title
  std::vector<std::array<double, 4>> points = {};  // x, mean, low, high
  std::optional<std::pair<double, double>> line = {};
  std::string mode = {};  // its colour; the effect's name when empty
  size_t group = 0;
};
// The x axis of an effect plot: its label and the plot's file name (without extension).
struct EffectAxis {
  std::string label, name;
};
std::string effect_vs_size_plot(const std::vector<EffectSeries>& series,
                                const std::filesystem::path& root, const std::filesystem::path& sub,
                                const EffectAxis& axis);

}  // namespace tg::experiments::report
