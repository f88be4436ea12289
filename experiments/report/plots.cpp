#include "experiments/report/plots.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "autograd/io.hpp"
#include "base/files.hpp"
#include "base/process.hpp"
#include "experiments/lifecycle_probe.hpp"
#include "experiments/report/format.hpp"
#include "experiments/significance.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

std::pair<int, int> model_point_and_dash(const std::string& model) {
  if (model == "gpt") return {7, 1};
  if (model == "nplm") return {5, 2};
  constexpr std::pair<int, int> others[] = {{9, 3}, {11, 4}, {13, 5}, {3, 6}, {1, 7}};
  return others[std::hash<std::string>{}(model) % std::size(others)];
}

double tick_step(double last) {
  if (!(last > 0)) return 1;
  const double raw = last / 8, power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * power) return m * power;
  return 10 * power;
}

namespace {

// One colour per embedding mode and one point shape and dash per model, the same in every
// plot, so that a mode is recognised at a glance across the report.
// A mode's colour with the given point type and dash; the overload below takes both from the
// model.
std::string series_style(const std::string& mode, std::pair<int, int> point_and_dash,
                         double point_size = 1.1) {
  static const std::map<std::string, std::string> colours = {
      {"learned", "#1f77b4"},
      {"learned-tied", "#ff7f0e"},
      {"frozen-pretrained", "#2ca02c"},
      {"finetune-pretrained", "#d62728"},
      {"frozen-random", "#7f7f7f"},
      {"frozen-pretrained-full", "#17becf"},
      {"finetune-pretrained-full", "#9467bd"}};
  const auto colour = colours.find(mode);
  const auto [point, dash] = point_and_dash;
  return "lc rgb '" + (colour == colours.end() ? std::string("#000000") : colour->second) +
         "' pt " + std::to_string(point) + " ps " + fixed(point_size, 1) + " lw 2 dt " +
         std::to_string(dash);
}

std::string series_style(const std::string& model, const std::string& mode,
                         double point_size = 1.1) {
  return series_style(mode, model_point_and_dash(model), point_size);
}

// The header every plot shares: axes fitted to the data with a little air, a grid, the key
// below the plot (never over the data, never half the picture). Text is shown as it is
// (noenhanced): a name read from a results file is no markup to gnuplot.
const char* kPlotHeader =
    "set termoption noenhanced\n"
    "set datafile separator '\\t'\nset grid\nset key below horizontal maxrows 3 spacing 1.2\n"
    "set autoscale fix\nset offsets graph 0.03, graph 0.03, graph 0.08, graph 0.08\n"
    "set format y '%.0f'\n";

// Writes NAME.dat and NAME.gp in root/sub and runs gnuplot there. The script names only those
// files (no path from the command line), and gnuplot is run without a shell. REPORT.md, in
// root, links the picture as sub/NAME.png.
std::string plot(const fs::path& root, const fs::path& sub, const std::string& name,
                 const std::string& data, const std::string& script, int height = 600) {
  // A folder named by a section (converged/gpt) may be a link: drawing there would write
  // outside the results folder.
  if (base::behind_link(root, sub))
    throw std::runtime_error((root / sub).string() +
                             ": a link; the report draws its plots only inside --results");
  const fs::path dir = root / sub;
  const fs::path dat = dir / (name + ".dat"), gp = dir / (name + ".gp"),
                 png = dir / (name + ".png");
  base::atomic_write(dat.string(), [&](std::ostream& o) { o << data; });
  base::atomic_write(gp.string(), [&](std::ostream& o) {
    o << "set terminal pngcairo size 900," << height << " font ',11'\n"
      << kPlotHeader << "set output '" << name << ".png.tmp'\n"
      << script;
  });
  const bool drawn =
      base::run_program({"gnuplot", name + ".gp"}, base::ProgramOutput::discard, dir.string()) == 0;
  std::error_code ec;
  fs::remove(dat, ec);
  fs::remove(gp, ec);
  if (!drawn) {
    fs::remove(png.string() + ".tmp", ec);  // a half-drawn picture, if gnuplot failed midway
    return "";
  }
  fs::rename(png.string() + ".tmp", png);
  return "![" + name + "](" + (sub / png.filename()).string() + ")\n\n";
}

}  // namespace

