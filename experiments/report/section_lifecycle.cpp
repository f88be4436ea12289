#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <optional>
#include <sstream>

#include "experiments/lifecycle_probe.hpp"
#include "experiments/report/format.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"
#include "train/optimizers.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A ROC AUC of the under-trained search, or `undefined` where it is NaN (null in the file): a
// training split with every token leaves nothing to detect.
std::string auc_text(double auc, const std::string& undefined = "-") {
  return std::isnan(auc) ? undefined : fixed(auc, 3);
}

// A low norm's ROC AUC as a detector; below one half the ranking is the other way round (a
// tied table's never-seen rows grow the largest norms), which the reader is told outright.
std::string norm_auc(double auc) {
  return auc_text(auc) +
         (auc < 0.5 ? ", the other way round: a high norm finds them with " + fixed(1 - auc, 3)
                    : "");
}

// What became of the table's rows (LifecycleProbe::census).
std::string table_census(const TableCensus& t) {
  std::ostringstream out;
  out << "Rows: " << t.rows << "; in the training split " << t.rows_in_training
      << "; given a gradient at some step "
      << (t.rows_with_gradient ? std::to_string(*t.rows_with_gradient)
                               : std::string("(not counted: resumed from an older checkpoint)"))
      << ". Of the " << t.unseen_rows << " rows the training split never has, "
      << t.unseen_rows_unchanged << " are bitwise as initialised; their mean cosine drift "
      << fixed(t.unseen_rows_drift, 3) << ".\n\n";
  out << "Row norms by training count (median [quartiles]):\n\n| count | rows | input row | "
         "output row |\n|---|---:|---:|---:|\n";
  const auto cell = [](const Quartiles& q) {
    return fixed(q.median, 3) + " [" + fixed(q.q1, 3) + ", " + fixed(q.q3, 3) + "]";
  };
  for (const NormBin& b : t.norms_by_count)
    out << "| "
        << (b.min_count == b.max_count
                ? std::to_string(b.min_count)
                : std::to_string(b.min_count) + "-" + std::to_string(b.max_count))
        << " | " << b.rows << " | " << cell(b.input_norm) << " | " << cell(b.output_norm) << " |\n";
  out << "\n";
  if (!t.under_trained) return out.str();
  const UnderTrained& u = *t.under_trained;
  out << "Under-trained tokens from the tables alone (Land and Bartolo 2024): each output row's "
         "cosine to the mean of the "
      << u.reference
      << " unreachable tokens' rows (centred, first principal component removed). As a detector "
         "of the tokens the training split never has: ROC AUC "
      << auc_text(u.auc_output_cosine, "undefined (the training split has every token)")
      << " (a low input-row norm: " << norm_auc(u.auc_low_input_norm)
      << "). At the reference's 10th percentile it flags " << u.flagged << " tokens, "
      << u.flagged_unseen << " of them unseen (recall " << fixed(100 * u.recall, 1) << "%)";
  std::string seen;
  for (const FlaggedToken& e : u.flagged_seen)
    seen +=
        (seen.empty() ? "" : ", ") + markdown_text(e.token) + " (" + std::to_string(e.count) + ")";
  out << (seen.empty() ? "."
                       : "; the top flagged tokens that do occur (training count): " + seen + ".")
      << "\n\n";
  return out.str();
}

// The runs' censuses side by side, when two or more runs measured one: which rows a table's
// training ever reaches, and what becomes of the others, untied and tied.
std::string census_comparison(const json& runs) {
  std::vector<std::pair<const json*, TableCensus>> with;
  for (const auto& run : runs)
    if (std::optional<TableCensus> t = TableCensus::of_run(run, "table: "))
      with.emplace_back(&run, std::move(*t));
  if (with.size() < 2) return "";
  std::ostringstream out;
  out << "The tables' rows in each run (the tied table is also the output matrix, whose softmax "
         "gives every row a gradient at every step):\n\n|";
  for (const auto& [run, t] : with)
    out << " | " << markdown_text(run->at("name").get<std::string>());
  out << " |\n|---|";
  for (size_t i = 0; i < with.size(); ++i) out << "---:|";
  out << "\n";
  const auto row = [&](const char* what,
                       const std::function<std::string(const TableCensus&)>& cell) {
    out << "| " << what << " |";
    for (const auto& [run, t] : with) out << " " << cell(t) << " |";
    out << "\n";
  };
  row("rows", [](const TableCensus& t) { return grouped(t.rows); });
  row("rows given a gradient at some step", [](const TableCensus& t) {
    return t.rows_with_gradient ? grouped(*t.rows_with_gradient) : std::string("-");
  });
  row("rows the training split never has",
      [](const TableCensus& t) { return grouped(t.unseen_rows); });
  row("of those, bitwise as initialised",
      [](const TableCensus& t) { return grouped(t.unseen_rows_unchanged); });
  row("their mean cosine drift from initialisation",
      [](const TableCensus& t) { return fixed(t.unseen_rows_drift, 3); });
  row("their median input-row norm", [](const TableCensus& t) {
    const std::optional<double> norm = t.unseen_input_norm();
    return norm ? fixed(*norm, 3) : std::string("-");
  });
  row("under-trained search: ROC AUC for them", [](const TableCensus& t) {
    return t.under_trained ? auc_text(t.under_trained->auc_output_cosine) : std::string("-");
  });
  out << "| test perplexity |";
  for (const auto& [run, t] : with)
    out << " " << fixed(run->at("test_ppl").get<double>(), 1) << " |";
  out << "\n\n";
  return out.str();
}

