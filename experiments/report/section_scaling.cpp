// The study across scale (scripts/scaling.sh): each effect of a kind of table against the
// reference arm, per seed, at every size of the model, and the straight line that effect
// follows against the logarithm of the model's body parameters.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>

#include "base/enum_names.hpp"
#include "experiments/report/format.hpp"
#include "experiments/report/plots.hpp"
#include "experiments/report/sections.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// One size's runs: its body (every parameter but the vocabulary matrices) and each mode's test
// perplexity by seed.
struct Size {
  std::string folder;
  double body = 0;
  std::map<std::string, std::map<size_t, double>> ppl = {};
};

// The trend file names the size folders in order; a folder with no finished run yet is left
// out. The body is the reference arm's total less its table and output matrix (untied).
std::vector<Size> load_sizes(const fs::path& scaling, const json& trends) {
  std::vector<Size> sizes;
  const std::string reference = trends.at("reference").get<std::string>();
  for (const auto& name : trends.at("folders")) {
    const std::string folder = name.get<std::string>();
    const json summary = load_summary(scaling / folder / "summary.json");
    if (summary.is_null()) continue;
    Size size{folder};
    double total = 0;
    for (const auto& run : summary.at("runs")) {
      const std::string mode = run.at("mode").get<std::string>();
      size.ppl[mode][run.at("seed").get<size_t>()] = run.at("test_ppl").get<double>();
      if (mode == reference) total = run.value("total_params", 0.0);
    }
    const double vocabulary_matrices =
        2.0 * summary.at("vocab").get<double>() *
        static_cast<double>(config_of(summary.at("base_config")).model.d_model);
    size.body = total - vocabulary_matrices;
    if (size.body > 0) sizes.push_back(std::move(size));
  }
  return sizes;
}

// An effect at one size: per seed, test ppl(arm) / ppl(reference) - 1 over the seeds of both.
std::vector<double> effects_at(const Size& size, const std::string& arm,
                               const std::string& reference) {
  std::vector<double> out;
  const auto a = size.ppl.find(arm), r = size.ppl.find(reference);
  if (a == size.ppl.end() || r == size.ppl.end()) return out;
  for (const auto& [seed, ppl] : a->second)
    if (const auto ref = r->second.find(seed); ref != r->second.end())
      out.push_back(ppl / ref->second - 1);
  return out;
}

struct Trend {
  std::string effect;
  std::vector<std::vector<double>> by_size = {};  // effects_at each size, in the sizes' order
  std::vector<double> x = {}, y = {};             // log10 body parameters, per-seed effect
  size_t sizes = 0;
  LineFit fit = {};
  double holm_p = 1;
};

