// Words against subwords, fairly (scripts/subwords.sh): per-word test perplexity of each arm
// of the GPT reading words against the same arm reading subwords under settings chosen for
// its tokens, as results/subwords/comparisons.json declared before the runs.
#include <cmath>
#include <sstream>

#include "experiments/report/format.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"
#include "experiments/significance.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The arm's per-word test perplexities by seed in a study folder ("test_ppl" where a run reads
// words: a word is its token).
std::vector<double> per_word(const json& summary, const std::string& arm) {
  std::vector<double> out;
  if (summary.is_null()) return out;
  for (const auto& run : summary.at("runs"))
    if (run.at("mode").get<std::string>() == arm)
      out.push_back(run.value("test_ppl_per_word", run.at("test_ppl")).get<double>());
  return out;
}

struct Row {
  std::string arm, tokenization;
  std::vector<double> words = {}, subwords = {};  // log per-word perplexity by seed
  TTest test = {};
  TInterval difference = {};  // mean log subwords - mean log words, Welch's 95% interval
  double holm_p = 1;
};

void compare(Row& r, double alpha) {
  if (r.words.empty() || r.subwords.empty()) return;
  r.test = welch_t_test(r.subwords, r.words);
  r.difference = welch_interval(r.subwords, r.words, alpha);
}

std::string verdict(const Row& r, double alpha) {
  if (r.subwords.empty()) return "no run yet";
  if (r.words.size() < 2 || r.subwords.size() < 2) return "fewer than two seeds a side: not tested";
  if (r.holm_p >= alpha) return "not decided";
  return r.difference.mean > 0 ? "words lower" : "subwords lower";
}

// "+4.1% (+1.0% to +7.3%)": exp of the log difference, less 1.
std::string ratio_cell(const Row& r) {
  const auto pct = [](double log_ratio) { return signed_percent(std::exp(log_ratio) - 1); };
  return r.words.size() < 2 || r.subwords.size() < 2
             ? pct(r.difference.mean)
             : pct(r.difference.mean) + " (" + pct(r.difference.low) + " to " +
                   pct(r.difference.high) + ")";
}

std::string mean_cell(const std::vector<double>& logs) {
  if (logs.empty()) return "-";
  return fixed(std::exp(t_interval(logs).mean), 1) + " (" + std::to_string(logs.size()) + ")";
}

}  // namespace

std::string subwords_section(const fs::path& dir) {
  const fs::path file = dir / "subwords" / "comparisons.json";
  const json declared = load(file);
  if (declared.is_null()) return "";
  // Folder names may have one level ("converged/gpt").
  const auto folder_name = [&](const json& v, const std::string& what) {
    return checked_name(v, file, what, true);
  };
  const double alpha = declared.value("alpha", 0.05);
  const json words =
      load_summary(dir / folder_name(declared.at("words"), "words") / "summary.json");
  std::vector<Row> rows;
  bool any_subwords = false;
  for (const auto& [tokenization, folder] : declared.at("tokenizations").items()) {
    const json sub = load_summary(dir / folder_name(folder, "tokenizations") / "summary.json");
    any_subwords = any_subwords || !sub.is_null();
    for (const auto& arm : declared.at("arms")) {
      Row r{checked_name(arm, file, "arms"), checked_name(tokenization, file, "tokenizations")};
      for (double p : per_word(words, r.arm)) r.words.push_back(std::log(p));
      for (double p : per_word(sub, r.arm)) r.subwords.push_back(std::log(p));
      compare(r, alpha);
      rows.push_back(std::move(r));
    }
  }
  const std::string search =
      search_table(dir, "subwords/lr", "tokenization", "scripts/subwords.sh --parts lr");
  if (!any_subwords) return search.empty() ? "" : "## Words against subwords, fairly\n\n" + search;
  std::vector<double> p;
  for (const Row& r : rows) p.push_back(r.test.p);
  p.resize(std::max<size_t>(p.size(), declared.value("family", p.size())), 1.0);
  const std::vector<double> adjusted = holm_adjust(p);
  for (size_t i = 0; i < rows.size(); ++i) rows[i].holm_p = adjusted[i];
  std::ostringstream md;
  md << "## Words against subwords, fairly\n\n"
     << "`subwords/` (`scripts/subwords.sh`, `subwords/README.md`): the GPT of `"
     << markdown_text(declared.at("words").get<std::string>())
     << "/` reading subword tokens under settings chosen for them (a context and validation of "
        "as many words as the word model's, an epoch cap and learning rate of their own). Per-word "
        "test "
        "perplexity, mean over seeds (their number in brackets); the difference is subwords "
        "over words, less 1, from the mean log perplexities, with its 95% Welch t interval; p "
        "from Welch's test (seeds of two folders are not paired), Holm-corrected over the "
     << p.size() << " comparisons `subwords/comparisons.json` declared before the runs ("
     << markdown_text(declared.value("declared", std::string("no date"))) << ", commit "
     << markdown_code(declared.value("commit", std::string("unknown"))) << "):\n\n"
     << "| arm | tokenization | words | subwords | subwords against words | p | Holm p | "
        "verdict |\n|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const Row& r : rows) {
    const bool tested = r.words.size() >= 2 && r.subwords.size() >= 2;
    md << "| " << markdown_text(r.arm) << " | " << markdown_text(r.tokenization) << " | "
       << mean_cell(r.words) << " | " << mean_cell(r.subwords) << " | "
       << (r.subwords.empty() || r.words.empty() ? "-" : ratio_cell(r)) << " | "
       << (tested ? p_value(r.test.p) + " | " + p_value(r.holm_p) : std::string("- | -")) << " | "
       << verdict(r, alpha) << " |\n";
  }
  return md.str() + "\n" + search;
}

}  // namespace tg::experiments::report