// A run's cosine drift from initialisation, epoch by epoch and frequency band by band.
std::string drift_table(const json& run) {
  std::ostringstream out;
  out << "Cosine drift of each row from its initial value (mean of 1 - cos), by training-set "
         "frequency:\n\n| epoch |";
  std::vector<std::string> bands;
  for (const auto& [band, _] : run.at("drift").at(0).at("bands").items()) bands.push_back(band);
  for (const auto& b : bands) out << " " << b << " |";
  out << "\n|---:|";
  for (size_t i = 0; i < bands.size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& d : run.at("drift")) {
    out << "| " << d.at("epoch").get<size_t>() << " |";
    for (const auto& b : bands) out << " " << fixed(d.at("bands").at(b).get<double>(), 3) << " |";
    out << "\n";
  }
  out << "\nBand sizes (rows):";
  for (const auto& [band, n] : run.at("band_sizes").items())
    out << " " << band << " " << n.get<size_t>() << ";";
  out << "\n\n";
  return out.str();
}

// The probe words' nearest neighbours before and after training, and in word2vec's vectors.
std::string neighbours_table(const json& run) {
  std::ostringstream out;
  out << "Nearest neighbours of probe words (input embeddings):\n\n| word | before training "
         "| after training | word2vec |\n|---|---|---|---|\n";
  for (const auto& p : run.at("neighbours")) {
    auto list = [](const json& words) {
      std::string s;
      for (const auto& w : words)
        s += (s.empty() ? "" : ", ") + markdown_text(w.get<std::string>());
      return s.empty() ? std::string("(not in vocabulary)") : s;
    };
    out << "| " << markdown_text(p.at("word").get<std::string>()) << " | " << list(p.at("before"))
        << " | " << list(p.at("after")) << " | " << list(p.at("word2vec")) << " |\n";
  }
  out << "\n";
  return out.str();
}

}  // namespace

std::string lifecycle_section(const json& s) {
  std::ostringstream out;
  out << census_comparison(s.at("runs"));
  for (const auto& run : s.at("runs")) {
    const std::string name = markdown_text(run.at("name").get<std::string>());
    out << "#### " << name << "\n\n";
    out << "- rows of the input table with a non-zero gradient per step: mean "
        << fixed(100 * run.at("rows_per_step_mean").get<double>(), 2) << "% (of "
        << run.at("vocab").get<size_t>() << "); over each epoch:";
    for (const auto& e : run.at("rows_per_epoch"))
      out << " " << fixed(100 * e.get<double>(), 1) << "%";
    out << "\n";
    if (const json changed = run.value("rows_changed_per_step_mean", json()); changed.is_number())
      out << "- rows of the input table whose values a step changed (bitwise): mean "
          << fixed(100 * changed.get<double>(), 2) << "%\n";
    if (run.contains("best_epoch"))
      out << "- best validation after epoch " << run.at("best_epoch").get<size_t>() << " of "
          << run.at("drift").size()
          << (run.value("stopped_early", false) ? " (then early stopping)" : " (the epoch cap)")
          << "; test perplexity " << fixed(run.at("test_ppl").get<double>(), 1) << "\n";
    out << "- WordSim-353 Spearman of the input embeddings " << score(run.at("wordsim_input"))
        << ", of the output (unembedding) rows " << score(run.at("wordsim_output")) << "\n\n";
    out << drift_table(run);
    if (const std::optional<TableCensus> census = TableCensus::of_run(run, "table: "))
      out << table_census(*census);
    out << neighbours_table(run);
  }
  if (s.contains("word2vec_wordsim"))
    out << "word2vec vectors on the same training tokens: WordSim-353 Spearman "
        << score(s.at("word2vec_wordsim")) << ".\n";
  return out.str();
}