std::optional<std::pair<double, double>> near_best_range(const std::vector<double>& means,
                                                         double above) {
  if (means.empty()) return std::nullopt;
  const auto [lo, hi] = std::ranges::minmax(means);
  // Worth a panel when the full plot spends most of its height above the close modes.
  if (hi <= lo * (1 + 2 * (above - 1))) return std::nullopt;
  return std::pair{lo, lo * above};
}

bool have_gnuplot() {
  try {
    return base::run_program({"gnuplot", "--version"}, base::ProgramOutput::discard) == 0;
  } catch (const std::exception&) {
    return false;
  }
}

namespace {

// Per row: the validation perplexities of its seeds at each (rounded) epoch, from the per-epoch
// evaluations and the --eval-every ones.
std::vector<std::map<double, std::vector<double>>> curve_points(const Rows& rows,
                                                                const RunFiles& files) {
  std::vector<std::map<double, std::vector<double>>> points(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (const auto& entry : rows[i].second) {
      // The run's file when it has one; the summary's entry (epochs only) otherwise.
      const auto file = files[i].second.find(entry.value("seed", size_t{0}));
      const json& run = file != files[i].second.end() ? *file->second : entry;
      const double per_epoch = run.value("steps_per_epoch", 0.0);
      auto add = [&](const json& record) {
        const double x = per_epoch > 0 ? record.at("step").get<double>() / per_epoch
                                       : record.at("epoch").get<double>();
        points[i][std::round(x * 1000) / 1000].push_back(record.at("valid_ppl").get<double>());
      };
      for (const auto& e : run.at("epochs")) add(e);
      if (run.contains("evals"))
        for (const auto& e : run.at("evals")) add(e);
    }
  return points;
}

}  // namespace

std::string validation_curves(const json& emb, const RunFiles& files, const fs::path& root,
                              const fs::path& sub, CurvePanels panels) {
  const auto rows = runs_by_row(emb.at("runs"));
  const auto points = curve_points(rows, files);
  std::ostringstream data, curves;
  double last = 0;
  size_t most_points = 0;
  std::vector<double> means;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [model, mode] = rows[i].first;
    data << "# " << model << " " << mode << "\n";
    for (const auto& [x, ys] : points[i]) {
      const experiments::Spread s = experiments::spread_of(ys);
      data << x << "\t" << s.mean << "\t" << s.sd << "\n";
      means.push_back(s.mean);
    }
    data << "\n\n";
    if (!points[i].empty()) last = std::max(last, points[i].rbegin()->first);
    most_points = std::max(most_points, points[i].size());
  }
  // Evaluations every few hundred steps give a curve of many points: smaller marks, so
  // that the lines stay visible.
  const double point_size = most_points > 40 ? 0.5 : 1.1;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [model, mode] = rows[i].first;
    curves << (i ? ", " : "") << "'valid_curves.dat' index " << i
           << " using 1:2:3 with yerrorlines " << series_style(model, mode, point_size) << " title "
           << gnuplot_string(model + " " + mode);
  }
  // Early stopping watches the first valid_limit tokens of validation; the tables report the
  // whole split, so the curves say which they show.
  const size_t limit =
      emb.contains("base_config") ? config_of(emb.at("base_config")).valid_limit : 0;
  const std::string measured =
      (limit > 0 ? "first " + thousands(static_cast<double>(limit)) + " tokens; " : "") +
      "mean, sd over the seeds that ran each epoch";
  std::ostringstream script;
  script << "set xlabel 'epochs'\nset xtics " << tick_step(last) << "\n";
  const auto zoom = panels == CurvePanels::with_near_best ? near_best_range(means) : std::nullopt;
  if (!zoom) {
    script << "set ylabel 'validation perplexity (" << measured << ")'\nplot " << curves.str()
           << "\n";
    return plot(root, sub, "valid_curves", data.str(), script.str());
  }
  // Two panels, one above the other: every run, then the runs near the best, with the key.
  script << "set ylabel 'validation perplexity'\nset multiplot layout 2,1\n"
         << "set title 'all runs (" << measured << ")'\nunset key\nplot " << curves.str()
         << "\nset title 'near the best: up to " << fixed(100 * (zoom->second / zoom->first - 1), 0)
         << "% above the lowest point'\nset key below horizontal maxrows 3 spacing 1.2\n"
         << "set autoscale yfix\nset offsets graph 0.03, graph 0.03, 0, 0\n"
         << "set yrange [" << fixed(zoom->first * 0.99, 1) << ":" << fixed(zoom->second, 1)
         << "]\nplot " << curves.str() << "\nunset multiplot\n";
  return plot(root, sub, "valid_curves", data.str(), script.str(), 1000);
}

