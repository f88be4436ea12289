// The study across scale (scripts/scaling.sh): each effect of a kind of table against the
// reference arm, per seed, at every size of the model, and the straight line that effect
// follows against the logarithm of the model's body parameters; then, from the data sweep, the
// line each effect follows against the logarithm of the training tokens, size by size.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

#include "experiments/report/format.hpp"
#include "experiments/report/plots.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A summary row's test perplexity, under its mode and seed.
void add_run(Point& point, const json& run) {
  point.ppl[run.at("mode").get<std::string>()][run.at("seed").get<size_t>()] =
      run.at("test_ppl").get<double>();
}

// What a sweep's effects are fitted against, in the words its sentences use.
struct Axis {
  const char* point;    // "size"
  const char* unit;     // "body parameters"
  const char* grows;    // "as the model grows"
  const char* largest;  // "the largest size measured"
  const char* columns;  // the trend table's first three
};
constexpr Axis kBodyAxis{"size", "body parameters", "as the model grows",
                         "the largest size measured",
                         "| effect | sizes (seeds) | slope (effect per 10x body) | "};
constexpr Axis kTokensAxis{"share", "training tokens", "as the training data grows",
                           "the most data measured",
                           "| effect | shares (seeds) | slope (effect per 10x tokens) | "};

// The trend file names the size folders in order; a folder with no finished run yet is left
// out. The body is the reference arm's total less its table and output matrix (untied).
std::vector<Point> load_sizes(const fs::path& scaling, const json& trends) {
  std::vector<Point> sizes;
  const std::string reference = trends.at("reference").get<std::string>();
  for (const auto& name : trends.at("folders")) {
    const std::string folder = name.get<std::string>();
    const json summary = load_summary(scaling / folder / "summary.json");
    if (summary.is_null()) continue;
    Point size;
    double total = 0;
    for (const auto& run : summary.at("runs")) {
      add_run(size, run);
      if (run.at("mode").get<std::string>() == reference) total = run.value("total_params", 0.0);
    }
    const double vocabulary_matrices =
        2.0 * summary.at("vocab").get<double>() *
        static_cast<double>(config_of(summary.at("base_config")).model.d_model);
    size.x = total - vocabulary_matrices;
    size.header = markdown_text(folder) + " (" + thousands(size.x) + ")";
    if (size.x > 0) sizes.push_back(std::move(size));
  }
  return sizes;
}

// The whole split's training tokens, as the first of a study's run files on disk records them;
// 0 when none is there.
double whole_split_tokens(const fs::path& folder, const json& summary) {
  for (const auto& run : summary.at("runs")) {
    const fs::path file = folder / fs::path(run.value("file", std::string())).filename();
    if (const json record = load(file); record.is_object())
      return static_cast<double>(run_record(record, file).data.train_tokens);
  }
  return 0;
}

// "12.5%": a share of the training split.
std::string share_label(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", 100 * fraction);
  return text;
}

// One size of the data sweep: a point per share of data_<size>/ (by training tokens), then the
// whole split's from gpt_<size>/.
std::vector<Point> load_shares(const fs::path& scaling, const std::string& shares,
                               const std::string& whole) {
  std::map<double, Point> by_tokens;
  if (const json summary = load_summary(scaling / shares / "summary.json"); !summary.is_null())
    for (const auto& run : summary.at("runs")) {
      const double tokens = run.at("train_tokens").get<double>();
      Point& point = by_tokens[tokens];
      point.x = tokens;
      point.header = share_label(run.at("fraction").get<double>()) + " (" + thousands(tokens) + ")";
      add_run(point, run);
    }
  if (const json summary = load_summary(scaling / whole / "summary.json"); !summary.is_null())
    if (const double tokens = whole_split_tokens(scaling / whole, summary); tokens > 0) {
      Point& point = by_tokens[tokens];
      point.x = tokens;
      point.header = "100% (" + thousands(tokens) + ")";
      for (const auto& run : summary.at("runs")) add_run(point, run);
    }
  std::vector<Point> points;
  for (auto& [tokens, point] : by_tokens) points.push_back(std::move(point));
  return points;
}

// An effect at one point: per seed, test ppl(arm) / ppl(reference) - 1 over the seeds of both.
std::vector<double> effects_at(const Point& size, const std::string& arm,
                               const std::string& reference) {
  std::vector<double> out;
  const auto a = size.ppl.find(arm), r = size.ppl.find(reference);
  if (a == size.ppl.end() || r == size.ppl.end()) return out;
  for (const auto& [seed, ppl] : a->second)
    if (const auto ref = r->second.find(seed); ref != r->second.end())
      out.push_back(ppl / ref->second - 1);
  return out;
}