std::string census_conclusion(const json& life) {
  if (life.is_null() || !life.contains("runs")) return "";
  std::string lines;
  for (const auto& run : life.at("runs")) {
    const std::optional<TableCensus> t = TableCensus::of_run(run, "table: ");
    if (!t || !t->rows_with_gradient) continue;
    const std::optional<double> norm = t->unseen_input_norm();
    lines += "  - " + markdown_text(run.at("name").get<std::string>()) + ": " +
             grouped(*t->rows_with_gradient) + " of " + grouped(t->rows) +
             " rows given a gradient; of the " + grouped(t->unseen_rows) + " never in training, " +
             (t->unseen_rows_unchanged == t->unseen_rows ? std::string("all")
                                                         : grouped(t->unseen_rows_unchanged)) +
             " bitwise as initialised (mean drift " + fixed(t->unseen_rows_drift, 3) +
             (norm ? ", median input-row norm " + fixed(*norm, 3) : "") + ")";
    if (t->under_trained && !std::isnan(t->under_trained->auc_output_cosine))
      lines += "; the under-trained search finds them with ROC AUC " +
               auc_text(t->under_trained->auc_output_cosine);
    lines += "\n";
  }
  if (lines.empty()) return "";
  return "- **GPT-2's 50,257-row table** (section 3d, one seed), the rows training reaches and "
         "what becomes of the others:\n" +
         lines;
}

// What the converged life cycle measured, one line per run: how word-like the rows of each
// table end up (WordSim-353), beside word2vec's on the same tokens, and how much of the input
// table one step gives a gradient (with Adam's momentum, more rows than those change value).
std::string life_cycle_conclusion(const json& life) {
  if (life.is_null() || !life.contains("runs") || life.at("runs").empty()) return "";
  std::ostringstream out;
  out << "- **What the tables learn** (section 3, one seed), WordSim-353 Spearman of their rows";
  if (life.contains("word2vec_wordsim"))
    out << " (word2vec on the same tokens: " << score(life.at("word2vec_wordsim")) << ")";
  out << ":\n";
  for (const auto& run : life.at("runs"))
    out << "  - " << markdown_text(run.at("name").get<std::string>()) << ": input table "
        << score(run.at("wordsim_input")) << ", output rows " << score(run.at("wordsim_output"))
        << "; a step gives " << fixed(100 * run.at("rows_per_step_mean").get<double>(), 1)
        << "% of the input rows a non-zero gradient"
        << (run.value("rows_changed_per_step_mean", json()).is_number()
                ? " and changes the values of " +
                      fixed(100 * run.at("rows_changed_per_step_mean").get<double>(), 1) +
                      "% (bitwise)\n"
                : " (with Adam, rows that had one earlier keep moving: how many change value "
                  "was not measured in this run)\n");
  return out.str();
}
std::vector<OptimizerRows> optimizer_rows(const fs::path& folder) {
  std::vector<OptimizerRows> rows;
  if (!fs::is_directory(folder)) return rows;
  std::vector<fs::path> runs;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.is_directory()) runs.push_back(entry.path());
  std::sort(runs.begin(), runs.end());
  for (const fs::path& run_folder : runs) {
    const FolderFiles files = read_folder(run_folder);
    for (const auto& [name, run] : files) {
      if (!run.contains("lifecycle") || !run.at("lifecycle").contains("rows_changed_per_step_mean"))
        continue;
      const train::TrainConfig c = config_of(run.at("config"));
      const json& life = run.at("lifecycle");
      OptimizerRows row{run_folder.filename().string(),
                        c,
                        life.at("rows_per_step_mean").get<double>(),
                        life.at("rows_changed_per_step_mean").get<double>(),
                        life.at("rows_changed_last_step").get<double>(),
                        run.at("test_ppl").get<double>(),
                        commit_of(run).empty() ? "-" : commit_of(run)};
      if (const json m = life.value("movement", json()); m.is_object()) {
        row.movement_steps = m.at("steps").get<long>();
        row.batch_share = m.at("batch_share_of_squared_update_mean").get<double>();
        row.batch_row_update = m.at("batch_row_relative_update_mean").get<double>();
        row.other_row_update = m.at("other_row_relative_update_mean").get<double>();
      }
      rows.push_back(row);
    }
  }
  return rows;
}