std::string data_size_plot(const json& size, const fs::path& root, const fs::path& sub) {
  std::ostringstream data, script;
  int index = 0;
  // Tics at the sizes measured, labelled like "40k".
  std::vector<double> sizes;
  for (const auto& r : size.at("rows")) sizes.push_back(r.at("train_tokens").get<double>());
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  script << "set xlabel 'training tokens'\nset ylabel 'test perplexity (mean, sd over seeds)'\n"
         << "set logscale x\nset xtics (";
  for (size_t i = 0; i < sizes.size(); ++i)
    script << (i ? ", " : "") << "'" << fixed(sizes[i] / 1000, 0) << "k' " << sizes[i];
  script << ")\nplot ";
  for (const auto& [key, rows] : runs_by_row(size.at("rows"))) {
    const auto& [model, mode] = key;
    data << "# " << model << " " << mode << "\n";
    for (const auto& q : rows)
      data << q.at("train_tokens").get<double>() << "\t"
           << q.at("test_ppl").at("mean").get<double>() << "\t"
           << q.at("test_ppl").value("std", 0.0) << "\n";
    data << "\n\n";
    script << (index ? ", " : "") << "'data_size.dat' index " << index
           << " using 1:2:3 with yerrorlines " << series_style(model, mode) << " title "
           << gnuplot_string(model + " " + mode);
    ++index;
  }
  script << "\n";
  return plot(root, sub, "data_size", data.str(), script.str());
}

std::string drift_plot(const json& life, const fs::path& root, const fs::path& sub) {
  static const char* band_colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                       "#d62728", "#7f7f7f", "#9467bd"};
  std::ostringstream data, script;
  int index = 0;
  script << "set xlabel 'epoch'\nset ylabel 'mean cosine drift from the initial row'\n"
         << "set format y '%.2f'\nset xtics 1\nplot ";
  int run_number = 0;
  for (const auto& run : life.at("runs")) {
    int band_number = 0;
    for (const auto& [band, _] : run.at("drift").at(0).at("bands").items()) {
      data << "# " << run.at("name").get<std::string>() << " " << band << "\n";
      // Every row starts where it was initialised: the curves rise from 0 at epoch 0.
      if (run.at("drift").at(0).at("epoch").get<size_t>() > 0) data << "0\t0\n";
      for (const auto& d : run.at("drift"))
        data << d.at("epoch").get<size_t>() << "\t" << d.at("bands").at(band).get<double>() << "\n";
      data << "\n\n";
      script << (index ? ", " : "") << "'drift.dat' index " << index
             << " with linespoints lw 2 lc rgb '" << band_colours[band_number % 6] << "' pt "
             << (run_number ? 5 : 7) << " dt " << (run_number ? 2 : 1) << " title "
             << gnuplot_string(run.at("name").get<std::string>() + ": " + band);
      ++index, ++band_number;
    }
    ++run_number;
  }
  script << "\n";
  return plot(root, sub, "drift", data.str(), script.str());
}