// Each effect's line through the points' seeds; Holm's correction is over the family (holm).
Trend fit_trend(const std::vector<Point>& points, const std::string& arm,
                const std::string& reference, double alpha) {
  Trend t{arm};
  for (const Point& point : points) {
    const std::vector<double>& effects = t.by_size.emplace_back(effects_at(point, arm, reference));
    if (effects.empty()) continue;
    ++t.sizes;
    for (double v : effects) t.x.push_back(std::log10(point.x)), t.y.push_back(v);
  }
  if (t.sizes >= 2) t.fit = fit_line(t.x, t.y, alpha);
  return t;
}

// Holm's correction over the declared family: `declared` comparisons, of which those not in
// `trends` (or with fewer than two points) count as p = 1.
void holm(std::vector<Trend*> trends, size_t declared) {
  std::vector<double> p;
  for (const Trend* t : trends) p.push_back(t->sizes >= 2 ? t->fit.p : 1.0);
  p.resize(std::max(declared, p.size()), 1.0);
  const std::vector<double> adjusted = experiments::holm_adjust(p);
  for (size_t i = 0; i < trends.size(); ++i) trends[i]->holm_p = adjusted[i];
}

std::vector<Trend> fit_trends(const std::vector<Point>& sizes, const json& trends) {
  const std::string reference = trends.at("reference").get<std::string>();
  std::vector<Trend> out;
  for (const auto& e : trends.at("effects"))
    out.push_back(fit_trend(sizes, e.get<std::string>(), reference, trends.value("alpha", 0.05)));
  std::vector<Trend*> family;
  for (Trend& t : out) family.push_back(&t);
  holm(family, family.size());
  return out;
}

// "-3.1% (-4.0 to -2.2; 5)": the mean effect at a size with its t interval over the seeds.
std::string effect_cell(const std::vector<double>& effects) {
  if (effects.empty()) return "-";
  const experiments::TInterval i = experiments::t_interval(effects);
  if (i.n < 2) return signed_percent(i.mean) + " (1 seed)";
  return signed_percent(i.mean) + " (" + signed_percent(i.low) + " to " + signed_percent(i.high) +
         "; " + std::to_string(i.n) + ")";
}

// What the line says, no more: a trend only where Holm's correction over the declared family
// finds the slope's sign; where the fit's band lies against zero over the measured sizes; and
// where the line would reach zero, named an extrapolation when it lies outside them.
std::string trend_sentence(const Trend& t, double lo, double hi, double alpha, const Axis& axis) {
  if (t.sizes == 0) return std::string("no ") + axis.point + " has run it yet";
  if (t.sizes < 2) return std::string("one ") + axis.point + " so far: no trend to fit";
  const LineFit& f = t.fit;
  const double mean =
      std::accumulate(t.y.begin(), t.y.end(), 0.0) / static_cast<double>(t.y.size());
  bool band_has_zero = false;
  for (int k = 0; k <= 50; ++k) {
    const double x = lo + (hi - lo) * k / 50.0;
    if (std::abs(f.at(x)) <= f.band_half_width(x)) band_has_zero = true;
  }
  const char* band = band_has_zero
                         ? "the fit's 95% band includes zero somewhere in the measured range"
                         : "the fit's 95% band excludes zero over the whole measured range";
  std::string s;
  if (t.holm_p >= alpha)
    // Without a trend, the effect itself is claimed only where the band keeps clear of zero.
    s = std::string(
            "no trend detected (the slope's interval, Holm included, does not exclude "
            "zero); ") +
        band +
        (band_has_zero ? ": neither a trend nor the effect itself is established"
                       : ": the effect holds over the measured range as far as these seeds can "
                         "tell");
  else
    s = ((f.slope > 0) == (mean < 0) ? std::string("the effect shrinks toward zero ") + axis.grows
                                     : std::string("the effect grows ") + axis.grows) +
        "; " + band;
  if (f.slope != 0) {
    const double x0 = -f.intercept / f.slope;
    if (x0 > hi)
      s += "; a straight-line extrapolation would reach zero at about " +
           thousands(std::pow(10, x0)) + " " + axis.unit + " (" + fixed(std::pow(10, x0 - hi), 0) +
           "x " + axis.largest + ")";
    else if (x0 >= lo)
      s += "; the fitted line crosses zero inside the measured range, at about " +
           thousands(std::pow(10, x0)) + " " + axis.unit;
  }
  return s;
}