namespace {

// "adamw lr 0.001, decay 0.1 (not on the token table)"
std::string optimizer_setting(const train::TrainConfig& c) {
  std::ostringstream s;
  s << c.optimizer << " lr " << c.lr;
  if (c.weight_decay == 0) {
    s << ", no decay";
  } else {
    s << ", decay " << c.weight_decay;
    if (c.optimizer == "adam" || c.optimizer == "sgd")
      s << " (L2, every matrix)";
    else if (train::decays_tables_by_role(c.optimizer))
      s << (c.table_decay == optim::TableDecay::all ? " (the token table too)"
                                                    : " (not on the token table)");
  }
  return s.str();
}

}  // namespace

std::string optimizer_rows_section(const std::vector<OptimizerRows>& rows) {
  if (rows.empty()) return "";
  std::ostringstream out;
  out << "## 3b. Which rows of the table a step changes, by optimizer\n\n"
         "`lifecycle_optimizers/` (`scripts/lifecycle_optimizers.sh`): section 1's GPT, learned "
         "and untied, one epoch of seed 1 under each optimizer, counting per step the rows of the "
         "input table with a non-zero gradient and the rows whose values the step changed "
         "(compared bit for bit). A row without a gradient still changes when weight decay "
         "shrinks it or when Adam's momentum, built from earlier steps, moves it; only SGD "
         "without decay and LazyAdam change just the rows of the batch's tokens. One epoch is "
         "far from convergence: the test column says how far each optimizer got, not which "
         "converges better.\n\n"
         "| run | optimizer | rows with a gradient, per step | rows changed, per step | rows "
         "changed, last step | test ppl after 1 epoch | commit |\n"
         "|---|---|---:|---:|---:|---:|---|\n";
  for (const OptimizerRows& r : rows)
    out << "| " << markdown_text(r.name) << " | " << optimizer_setting(r.config) << " | "
        << fixed(100 * r.gradient_rows, 2) << "% | " << fixed(100 * r.changed_rows, 2) << "% | "
        << fixed(100 * r.changed_last_step, 2) << "% | " << fixed(r.test_ppl, 1) << " | "
        << markdown_text(r.commit) << " |\n";
  return out.str() + "\n";
}

std::string movement_section(const std::vector<OptimizerRows>& rows) {
  std::ostringstream out;
  for (const OptimizerRows& r : rows) {
    if (r.movement_steps == 0) continue;
    const double ratio = r.other_row_update > 0 ? r.batch_row_update / r.other_row_update : 0;
    out << "| " << markdown_text(r.name) << " | " << optimizer_setting(r.config) << " | "
        << fixed(100 * r.batch_share, 2) << "% | " << std::scientific << std::setprecision(2)
        << r.batch_row_update << " | " << r.other_row_update << std::defaultfloat << " | "
        << (ratio > 0 ? fixed(ratio, 1) + "x" : std::string("-")) << " | " << r.movement_steps
        << " | " << fixed(r.test_ppl, 1) << " |\n";
  }
  if (out.str().empty()) return "";
  // Part of 3b: the same optimizers, measured by how much a step moves a row, not by bits.
  return "### How far a step moves the rows, by optimizer\n\n"
         "`lifecycle_movement/` (`scripts/lifecycle_optimizers.sh --out "
         "results/lifecycle_movement`): the runs above again, the probe also measuring "
         "the size of each row's update: per step, the share of the input table's squared "
         "update (the sum over rows of |new row - old row|^2) that falls on the rows with a "
         "gradient, and the mean update of such a row and of any other row, each over its norm "
         "before the step; each the mean over the epoch's steps. Section 3b counts a row as "
         "changed when any bit of it changes; this says how much.\n\n"
         "| run | optimizer | batch rows' share of the squared update | batch row: update / norm "
         "| other row: update / norm | batch row over other row | steps | test ppl after 1 epoch "
         "|\n|---|---|---:|---:|---:|---:|---:|---:|\n" +
         out.str() + "\n";
}

std::string optimizer_rows_conclusion(const std::vector<OptimizerRows>& rows) {
  if (rows.empty()) return "";
  std::ostringstream out;
  out << "- **Which rows a step changes** (section 3b, one epoch of the learned GPT): rows of the "
         "input table with a gradient per step, and rows whose values change:";
  const char* separator = " ";
  for (const OptimizerRows& r : rows) {
    out << separator << markdown_text(r.name) << " " << fixed(100 * r.gradient_rows, 1) << "% and "
        << fixed(100 * r.changed_rows, 1) << "%";
    separator = "; ";
  }
  out << ". \"A step adjusts only the rows of the batch's tokens\" holds only where the two "
         "agree.\n";
  return out.str();
}

