#include <sstream>

#include "experiments/report/format.hpp"
#include "experiments/report/plots.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

std::string short_embeddings_section(const json& emb, const fs::path& dir, bool plots) {
  if (emb.is_null()) return "";
  std::ostringstream md;
  const std::string budget = budget_of(emb);
  md << "## 1a. A short budget: the same comparison" << (budget.empty() ? "" : " after " + budget)
     << "\n\n"
     << data_line(emb) << "\n\n"
     << "These runs stop after " << (budget.empty() ? "a fixed budget" : budget)
     << ", far from convergence: their ranking of the modes need not be the converged study's "
        "(section 1 of the full profile, `scripts/reproduce.sh --full`, where every mode trains "
        "to early stopping).\n\n";
  if (emb.contains("word2vec"))
    md << "word2vec (skip-gram, trained on the training split only): WordSim-353 Spearman "
       << score(emb.at("word2vec").at("wordsim353")) << ", "
       << fixed(emb.at("word2vec").at("seconds").get<double>(), 1) << " s.\n\n";
  md << embeddings_table(emb)
     << "\nppl = perplexity; mean ± sample standard deviation over seeds. Valid/test: full "
        "splits with the parameters of the best validation epoch; train ppl: first 50,000 "
        "training tokens in evaluation mode (a gap between train and valid ppl shows "
        "over-fitting). Wall time includes evaluation.\n\n";
  if (plots) {
    const FolderFiles folder = read_folder(dir / "embeddings");
    md << validation_curves(emb, load_run_files(runs_by_row(emb.at("runs")), folder), dir,
                            "embeddings");
  }
  return md.str();
}

std::string longer_training_section(const json& longer) {
  if (longer.is_null()) return "";
  return "## 1b. Longer training\n\n"
         "`scripts/reproduce.sh --target`, results in `target/`: " +
         training_setup(longer) + "\n\n" + embeddings_table(longer) + "\n";
}

std::string reference_section(const json& emb, const json& longer) {
  // A study of another corpus is not set beside the paper's Brown rows.
  const bool emb_brown = !emb.is_null() && on_brown(emb),
             longer_brown = !longer.is_null() && on_brown(longer);
  const std::string elsewhere =
      (!emb.is_null() && !emb_brown) || (!longer.is_null() && !longer_brown)
          ? "This study trained on its own corpus (--corpus-file), not "
            "on Brown: its rows are not comparable with these.\n\n"
          : "";
  return std::string(emb_brown || longer_brown || emb.is_null()
                         ? "## Reference: Bengio et al. (2003) on the same protocol\n\n"
                         : "## Reference: Bengio et al. (2003) on Brown\n\n") +
         elsewhere +
         bengio_reference_table(emb_brown ? &emb : nullptr, longer_brown ? &longer : nullptr) +
         "\n";
}

std::string short_data_size_section(const json& size, bool after_converged, const fs::path& dir,
                                    bool plots) {
  if (size.is_null()) return "";
  return std::string(after_converged ? "## 2a. How much data: a short budget\n\n"
                                     : "## 2. How much data: where does pretraining help?\n\n") +
         data_line(size) + "\n\n" + data_size_table(size) + "\n" +
         (plots ? data_size_plot(size, dir, "data_size") : "");
}

namespace {

// A converged life cycle under `heading`, from converged/<folder>.
std::string life_cycle_at_convergence(const std::string& heading, const std::string& folder,
                                      const json& life, const fs::path& dir, bool plots) {
  if (life.is_null()) return "";
  const fs::path sub = fs::path("converged") / folder;
  return heading + "\n\n`converged/" + folder + "/`: " + training_setup(life) + " Seed " +
         std::to_string(config_of(life.at("base_config")).seed) + ".\n\n" +
         lifecycle_section(life) +
         (plots ? drift_plot(life, dir, sub) + norms_plot(life, dir, sub) : "");
}

}  // namespace

std::string converged_lifecycle_section(const json& life, const fs::path& dir, bool plots) {
  return life_cycle_at_convergence("## 3. The life cycle of an embedding table (at convergence)",
                                   "lifecycle", life, dir, plots);
}

std::string gpt2_lifecycle_section(const json& life, const fs::path& dir, bool plots) {
  return life_cycle_at_convergence(
      "## 3d. The life cycle of GPT-2's 50,257-row table (at convergence)", "lifecycle_gpt2", life,
      dir, plots);
}

std::string short_lifecycle_section(const json& life, bool after_converged, const fs::path& dir,
                                    bool plots) {
  if (life.is_null()) return "";
  // Alone, the short life cycle still says it is short, so no one takes it for a converged one.
  std::string md = after_converged
                       ? "## 3a. The life cycle: a short budget\n\n"
                       : "## 3. The life cycle of an embedding table: a short budget\n\n"
                         "Not yet run at convergence (`scripts/converged.sh --parts "
                         "lifecycle`).\n\n";
  md += data_line(life) + "\n\n";
  if (const std::string setup = training_setup(life); !setup.empty()) md += setup + "\n\n";
  return md + lifecycle_section(life) +
         (plots ? drift_plot(life, dir, "lifecycle") + norms_plot(life, dir, "lifecycle") : "");
}

}  // namespace tg::experiments::report