std::string trend_table(const std::vector<Trend>& trends, double lo, double hi, double alpha,
                        const Axis& axis) {
  std::ostringstream md;
  md << axis.columns
     << "95% t interval | p | Holm p | what the line says |\n|---|---:|---:|---:|---:|---:|---|\n";
  for (const Trend& t : trends) {
    md << "| " << markdown_text(t.effect) << " | " << t.sizes << " (" << t.y.size() << ") | ";
    if (t.sizes < 2)
      md << "- | - | - | - | ";
    else
      md << signed_percent(t.fit.slope) << " | " << signed_percent(t.fit.slope_low) << " to "
         << signed_percent(t.fit.slope_high) << " | " << p_value(t.fit.p) << " | "
         << p_value(t.holm_p) << " | ";
    md << trend_sentence(t, lo, hi, alpha, axis) << " |\n";
  }
  return md.str();
}

std::string effects_table(const std::vector<Point>& sizes, const std::vector<Trend>& trends) {
  std::ostringstream md;
  md << "| effect |";
  for (const Point& s : sizes) md << " " << s.header << " |";
  md << "\n|---|";
  for (size_t i = 0; i < sizes.size(); ++i) md << "---:|";
  md << "\n";
  for (const Trend& t : trends) {
    md << "| " << markdown_text(t.effect) << " |";
    for (const std::vector<double>& effects : t.by_size) md << " " << effect_cell(effects) << " |";
    md << "\n";
  }
  return md.str();
}

// Each trend's points with their seed intervals, and its line.
void add_series(std::vector<EffectSeries>& series, const std::vector<Point>& points, const Trend& t,
                const std::string& mode = {}, size_t group = 0) {
  EffectSeries e{t.effect};
  e.mode = mode;
  e.group = group;
  for (size_t k = 0; k < points.size(); ++k) {
    if (t.by_size[k].empty()) continue;
    const experiments::TInterval i = experiments::t_interval(t.by_size[k]);
    e.points.push_back({points[k].x, 100 * i.mean, 100 * i.low, 100 * i.high});
  }
  if (t.sizes >= 2) e.line = std::pair{100 * t.fit.intercept, 100 * t.fit.slope};
  if (!e.points.empty()) series.push_back(std::move(e));
}

// A trend file is read like any results file: its names become paths and Markdown.
void check_names(const json& trends, const fs::path& file, std::vector<const char*> lists) {
  for (const char* key : lists) {
    if (!trends.contains(key) || !trends.at(key).is_array())
      throw std::runtime_error(file.string() + ": no '" + key + "' list");
    for (const auto& v : trends.at(key)) checked_name(v, file, key);
  }
  checked_name(trends.value("reference", json()), file, "reference");
}

// trends_data.json's sizes: {"d64": {"shares": "data_d64", "whole": "gpt_d64"}, ...}.
void check_data_sizes(const json& trends, const fs::path& file) {
  if (!trends.contains("sizes") || !trends.at("sizes").is_object())
    throw std::runtime_error(file.string() + ": no 'sizes' object");
  for (const auto& [size, folders] : trends.at("sizes").items()) {
    checked_name(size, file, "sizes");
    for (const char* key : {"shares", "whole"}) {
      if (!folders.is_object() || !folders.contains(key))
        throw std::runtime_error(file.string() + ": size '" + printable(size) + "' has no '" + key +
                                 "' folder");
      checked_name(folders.at(key), file, "sizes");
    }
  }
}

// The data sweep rendered from data_trends.
std::string data_trends_section(const fs::path& dir, bool plots) {
  const DataTrends found = data_trends(dir);
  const bool any_share =
      std::ranges::any_of(found.points, [](const auto& p) { return p.size() >= 2; });
  if (!any_share) return "";
  const json& trends = found.declaration;
  std::ostringstream md;
  md << "\n### Against the training data\n\n"
     << "The data sweep (`scaling/data_<size>/`): the same arms on a share of the training split, "
        "as many tokens seen as a whole-split run (a share f trains up to 12 / f epochs), the "
        "whole split's point from `gpt_<size>/`. Each effect as above, at each share; the "
        "header gives the share and its training tokens:\n\n";
  std::vector<EffectSeries> series;
  for (size_t k = 0; k < found.points.size(); ++k) {
    const std::vector<Point>& points = found.points[k];
    if (points.empty()) continue;
    const auto [lo, hi] = std::ranges::minmax(points, {}, &Point::x);
    md << effects_table(points, found.trends[k]) << "\n"
       << trend_table(found.trends[k], std::log10(lo.x), std::log10(hi.x), found.alpha, kTokensAxis)
       << "\n";
    for (size_t e = 0; e < found.trends[k].size(); ++e)
      add_series(series, points, found.trends[k][e], trends.at("effects").at(e), k);
  }
  md << "Each line is fitted against log10 training tokens (one point per seed and share); Holm's "
        "correction is over the "
     << found.family << " slopes `scaling/trends_data.json` declared before the sweep's runs ("
     << markdown_text(trends.value("declared", std::string("no date"))) << ", commit "
     << markdown_code(trends.value("commit", std::string("unknown"))) << ").\n\n";
  if (plots)
    md << effect_vs_size_plot(series, dir, "scaling", {"training tokens", "effects_by_data"});
  return md.str();
}

}  // namespace