namespace {

constexpr const char* kLazyRow = "learned, lazy-adam";

// The learned (untied) run of a life-cycle summary; null without one.
json learned_life(const json& summary) {
  if (summary.is_null()) return json();
  for (const auto& run : summary.at("runs"))
    if (!run.at("tied").get<bool>()) return run;
  return json();
}

// A life-cycle run's drift by band at its best epoch (the last epoch recorded when it has none).
const json& drift_at_best(const json& run) {
  const json& drift = run.at("drift");
  const size_t best = run.value("best_epoch", size_t{0});
  for (const auto& d : drift)
    if (d.at("epoch").get<size_t>() == best) return d.at("bands");
  return drift.back().at("bands");
}

}  // namespace

LazyAdam lazy_adam(const Study& gpt, const Study& lazy, const json& adamw_life,
                   const json& lazy_life) {
  LazyAdam out;
  out.adamw_life = learned_life(adamw_life);
  out.lazy_life = learned_life(lazy_life);
  if (gpt.summary.is_null() || lazy.summary.is_null()) return out;
  RunFiles files;
  for (const auto& [key, by_seed] : gpt.files)
    if (key.second == "learned") files.push_back({key, by_seed});
  for (const auto& [key, by_seed] : lazy.files)
    if (key.second == "learned") files.push_back({{key.first, kLazyRow}, by_seed});
  out.rows = compare_rows(files, "learned");
  return out;
}

std::string lazy_adam_section(const LazyAdam& lazy) {
  if (lazy.rows.empty() && lazy.lazy_life.is_null()) return "";
  std::ostringstream out;
  out << "## 3c. AdamW against LazyAdam at convergence\n\n"
         "`converged/gpt_lazy_adam/` (`scripts/converged.sh --parts lazy-adam`): section 1's "
         "learned GPT trained with `--optimizer lazy-adam`, which updates a token-table row "
         "only in the steps whose batch has its token (its moments included), against section "
         "1's AdamW runs, seed by seed: what honouring \"a step adjusts only the rows of the "
         "batch's tokens\" costs or gains.\n\n"
      << significance_rows(lazy.rows, "AdamW's learned");
  if (!lazy.adamw_life.is_null() && !lazy.lazy_life.is_null()) {
    const json &a = drift_at_best(lazy.adamw_life), &l = drift_at_best(lazy.lazy_life);
    out << "The life cycle of each (seed 1, `converged/lifecycle/` and "
           "`converged/lifecycle_lazy_adam/`): cosine drift of the input rows from their initial "
           "values (mean of 1 - cos) at the best epoch, by training-set frequency.\n\n"
           "| band | AdamW | LazyAdam |\n|---|---:|---:|\n";
    for (const auto& [band, value] : a.items())
      out << "| " << band << " | " << fixed(value.get<double>(), 3) << " | "
          << (l.contains(band) ? fixed(l.at(band).get<double>(), 3) : "-") << " |\n";
    const auto changed = [](const json& run) {
      const json c = run.value("rows_changed_per_step_mean", json());
      return c.is_number() ? fixed(100 * c.get<double>(), 2) + "%" : std::string("not measured");
    };
    out << "\nRows of the input table a step changes (bitwise), mean per step: AdamW "
        << changed(lazy.adamw_life) << ", LazyAdam " << changed(lazy.lazy_life)
        << "; rows with a gradient: "
        << fixed(100 * lazy.adamw_life.at("rows_per_step_mean").get<double>(), 2) << "% and "
        << fixed(100 * lazy.lazy_life.at("rows_per_step_mean").get<double>(), 2) << "%.\n\n";
  }
  return out.str();  // the significance table ends with its own blank line
}

std::string lazy_adam_conclusion(const LazyAdam& lazy) {
  if (lazy.rows.empty()) return "";
  std::string out =
      "- **LazyAdam against AdamW** (section 3c), the learned GPT's test perplexity:\n" +
      verdict_lines(lazy.rows);
  if (!lazy.adamw_life.is_null() && !lazy.lazy_life.is_null()) {
    const json &a = drift_at_best(lazy.adamw_life), &l = drift_at_best(lazy.lazy_life);
    if (a.contains("rare (1-9)") && l.contains("rare (1-9)"))
      out += "  - rare rows (1-9 training occurrences) drift " +
             fixed(l.at("rare (1-9)").get<double>(), 3) + " under LazyAdam against " +
             fixed(a.at("rare (1-9)").get<double>(), 3) + " under AdamW (1 - cos, seed 1)\n";
  }
  return out;
}

}  // namespace tg::experiments::report