std::string norms_plot(const json& life, const fs::path& root, const fs::path& sub) {
  static const char* run_colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"};
  std::ostringstream data, script;
  int index = 0, run_number = 0;
  double last = 1;
  std::string plots;
  for (const auto& run : life.at("runs")) {
    const std::optional<TableCensus> census = TableCensus::of_run(run, "table: ");
    if (!census) continue;
    // A tied table is its own output matrix: one series.
    const bool tied = run.value("tied", false);
    for (const bool input : {true, false}) {
      if (tied && !input) continue;
      data << "# " << run.at("name").get<std::string>() << " "
           << (input ? "input_norm" : "output_norm") << "\n";
      for (const NormBin& b : census->norms_by_count) {
        const double lo = static_cast<double>(b.min_count), hi = static_cast<double>(b.max_count);
        // The unseen rows at 1/2 on the log axis (labelled 0); a bin at its geometric middle.
        const double x = hi == 0 ? 0.5 : std::sqrt(lo * hi);
        last = std::max(last, hi);
        const Quartiles& q = input ? b.input_norm : b.output_norm;
        data << x << "\t" << q.median << "\t" << q.q1 << "\t" << q.q3 << "\n";
      }
      data << "\n\n";
      plots += std::string(index ? ", " : "") + "'norms.dat' index " + std::to_string(index) +
               " using 1:2:3:4 with yerrorlines lw 2 lc rgb '" + run_colours[run_number % 4] +
               "' pt " + (input ? "7" : "5") + " dt " + (input ? "1" : "2") + " title " +
               gnuplot_string(run.at("name").get<std::string>() + (tied    ? ": the table"
                                                                   : input ? ": input rows"
                                                                           : ": output rows"));
      ++index;
    }
    ++run_number;
  }
  if (index == 0) return "";
  script << "set logscale x\nset xrange [0.35:" << last * 1.5 << "]\n"
         << "set xtics ('0' 0.5, '1' 1, '10' 10, '100' 100, '1000' 1000, '10⁴' 10000, "
            "'10⁵' 100000, '10⁶' 1000000)\n"
         << "set xlabel 'occurrences in the training split'\n"
         << "set ylabel 'row norm (median, quartiles)'\nset format y '%g'\nplot " << plots << "\n";
  return plot(root, sub, "norms", data.str(), script.str());
}

std::string effect_vs_size_plot(const std::vector<EffectSeries>& series, const fs::path& root,
                                const fs::path& sub, const EffectAxis& axis) {
  std::ostringstream data, script;
  std::set<double> measured;
  for (const EffectSeries& e : series)
    for (const auto& p : e.points) measured.insert(p[0]);
  if (series.empty() || measured.empty() || *measured.begin() <= 0) return "";
  // A tick at each measured size, labelled as the tables name it (104.2k), not only at decades.
  std::string ticks;
  for (const double x : measured)
    ticks += (ticks.empty() ? "" : ", ") + gnuplot_string(thousands(x)) + " " + std::to_string(x);
  script << "set xlabel " << gnuplot_string(axis.label) << "\n"
         << "set ylabel 'test perplexity against the reference (%, mean and 95% t interval)'\n"
         << "set logscale x\nset xtics (" << ticks << ")\nset format y '%+g'\n"
         << "set xrange [" << *measured.begin() / 1.3 << ":" << *measured.rbegin() * 1.3
         << "]\nplot 0 with lines lc rgb '#999999' "
         << "dt 2 notitle";
  int index = 0;
  for (const EffectSeries& e : series) {
    data << "# " << printable(e.effect) << "\n";
    // Each series a little to the side of the others at a shared x, so that error bars at one
    // size do not hide each other (2% apart on the log axis; the fitted lines stay in place).
    const double dodge = std::pow(1.02, index - (static_cast<double>(series.size()) - 1) / 2);
    for (const auto& p : e.points)
      data << p[0] * dodge << "\t" << p[1] << "\t" << p[2] << "\t" << p[3] << "\n";
    data << "\n\n";
    // Points and dashes tell the groups apart (the data sweep's sizes), colours the modes.
    constexpr std::pair<int, int> groups[] = {{7, 1}, {5, 2}, {9, 3}, {11, 4}, {13, 5}};
    const std::string style =
        series_style(e.mode.empty() ? e.effect : e.mode, groups[e.group % std::size(groups)]);
    script << ", " << gnuplot_string(axis.name + ".dat") << " index " << index++
           << " using 1:2:3:4 with yerrorbars " << style << " title " << gnuplot_string(e.effect);
    if (e.line)
      script << ", " << e.line->first << " + " << e.line->second << " * log10(x) with lines "
             << style << " notitle";
  }
  script << "\n";
  return plot(root, sub, axis.name, data.str(), script.str());
}

}  // namespace tg::experiments::report