std::vector<Trend> fit_trends(const std::vector<Size>& sizes, const json& trends) {
  const std::string reference = trends.at("reference").get<std::string>();
  std::vector<Trend> out;
  for (const auto& e : trends.at("effects")) {
    Trend t{e.get<std::string>()};
    for (const Size& size : sizes) {
      const std::vector<double>& effects =
          t.by_size.emplace_back(effects_at(size, t.effect, reference));
      if (effects.empty()) continue;
      ++t.sizes;
      for (double v : effects) t.x.push_back(std::log10(size.body)), t.y.push_back(v);
    }
    if (t.sizes >= 2) t.fit = fit_line(t.x, t.y, trends.value("alpha", 0.05));
    out.push_back(std::move(t));
  }
  std::vector<double> p;
  for (const Trend& t : out) p.push_back(t.sizes >= 2 ? t.fit.p : 1.0);
  const std::vector<double> adjusted = experiments::holm_adjust(p);
  for (size_t i = 0; i < out.size(); ++i) out[i].holm_p = adjusted[i];
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
std::string trend_sentence(const Trend& t, double lo, double hi, double alpha) {
  if (t.sizes == 0) return "no size has run it yet";
  if (t.sizes < 2) return "one size so far: no trend to fit";
  const LineFit& f = t.fit;
  const double mean =
      std::accumulate(t.y.begin(), t.y.end(), 0.0) / static_cast<double>(t.y.size());
  std::string s = t.holm_p >= alpha ? "no trend detected (the slope's interval, Holm included, "
                                      "does not exclude zero): the effect holds as far as these "
                                      "seeds can tell"
                  : (f.slope > 0) == (mean < 0)
                      ? "the effect shrinks toward zero as the model grows"
                      : "the effect grows as the model grows";
  bool band_has_zero = false;
  for (int k = 0; k <= 50; ++k) {
    const double x = lo + (hi - lo) * k / 50.0;
    if (std::abs(f.at(x)) <= f.band_half_width(x)) band_has_zero = true;
  }
  s += band_has_zero ? "; the fit's 95% band includes zero somewhere in the measured range"
                     : "; the fit's 95% band excludes zero over the whole measured range";
  if (f.slope != 0) {
    const double x0 = -f.intercept / f.slope;
    if (x0 > hi)
      s += "; a straight-line extrapolation would reach zero at about " +
           thousands(std::pow(10, x0)) + " body parameters (" + fixed(std::pow(10, x0 - hi), 0) +
           "x the largest size measured)";
    else if (x0 >= lo)
      s += "; the fitted line crosses zero inside the measured range, at about " +
           thousands(std::pow(10, x0)) + " body parameters";
  }
  return s;
}

std::string trend_table(const std::vector<Trend>& trends, double lo, double hi, double alpha) {
  std::ostringstream md;
  md << "| effect | sizes (seeds) | slope (effect per 10x body) | 95% t interval | p | Holm p | "
        "what the line says |\n|---|---:|---:|---:|---:|---:|---|\n";
  for (const Trend& t : trends) {
    md << "| " << markdown_text(t.effect) << " | " << t.sizes << " (" << t.y.size() << ") | ";
    if (t.sizes < 2)
      md << "- | - | - | - | ";
    else
      md << signed_percent(t.fit.slope) << " | " << signed_percent(t.fit.slope_low) << " to "
         << signed_percent(t.fit.slope_high) << " | " << p_value(t.fit.p) << " | "
         << p_value(t.holm_p) << " | ";
    md << trend_sentence(t, lo, hi, alpha) << " |\n";
  }
  return md.str();
}

std::string effects_table(const std::vector<Size>& sizes, const std::vector<Trend>& trends) {
  std::ostringstream md;
  md << "| effect |";
  for (const Size& s : sizes)
    md << " " << markdown_text(s.folder) << " (" << thousands(s.body) << ") |";
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

std::string plot_of(const std::vector<Size>& sizes, const std::vector<Trend>& trends,
                    const fs::path& dir) {
  std::vector<EffectSeries> series;
  for (const Trend& t : trends) {
    EffectSeries e{t.effect};
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (t.by_size[k].empty()) continue;
      const experiments::TInterval i = experiments::t_interval(t.by_size[k]);
      e.points.push_back({sizes[k].body, 100 * i.mean, 100 * i.low, 100 * i.high});
    }
    if (t.sizes >= 2) e.line = std::pair{100 * t.fit.intercept, 100 * t.fit.slope};
    if (!e.points.empty()) series.push_back(std::move(e));
  }
  return effect_vs_size_plot(series, dir, "scaling");
}

// The trend file is read like any results file: its names become paths and Markdown, so each
// must be a plain name (base/enum_names.hpp), never "..", a separator or markup.
void check_names(const json& trends, const fs::path& file) {
  const auto names = [&](const char* key) {
    std::vector<std::string> out;
    if (!trends.contains(key) || !trends.at(key).is_array())
      throw std::runtime_error(file.string() + ": no '" + key + "' list");
    for (const auto& v : trends.at(key))
      out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    return out;
  };
  for (const char* key : {"folders", "effects"})
    for (const std::string& name : names(key))
      if (!base::plain_name(name))
        throw std::runtime_error(file.string() + ": '" + printable(name) + "' in '" + key +
                                 "' is not a name (" + base::kPlainNameRule + ")");
  if (!base::plain_name(trends.value("reference", std::string())))
    throw std::runtime_error(file.string() + ": its 'reference' is not a name");
}

}  // namespace

std::string scaling_section(const fs::path& dir, bool plots) {
  const fs::path file = dir / "scaling" / "trends.json";
  const json trends = load(file);
  if (trends.is_null()) return "";
  check_names(trends, file);
  const std::vector<Size> sizes = load_sizes(dir / "scaling", trends);
  if (sizes.empty()) return "";
  const std::string reference = trends.at("reference").get<std::string>();
  const double alpha = trends.value("alpha", 0.05);
  const std::vector<Trend> fitted = fit_trends(sizes, trends);
  const auto [lo, hi] = std::ranges::minmax(sizes, {}, &Size::body);
  std::ostringstream md;
  md << "## The study across scale\n\n"
     << "`scaling/` (`scripts/scaling.sh`; the search for each size's learning rate and the state "
        "of the sweep: `scaling/README.md`): the GPT at "
     << sizes.size() << " size" << (sizes.size() == 1 ? "" : "s")
     << " so far, body parameters (all but the vocabulary matrices) "
     << (sizes.size() == 1 ? thousands(lo.body) : thousands(lo.body) + " to " + thousands(hi.body))
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
     << trend_table(fitted, std::log10(lo.body), std::log10(hi.body), alpha) << "\n";
  if (plots) md << plot_of(sizes, fitted, dir);
  return md.str();
}

}  // namespace tg::experiments::report
