#include <sstream>

#include "experiments/report/format.hpp"
#include "experiments/report/paper.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// "| this repository: <label>, <model> <mode> (N runs, mean) | ppl ± sd |" for the row with
// the lowest mean test perplexity.
std::string best_row_line(const json& emb, const std::string& label) {
  const json* best = nullptr;
  for (const auto& r : emb.at("rows"))
    if (!best ||
        r.at("test_ppl").at("mean").get<double>() < best->at("test_ppl").at("mean").get<double>())
      best = &r;
  if (!best) return "";
  const size_t runs = best->at("runs").get<size_t>();
  std::ostringstream out;
  out << "| this repository: " << label << ", " << best->at("model").get<std::string>() << " "
      << best->at("mode").get<std::string>() << " (" << runs << (runs == 1 ? " run" : " runs, mean")
      << ") | " << mean_spread(*best, "test_ppl") << " |\n";
  return out.str();
}

}  // namespace

std::string bengio_reference_table(const json* emb, const json* longer) {
  std::ostringstream out;
  out << "| model | Brown test perplexity |\n|---|---:|\n"
      << "| Bengio et al. 2003: best neural network (MLP + trigram mixture) | "
      << fixed(kPaperBest, 0) << " |\n"
      << "| Bengio et al. 2003: best n-gram (class-based back-off) | " << fixed(kPaperBestNgram, 0)
      << " |\n"
      << "| Bengio et al. 2003: Kneser-Ney 5-gram | "
      << fixed(*paper_ngram_test(text::NgramSmoothing::kneser_ney, 5), 0) << " |\n";
  if (longer) out << best_row_line(*longer, "longer training (section 1b)");
  if (emb) {
    const std::string budget = budget_of(*emb);
    out << best_row_line(*emb,
                         "best row of section 1a" + (budget.empty() ? "" : " (" + budget + ")"));
  }
  return out.str();
}
}  // namespace tg::experiments::report