SizeTrends size_trends(const fs::path& dir) {
  const fs::path file = dir / "scaling" / "trends.json";
  SizeTrends out{load(file)};
  if (out.declaration.is_null()) return out;
  check_names(out.declaration, file, {"folders", "effects"});
  out.sizes = load_sizes(dir / "scaling", out.declaration);
  if (!out.sizes.empty()) out.trends = fit_trends(out.sizes, out.declaration);
  return out;
}

DataTrends data_trends(const fs::path& dir) {
  const fs::path file = dir / "scaling" / "trends_data.json";
  DataTrends out{load(file)};
  const json& trends = out.declaration;
  if (trends.is_null()) return out;
  check_names(trends, file, {"effects"});
  check_data_sizes(trends, file);
  const std::string reference = trends.at("reference").get<std::string>();
  out.alpha = trends.value("alpha", 0.05);
  for (const auto& [size, folders] : trends.at("sizes").items()) {
    out.sizes.push_back(size);
    out.points.push_back(load_shares(dir / "scaling", folders.at("shares").get<std::string>(),
                                     folders.at("whole").get<std::string>()));
    std::vector<Trend>& fitted = out.trends.emplace_back();
    for (const auto& e : trends.at("effects"))
      fitted.push_back(fit_trend(out.points.back(), e.get<std::string>(), reference, out.alpha));
    for (Trend& t : fitted) t.effect += " at " + size;
  }
  std::vector<Trend*> family;
  for (auto& size : out.trends)
    for (Trend& t : size) family.push_back(&t);
  out.family = std::max(family.size(), trends.value("family", family.size()));
  holm(family, out.family);
  return out;
}

std::string scaling_section(const fs::path& dir, bool plots) {
  const SizeTrends found = size_trends(dir);
  if (found.sizes.empty()) return "";
  const json& trends = found.declaration;
  const std::vector<Point>& sizes = found.sizes;
  const std::vector<Trend>& fitted = found.trends;
  const std::string reference = trends.at("reference").get<std::string>();
  const double alpha = trends.value("alpha", 0.05);
  const auto [lo, hi] = std::ranges::minmax(sizes, {}, &Point::x);
  std::ostringstream md;
  md << "## The study across scale\n\n"
     << "`scaling/` (`scripts/scaling.sh`; the search for each size's learning rate and the state "
        "of the sweep: `scaling/README.md`): the GPT at "
     << sizes.size() << " size" << (sizes.size() == 1 ? "" : "s")
     << " so far, body parameters (all but the vocabulary matrices) "
     << (sizes.size() == 1 ? thousands(lo.x) : thousands(lo.x) + " to " + thousands(hi.x))
     << ". Each effect is, seed by seed, test perplexity of the "
        "row over that of `"
     << markdown_text(reference)
     << "` at the same size and seed, less 1 (negative: the row predicts better): its mean and "
        "95% t interval over the seeds (their number after the semicolon), the size's body "
        "parameters in the header:\n\n"
     << effects_table(sizes, fitted)
     << "\nEach effect's per-seed values fitted by least squares against log10 body parameters "
        "(one point per seed and size): the slope is the change of the effect per tenfold "
        "body, with its Student t interval (n - 2 degrees of freedom); its p is Holm-corrected "
        "over the "
     << fitted.size() << " effects that `scaling/trends.json` declared before the sweep's runs ("
     << markdown_text(trends.value("declared", std::string("no date"))) << ", commit "
     << markdown_code(trends.value("commit", std::string("unknown"))) << "):\n\n"
     << trend_table(fitted, std::log10(lo.x), std::log10(hi.x), alpha, kBodyAxis) << "\n";
  if (plots) {
    std::vector<EffectSeries> series;
    for (const Trend& t : fitted) add_series(series, sizes, t);
    md << effect_vs_size_plot(
        series, dir, "scaling",
        {"body parameters (all but the vocabulary matrices)", "effects_by_size"});
  }
  return md.str() + search_table(dir, "scaling/lr", "size", "scripts/scaling.sh --parts lr") +
         data_trends_section(dir, plots);
}

}  // namespace tg::experiments::report
