#include "experiments/report_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include "autograd/io.hpp"
#include "base/files.hpp"
#include "experiments/analysis.hpp"
#include "experiments/report_common.hpp"
#include "experiments/report_plots.hpp"
#include "train/significance.hpp"

namespace tg::experiments {

using nlohmann::json;
namespace fs = std::filesystem;
using namespace detail;

std::string mean_spread(const json& row, const std::string& metric, int decimals) {
  if (!row.contains(metric)) return "-";
  const json& m = row.at(metric);
  std::string s = fixed(m.at("mean").get<double>(), decimals);
  if (m.at("n").get<size_t>() > 1) s += " ± " + fixed(m.at("std").get<double>(), decimals);
  return s;
}

namespace {

// The comparison table, its time column given by time_of(row).
std::string comparison_table(const json& summary, const std::string& time_header,
                             const std::function<double(const json& row)>& time_of) {
  std::ostringstream out;
  out << "| model | embedding | trainable params | valid ppl | test ppl | train ppl | "
      << time_header << " | train tokens/s | runs |\n"
      << "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : summary.at("rows")) {
    out << "| " << r.at("model").get<std::string>() << " | " << r.at("mode").get<std::string>()
        << " | " << thousands(r.at("trainable_params").at("mean").get<double>()) << " | "
        << mean_spread(r, "valid_ppl") << " | " << mean_spread(r, "test_ppl") << " | "
        << mean_spread(r, "train_ppl") << " | " << duration(time_of(r)) << " | "
        << fixed(r.at("train_tokens_per_s").at("mean").get<double>(), 0) << " | "
        << r.at("runs").get<size_t>() << " |\n";
  }
  return out.str();
}

}  // namespace

std::string embeddings_table(const json& summary) {
  return comparison_table(summary, "wall time", [](const json& row) {
    return row.at("wall_s").at("mean").get<double>();
  });
}

std::string data_size_table(const json& summary) {
  std::ostringstream out;
  std::vector<double> fractions;
  for (const auto& f : summary.at("fractions")) fractions.push_back(f.get<double>());
  out << "Test perplexity (mean ± std over seeds) by the share of the training split used:\n\n| "
         "model | embedding |";
  for (double f : fractions) out << " " << fixed(100 * f, 0) << "% |";
  out << "\n|---|---|";
  for (size_t i = 0; i < fractions.size(); ++i) out << "---:|";
  out << "\n";
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& r : summary.at("rows")) {
    std::pair<std::string, std::string> k{r.at("model").get<std::string>(),
                                          r.at("mode").get<std::string>()};
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  for (const auto& [model, mode] : keys) {
    out << "| " << model << " | " << mode << " |";
    for (double f : fractions) {
      const json* row = nullptr;
      for (const auto& r : summary.at("rows"))
        if (r.at("model") == model && r.at("mode") == mode &&
            std::fabs(r.at("fraction").get<double>() - f) < 1e-9)
          row = &r;
      out << " " << (row ? mean_spread(*row, "test_ppl") : "-") << " |";
    }
    out << "\n";
  }
  return out.str();
}

std::string lifecycle_section(const json& s) {
  std::ostringstream out;
  for (const auto& run : s.at("runs")) {
    const std::string name = run.at("name").get<std::string>();
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
    out << "- WordSim-353 Spearman of the input embeddings "
        << fixed(run.at("wordsim_input").get<double>(), 3) << ", of the output (unembedding) rows "
        << fixed(run.at("wordsim_output").get<double>(), 3) << "\n\n";
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
    out << "\n\nNearest neighbours of probe words (input embeddings):\n\n| word | before training "
           "| after training | word2vec |\n|---|---|---|---|\n";
    for (const auto& p : run.at("neighbours")) {
      auto list = [](const json& words) {
        std::string s;
        for (const auto& w : words) s += (s.empty() ? "" : ", ") + w.get<std::string>();
        return s.empty() ? std::string("(not in vocabulary)") : s;
      };
      out << "| " << p.at("word").get<std::string>() << " | " << list(p.at("before")) << " | "
          << list(p.at("after")) << " | " << list(p.at("word2vec")) << " |\n";
    }
    out << "\n";
  }
  if (s.contains("word2vec_wordsim"))
    out << "word2vec vectors on the same training tokens: WordSim-353 Spearman "
        << fixed(s.at("word2vec_wordsim").get<double>(), 3) << ".\n";
  return out.str();
}

namespace {
// A study's data, in one line. The data-size sweep describes each of its shares
// ({"f0.05": ..., "f1": ...}); the largest share stands for the corpus there (the table gives
// each share's size).
std::string data_line(const json& summary) {
  const json data = summary.value("data", json(""));
  if (data.is_string()) return data.get<std::string>();
  if (!data.is_object() || data.empty()) return "";
  auto share = [](const std::string& tag) {  // "f0.25" -> 0.25
    return tag.empty() ? 0.0 : std::strtod(tag.c_str() + 1, nullptr);
  };
  auto largest = data.items().begin();
  for (auto it = data.items().begin(); it != data.items().end(); ++it)
    if (share(it.key()) > share(largest.key())) largest = it;
  return largest.value().get<std::string>();
}

// One line naming the configuration shared by a summary's runs (its base_config).
// The setup of a study's runs in one sentence. The model's shape comes from a run's own
// configuration when one is given: an experiment may set fields per run (the NPLM's hidden
// width is its d_model, so that its output matrix can be tied), and the study's base
// configuration then holds the flag's value, not the run's.
std::string training_setup(const json& summary, const json& run_config = json()) {
  if (!summary.contains("base_config")) return "";
  const json& c = summary.at("base_config");
  const json& shape = run_config.is_object() ? run_config : c;
  const std::string model = shape.value("model", std::string("?"));
  std::ostringstream out;
  out << model << ", d_model " << shape.value("d_model", 0);
  if (model == "gpt")
    out << ", " << shape.value("layers", 0) << " layers, " << shape.value("heads", 0)
        << " heads, context " << shape.value("context", 0);
  else if (model == "nplm")
    out << ", n " << shape.value("ngram", 0) << ", " << shape.value("hidden", 0)
        << " hidden units, " << (shape.value("direct", false) ? "" : "no ")
        << "direct connections, windows of " << shape.value("context", 0) << " predictions";
  else
    out << ", context " << shape.value("context", 0);
  out << ", batch " << c.value("batch", 0) << ", " << c.value("optimizer", std::string("?"))
      << " lr " << c.value("lr", 0.0);
  if (c.value("weight_decay", 0.0) > 0) out << ", weight decay " << c.value("weight_decay", 0.0);
  out << ", " << c.value("warmup", 0) << " warm-up steps, " << c.value("schedule", std::string("?"))
      << ", dropout " << fixed(c.value("dropout", 0.0), 2) << ", up to " << c.value("epochs", 0)
      << " epochs, patience " << c.value("patience", 0) << ".";
  return out.str();
}

// The configuration of the first run of a study's files, or null.
json first_run_config(const RunFiles& files) {
  for (const auto& [key, by_seed] : files)
    for (const auto& [seed, run] : by_seed)
      if (run->contains("config")) return run->at("config");
  return json();
}

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
      << "| Bengio et al. 2003: best neural network (MLP + trigram mixture) | 252 |\n"
      << "| Bengio et al. 2003: best n-gram (class-based back-off) | 312 |\n"
      << "| Bengio et al. 2003: Kneser-Ney 5-gram | 321 |\n";
  if (longer) out << best_row_line(*longer, "longer training (section 1b)");
  if (emb) out << best_row_line(*emb, "best row of section 1a (2 epochs)");
  return out.str();
}

// Bengio et al. (2003), Table 1, test perplexity of their back-off Kneser-Ney and deleted
// interpolation (jelinek-mercer) n-grams; 0 for a model they do not report.
double paper_ngram_test(const std::string& smoothing, int order) {
  if (smoothing == "kneser-ney") return order == 3 ? 323 : order == 4 || order == 5 ? 321 : 0;
  return smoothing == "jelinek-mercer" && order == 3 ? 336 : 0;
}

// Our n-gram baselines (build/bin/ngram, in ngram/) next to Bengio et al.'s rows for the
// same models on their copy of Brown: the ratio measures how much harder our split is.
// `ngram`: the files of dir/ngram.
std::string calibration_section(const FolderFiles& ngram) {
  std::vector<json> runs;
  for (const auto& [name, run] : ngram) runs.push_back(run);
  if (runs.empty()) return "";
  std::sort(runs.begin(), runs.end(), [](const json& a, const json& b) {
    return std::make_pair(a.at("config").at("smoothing").get<std::string>(),
                          a.at("config").at("order").get<int>()) <
           std::make_pair(b.at("config").at("smoothing").get<std::string>(),
                          b.at("config").at("order").get<int>());
  });
  std::ostringstream out;
  out << "## Calibration: the n-gram baselines\n\n"
      << "`build/bin/ngram` on our split of Brown, with the same vocabulary and evaluation as the "
         "neural models, next to Bengio et al.'s rows for the same kind of model on their copy of "
         "the corpus. Ours are interpolated modified Kneser-Ney (theirs: back-off Kneser-Ney) and "
         "deleted interpolation with weights per context-count bucket fitted on the validation "
         "split (so its validation perplexity is optimistic).\n\n"
      << "| model | valid ppl | test ppl | Bengio et al. test | ours / theirs "
         "|\n|---|---:|---:|---:|---:|\n";
  for (const auto& r : runs) {
    const std::string smoothing = r.at("config").at("smoothing").get<std::string>();
    const int order = r.at("config").at("order").get<int>();
    const double test = r.at("test_ppl").get<double>();
    const double theirs = paper_ngram_test(smoothing, order);
    out << "| " << smoothing << " " << order << "-gram | "
        << fixed(r.at("valid_ppl").get<double>(), 1) << " | " << fixed(test, 1) << " | "
        << (theirs > 0 ? fixed(theirs, 0) : "") << " | "
        << (theirs > 0 ? fixed(test / theirs, 3) : "") << " |\n";
  }
  return out.str() + "\n";
}

namespace {

// The verdicts' method, in the words the tables and the conclusions use.
std::string method_sentence() {
  return "A row is better or worse only when a paired t-test of the per-seed differences, with "
         "Holm's correction across every comparison of sections 1, 1c and 2 (family-wise error "
         "5%), "
         "says so; otherwise it is not decided, and a row with one seed is not tested.";
}

// "0.004" or "<0.001": a p-value as the tables show it.
std::string p_value(double p) {
  return p < 0.001 ? "<0.001" : fixed(p, 3);
}

std::string significance_rows(const std::vector<Comparison>& rows, const std::string& reference) {
  if (rows.empty()) return "";
  std::ostringstream out;
  for (const Comparison& c : rows) {
    const std::string per_seed = c.seeds == 1
                                     ? fixed(c.per_seed.mean, 1)
                                     : fixed(c.per_seed.sd, 1) + " (" + fixed(c.per_seed.min, 1) +
                                           " to " + fixed(c.per_seed.max, 1) + ")";
    out << "| " << c.key.first << " | " << c.key.second << " | " << fixed(c.per_seed.mean, 1)
        << " | " << fixed(c.interval.low, 1) << " to " << fixed(c.interval.high, 1) << " | "
        << per_seed << " | " << (c.seeds > 1 ? p_value(c.test.p) : "-") << " | "
        << (c.seeds > 1 ? p_value(c.holm_p) : "-") << " | "
        << base::name_of(kVerdictNames, c.verdict) << " |\n";
  }
  return "Each row against " + reference +
         " embeddings of the same model, over the seeds both rows ran: the mean difference in "
         "test perplexity seed by seed, its 95% interval from a bootstrap that resamples the "
         "seeds and then, within each seed, the test split's " +
         std::to_string(rows.front().blocks) + " blocks of 1,000 tokens in runs of " +
         std::to_string(rows.front().interval.run_length) +
         " adjacent blocks (neighbouring blocks are correlated), and the per-seed spread "
         "(standard deviation, range). " +
         method_sentence() +
         "\n\n"
         "| model | embedding | test ppl difference | 95% interval (seeds, test blocks) | per seed "
         "sd (range) | p (t-test over seeds) | Holm p | verdict |\n"
         "|---|---|---:|---:|---:|---:|---:|---|\n" +
         out.str() + "\n";
}

}  // namespace

namespace {

// Bengio et al. (2003), Table 1: the MLP rows (test perplexity), without and with the mixture
// with the interpolated trigram.
struct PaperRow {
  const char* name;
  int n, hidden, features;
  bool direct;
  double test, mixture_test;
};
constexpr PaperRow kPaperRows[] = {{"mlp1", 5, 50, 60, true, 268, 257},
                                   {"mlp5", 5, 50, 30, true, 279, 259},
                                   {"mlp7", 3, 50, 30, true, 293, 270},
                                   {"mlp9", 5, 100, 30, false, 276, 252}};

// The NPLM rows of scripts/paper_nplm.sh next to the paper's, and the calibration: our
// Kneser-Ney 5-gram over the paper's tells how much harder our copy of the test split is.
// Our Kneser-Ney 5-gram's test perplexity over the paper's (321), or 0 without it.
double ngram_ratio_of(const FolderFiles& ngram) {
  const auto kn = ngram.find("kneser-ney_5.json");
  return kn == ngram.end() ? 0.0 : kn->second.at("test_ppl").get<double>() / 321.0;
}

// A file of a folder read by read_folder, or null.
const json& file_in(const FolderFiles& folder, const std::string& name) {
  static const json none;
  const auto found = folder.find(name);
  return found == folder.end() ? none : found->second;
}

// `paper`: the files of paper_nplm/; `ngram_ratio`: ngram_ratio_of, 0 without the n-grams.
std::string paper_nplm_section(const FolderFiles& paper, double ngram_ratio) {
  std::ostringstream rows;
  for (const PaperRow& p : kPaperRows) {
    for (int seed = 1; seed <= 9; ++seed) {
      const std::string stem = std::string(p.name) + "_seed" + std::to_string(seed);
      const json& run = file_in(paper, stem + ".json");
      if (run.is_null() || run.contains("interrupted")) continue;
      const json& mix = file_in(paper, "mixture_" + stem + ".json");
      const double test = run.at("test_ppl").get<double>();
      const auto calibrated = [&](double ours, double theirs) {
        return ngram_ratio > 0 ? fixed(ours / (theirs * ngram_ratio), 3) : std::string("-");
      };
      rows << "| " << p.name << " | " << p.n << " | " << p.hidden << " | " << p.features << " | "
           << (p.direct ? "yes" : "no") << " | " << seed << " | " << run.value("best_epoch", 0)
           << " of " << run.at("epochs").size() << " | "
           << fixed(run.at("valid_ppl").get<double>(), 1) << " | " << fixed(test, 1) << " | "
           << fixed(p.test, 0) << " | " << calibrated(test, p.test) << " |\n";
      if (!mix.is_null() && mix.contains("mixture")) {
        const json& m = mix.at("mixture");
        rows << "| " << p.name << " + " << mix.at("config").at("smoothing").get<std::string>()
             << " " << mix.at("config").at("order").get<int>() << "-gram (weight "
             << fixed(m.at("weight").get<double>(), 2) << ") | | | | | " << seed << " | | "
             << fixed(m.at("valid_ppl").get<double>(), 1) << " | "
             << fixed(m.at("test_ppl").get<double>(), 1) << " | " << fixed(p.mixture_test, 0)
             << " | " << calibrated(m.at("test_ppl").get<double>(), p.mixture_test) << " |\n";
      }
    }
  }
  if (rows.str().empty()) return "";
  return "## The NPLM against Bengio et al. (2003), Table 1\n\n"
         "`scripts/paper_nplm.sh`: the paper's architectures (n words of context, h hidden units, "
         "m features, direct connections from the features to the output) trained with early "
         "stopping on the whole validation split; the mixture rows interpolate the NPLM with an "
         "n-gram (`ngram --mix-with`, weight fitted on validation), as the paper's. Calibrated: "
         "ours / (theirs x " +
         (ngram_ratio > 0 ? fixed(ngram_ratio, 3) : std::string("?")) +
         "), the ratio of our Kneser-Ney 5-gram to theirs on the same protocol: 1.000 means the "
         "NPLM matches the paper as closely as the n-gram does.\n\n"
         "| row | n | h | m | direct | seed | best epoch | valid ppl | test ppl | paper test | "
         "calibrated |\n|---|---:|---:|---:|---|---:|---|---:|---:|---:|---:|\n" +
         rows.str() + "\n";
}

// "best epoch/epochs run (training time)" for each seed of each row, from the runs' own
// files: the training time adds up over the sittings of a resumed run, where wall_s counts
// the last process only.
std::string epochs_table(const RunFiles& files) {
  std::ostringstream out;
  out << "| model | embedding | best epoch / epochs run (training time), by seed; cap: "
         "stopped by its epoch cap, not by early stopping |\n"
      << "|---|---|---|\n";
  for (const auto& [key, by_seed] : files) {
    std::string cell;
    for (const auto& [seed, file] : by_seed) {
      const json& run = *file;
      cell += (cell.empty() ? "" : ", ") + std::to_string(run.value("best_epoch", size_t{0})) +
              "/" + std::to_string(run.contains("epochs") ? run.at("epochs").size() : 0);
      std::string notes;
      if (run.contains("train_seconds") || run.contains("wall_s"))
        notes = duration(training_seconds(run));
      // Ran out of epochs before validation stopped improving: not converged by that rule.
      if (run.contains("stopped_early") && !run.at("stopped_early").get<bool>())
        notes += notes.empty() ? "cap" : ", cap";
      if (!notes.empty()) cell += " (" + notes + ")";
    }
    out << "| " << key.first << " | " << key.second << " | " << cell << " |\n";
  }
  return out.str();
}

// A converged study's folder, read and compared once for its section, the conclusions and
// the Compute section.
struct StudyFolder {
  json summary;                         // null: no such study
  FolderFiles all;                      // every results file of the folder (read_folder)
  RunFiles files;                       // the summary's runs' files in `all`, by row and seed
  std::vector<Comparison> comparisons;  // each row against learned

  // Moved, never copied: `files` points into `all`, whose nodes a move keeps and a copy does not.
  StudyFolder() = default;
  StudyFolder(StudyFolder&&) = default;
  StudyFolder(const StudyFolder&) = delete;
};

// The five modes trained to early stopping (scripts/converged.sh), in root/converged/<model>.
std::string converged_model(const fs::path& root, const std::string& model,
                            const StudyFolder& study, bool plots) {
  if (study.summary.is_null()) return "";
  const fs::path sub = fs::path("converged") / model;
  const json& summary = study.summary;
  const size_t budget = summary.at("base_config").value("epochs", size_t{0});
  std::map<RowKey, double> mean_seconds;  // each row's mean training time over its seeds
  for (const auto& [key, by_seed] : study.files) {
    if (by_seed.empty()) continue;
    std::vector<double> seconds;
    for (const auto& [seed, run] : by_seed) seconds.push_back(training_seconds(*run));
    mean_seconds[key] = train::spread_of(seconds).mean;
  }
  return "`converged/" + model + "/`: " + training_setup(summary, first_run_config(study.files)) +
         " A run that used fewer than its " + std::to_string(budget) +
         " epochs stopped because validation stopped improving.\n\n" +
         comparison_table(summary, "training time (mean)",
                          [&](const json& row) {
                            const auto found = mean_seconds.find({row.at("model"), row.at("mode")});
                            return found == mean_seconds.end() ? 0.0 : found->second;
                          }) +
         "\n" + significance_rows(study.comparisons, "learned") + epochs_table(study.files) + "\n" +
         (plots ? validation_curves(summary, study.files, root, sub, CurvePanels::with_near_best)
                : "");
}

// A data-size sweep's run files, one row per (share, mode): the share joins the model's name
// ("gpt 5%"), so that each share's modes are compared with learned at the same share.
RunFiles files_by_share(const json& size, const FolderFiles& folder) {
  json by_share = json::array();
  for (json r : size.at("runs")) {
    r["model"] = r.at("model").get<std::string>() + " " +
                 fixed(100 * r.at("fraction").get<double>(), 0) + "%";
    by_share.push_back(r);
  }
  return load_run_files(runs_by_row(by_share), folder);
}

StudyFolder load_study(const fs::path& folder, bool by_share) {
  StudyFolder study;
  study.all = read_folder(folder);  // for the Compute section even before a run has finished
  study.summary = load_summary(folder / "summary.json");
  if (study.summary.is_null()) return study;
  study.files = by_share ? files_by_share(study.summary, study.all)
                         : load_run_files(runs_by_row(study.summary.at("runs")), study.all);
  study.comparisons = compare_rows(study.files, "learned");
  return study;
}

// Tying with one decay policy: the GPT's learned-tied runs (section 1's folder) against the
// untied GPT trained with --table-decay none (converged/gpt_table_decay_none), whose output
// matrix, like the tied table, has no weight decay. Paired by seed; empty without runs.
constexpr const char* kUntiedNoDecay = "learned, no table decay";

std::vector<Comparison> fair_tie(const StudyFolder& gpt, const StudyFolder& no_decay) {
  if (gpt.summary.is_null() || no_decay.summary.is_null()) return {};
  RunFiles files;
  for (const auto& [key, by_seed] : no_decay.files)
    if (key.second == "learned") files.push_back({{key.first, kUntiedNoDecay}, by_seed});
  for (const auto& [key, by_seed] : gpt.files)
    if (key.second == "learned-tied") files.push_back({key, by_seed});
  return compare_rows(files, kUntiedNoDecay);
}

std::string fair_tie_section(const std::vector<Comparison>& rows) {
  if (rows.empty()) return "";
  return "## 1c. Tying with one decay policy\n\n"
         "`converged/gpt_table_decay_none/`: section 1's GPT, untied, trained with "
         "`--table-decay none`: neither its token table nor its output matrix has weight decay, "
         "as for the tied model, whose one table is an embedding. Section 1's learned-tied runs "
         "against it, seed by seed.\n\n" +
         significance_rows(rows, "untied (" + std::string(kUntiedNoDecay) + ")");
}

// Each share's cap on epochs and early-stopping patience as its runs were configured: "5%: at
// most 240 epochs, patience 40; 25%: ...". Empty when no run file says.
std::string share_budgets(const RunFiles& files) {
  std::map<double, std::pair<size_t, size_t>> by_share;  // share: epochs, patience
  for (const auto& [key, by_seed] : files)
    for (const auto& [seed, run] : by_seed)
      if (run->contains("config") && run->at("config").contains("train_fraction")) {
        const json& c = run->at("config");
        by_share[c.at("train_fraction").get<double>()] = {c.value("epochs", size_t{0}),
                                                          c.value("patience", size_t{0})};
      }
  std::string out;
  for (const auto& [share, budget] : by_share)
    out += (out.empty() ? "" : "; ") + fixed(100 * share, 0) + "%: at most " +
           std::to_string(budget.first) + " epochs, patience " + std::to_string(budget.second);
  return out;
}

// The data-size sweep at convergence (scripts/converged.sh's data-size part, in
// root/converged/data_size): its shares of the training split, and the 100% column from the
// GPT runs of section 1, which are the same runs (both kinds of pretrained rows use word2vec
// trained on the full split there).
std::string converged_data_size(const fs::path& root, const StudyFolder& sweep,
                                const StudyFolder& gpt, bool plots) {
  if (sweep.summary.is_null()) return "";
  const fs::path sub = fs::path("converged") / "data_size";
  const std::string budgets = share_budgets(sweep.files);
  json size = sweep.summary;
  if (!gpt.summary.is_null()) {
    std::map<RowKey, std::pair<const json*, const json*>> full;  // row, one of its run files
    for (const auto& row : gpt.summary.at("rows"))
      full[{row.at("model"), row.at("mode")}].first = &row;
    for (const auto& [key, by_seed] : gpt.files)
      if (!by_seed.empty()) full[key].second = by_seed.begin()->second;
    json added = json::array();
    for (const auto& [key, rows] : runs_by_row(size.at("rows"))) {
      const std::string& mode = key.second;
      const std::string source = mode.ends_with("-full") ? mode.substr(0, mode.size() - 5) : mode;
      const auto found = full.find({key.first, source});
      if (found == full.end() || !found->second.first || !found->second.second) continue;
      json row = *found->second.first;
      row["mode"] = mode, row["fraction"] = 1.0;
      row["train_tokens"] = found->second.second->at("data").at("train_tokens");
      added.push_back(row);
    }
    if (!added.empty()) {
      for (const auto& row : added) size["rows"].push_back(row);
      size["fractions"].push_back(1.0);
    }
  }
  return "## 2. How much data: where does pretraining help? (at convergence)\n\n"
         "`converged/data_size/`: the GPT of section 1 trained on the first share of the training "
         "split, with early stopping on validation as there. " +
         (budgets.empty() ? ""
                          : "Each share's cap on epochs and its patience, both in passes over "
                            "the share: " +
                                budgets + ". ") +
         "word2vec is trained on the same share, or on the full split for the -full rows. The "
         "100% column is section 1's runs.\n\n" +
         data_size_table(size) + "\n" + significance_rows(sweep.comparisons, "learned") +
         epochs_table(sweep.files) + "\n" + (plots ? data_size_plot(size, root, sub) : "");
}

// The compute in one results folder: the finished runs' optimisation steps (summed over the
// sittings of a resumed run) and the word2vec pretraining.
struct Compute {
  size_t runs = 0;
  double train_seconds = 0, word2vec_seconds = 0;
};
Compute compute_in(const FolderFiles& folder) {
  Compute c;
  for (const auto& [name, j] : folder) {
    if (name.starts_with("word2vec_")) {
      c.word2vec_seconds += j.value("seconds", 0.0);
    } else if (j.contains("train_seconds") && j.contains("test_ppl") &&
               !j.contains("interrupted")) {
      ++c.runs;
      c.train_seconds += j.at("train_seconds").get<double>();
    }
  }
  return c;
}

// What the long studies cost, folder by folder (the converged studies' files as load_study
// read them); `total` receives the sum.
std::string compute_section(const fs::path& dir, const FolderFiles& paper, const StudyFolder& gpt,
                            const StudyFolder& nplm, const StudyFolder& sweep, Compute& total) {
  std::ostringstream rows;
  const std::pair<const char*, const FolderFiles*> folders[] = {{"paper_nplm", &paper},
                                                                {"converged/gpt", &gpt.all},
                                                                {"converged/nplm", &nplm.all},
                                                                {"converged/data_size", &sweep.all},
                                                                {"converged/lifecycle", nullptr}};
  for (const auto& [folder, files] : folders) {
    const Compute c = compute_in(files ? *files : read_folder(dir / folder));
    if (c.runs == 0) continue;
    rows << "| `" << folder << "/` | " << c.runs << " | " << duration(c.train_seconds) << " | "
         << duration(c.word2vec_seconds) << " |\n";
    total.runs += c.runs;
    total.train_seconds += c.train_seconds;
    total.word2vec_seconds += c.word2vec_seconds;
  }
  if (total.runs == 0) return "";
  return "## Compute\n\nThe long studies so far, one core per run. Training: the optimisation "
         "steps of each finished run, summed over the sittings of a resumed one (evaluations, "
         "runs still in progress and the n-gram baselines, seconds each, not included).\n\n"
         "| folder | finished runs | training | word2vec |\n|---|---:|---:|---:|\n" +
         rows.str() + "| total | " + std::to_string(total.runs) + " | " +
         duration(total.train_seconds) + " | " + duration(total.word2vec_seconds) + " |\n\n";
}

// "  - learned-tied: -14.9 (95% interval -17.2 to -12.6; 3 seeds, p 0.004, Holm 0.07): not
// decided" for each row, the model's name first when `with_model`.
std::string verdict_lines(const std::vector<Comparison>& rows, bool with_model = false) {
  std::string out;
  for (const Comparison& c : rows)
    out += "  - " + (with_model ? c.key.first + ", " : "") + c.key.second + ": " +
           fixed(c.per_seed.mean, 1) + " (95% interval " + fixed(c.interval.low, 1) + " to " +
           fixed(c.interval.high, 1) + "; " + std::to_string(c.seeds) +
           (c.seeds == 1 ? " seed"
                         : " seeds, p " + p_value(c.test.p) + ", Holm " + p_value(c.holm_p)) +
           "): " + base::name_of(kVerdictNames, c.verdict) + "\n";
  return out;
}

// What tying costs in parameters, beside its verdict: the input table doubles as the output
// matrix, so one vocabulary x d_model table is trained instead of two.
std::string tying_cost(const json& summary) {
  const auto params_of = [&](const std::string& mode) {
    for (const auto& r : summary.at("rows"))
      if (r.at("mode") == mode) return r.at("trainable_params").at("mean").get<double>();
    return 0.0;
  };
  const double untied = params_of("learned"), tied = params_of("learned-tied");
  if (untied <= 0 || tied <= 0) return "";
  // AdamW decays an untied output matrix but no embedding table, a tied one included, unless
  // the runs chose --table-decay none or all.
  const json& c = summary.at("base_config");
  const bool confounded = c.value("optimizer", "adamw") != "adam" &&
                          c.value("weight_decay", 0.0) > 0 &&
                          c.value("table_decay", "output") == "output";
  return "  - tying trains " + thousands(tied) + " parameters instead of " + thousands(untied) +
         " (" + fixed(100 * (1 - tied / untied), 0) + "% fewer)" +
         (confounded
              ? "; the comparison is confounded: the untied output matrix has weight decay " +
                    fixed(c.at("weight_decay").get<double>(), 2) +
                    ", the tied table none (--table-decay output; section 1c compares tying under "
                    "one policy)"
              : "") +
         "\n";
}

// A model on the scale of the one-table section: its test perplexity over seeds, and Bengio
// et al.'s for the same model (0: they have none).
struct ScaleRow {
  std::string model;
  size_t seeds = 0;  // 0: no seed (the n-grams are deterministic)
  double mean = 0, sd = 0, paper = 0;
};

// Mean and sample standard deviation of test_ppl over the finished runs among `runs`.
ScaleRow scale_row(std::string model, const std::vector<const json*>& runs, double paper) {
  ScaleRow row{std::move(model), 0, 0, 0, paper};
  std::vector<double> ppl;
  for (const json* run : runs)
    if (run && !run->is_null() && !run->contains("interrupted"))
      ppl.push_back(run->at("test_ppl").get<double>());
  const train::Spread s = train::spread_of(ppl);
  row.seeds = s.n;
  row.mean = s.mean;
  row.sd = s.sd;
  return row;
}

// Every model of the study in one table on one scale: the n-grams, the paper's NPLM rows and
// the converged models, each with its test perplexity on our split and divided by the
// calibration ratio (what it would be on the paper's copy of Brown if our split is as much
// harder for it as for the Kneser-Ney 5-gram), next to the paper's figure for the same model.
// Ranked by test perplexity.
std::vector<ScaleRow> scale_rows(const FolderFiles& ngram, const FolderFiles& paper,
                                 const StudyFolder& gpt, const StudyFolder& nplm) {
  std::vector<ScaleRow> rows;
  for (const auto& [name, run] : ngram) {
    const std::string smoothing = run.at("config").at("smoothing").get<std::string>();
    const int order = run.at("config").at("order").get<int>();
    rows.push_back({smoothing + " " + std::to_string(order) + "-gram", 0,
                    run.at("test_ppl").get<double>(), 0, paper_ngram_test(smoothing, order)});
  }
  for (const PaperRow& p : kPaperRows) {
    std::vector<const json*> runs, mixtures;
    for (int seed = 1; seed <= 9; ++seed) {
      const std::string stem = std::string(p.name) + "_seed" + std::to_string(seed);
      runs.push_back(&file_in(paper, stem + ".json"));
      if (const json& mix = file_in(paper, "mixture_" + stem + ".json"); mix.contains("mixture"))
        mixtures.push_back(&mix.at("mixture"));
    }
    const std::string name = "Bengio et al.'s " + std::string(p.name) + " (n " +
                             std::to_string(p.n) + ", h " + std::to_string(p.hidden) + ", m " +
                             std::to_string(p.features) + (p.direct ? ", direct)" : ")");
    rows.push_back(scale_row(name, runs, p.test));
    rows.push_back(scale_row(name + " + trigram mixture", mixtures, p.mixture_test));
  }
  for (const StudyFolder* study : {&gpt, &nplm}) {
    if (study->summary.is_null()) continue;
    // The model's width and context as far as its configuration names them.
    const json& c = study->summary.at("base_config");
    const std::string shape =
        (c.contains("d_model") ? " d" + std::to_string(c.at("d_model").get<int>()) : "") +
        (c.value("model", "") == "nplm" && c.contains("ngram")
             ? " (n " + std::to_string(c.at("ngram").get<int>()) + ")"
             : std::string());
    for (const auto& [key, by_seed] : study->files) {
      std::vector<const json*> runs;
      for (const auto& [seed, run] : by_seed) runs.push_back(run);
      rows.push_back(scale_row(key.first + shape + ", " + key.second + " (section 1)", runs, 0));
    }
  }
  std::erase_if(rows, [](const ScaleRow& r) { return r.mean <= 0; });
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ScaleRow& a, const ScaleRow& b) { return a.mean < b.mean; });
  return rows;
}

std::string one_scale_section(const std::vector<ScaleRow>& rows, double ratio) {
  if (ratio <= 0 || rows.empty()) return "";
  std::ostringstream out;
  out << "## All models on one scale\n\n"
         "Every model of this report, ranked by test perplexity on our split (mean ± standard "
         "deviation over seeds), and calibrated: divided by "
      << fixed(ratio, 3)
      << ", our Kneser-Ney 5-gram over the paper's, which is what the model would score on "
         "the paper's copy of Brown if our split is as much harder for it as for the "
         "n-gram. Bengio et al.'s column: their figure for the same model, where they have "
         "one.\n\n"
         "| model | seeds | test ppl | calibrated | Bengio et al. |\n"
         "|---|---:|---:|---:|---:|\n";
  for (const ScaleRow& r : rows) {
    const auto spread = [&](double scale) {
      return fixed(r.mean / scale, 1) + (r.seeds > 1 ? " ± " + fixed(r.sd / scale, 1) : "");
    };
    out << "| " << r.model << " | " << (r.seeds ? std::to_string(r.seeds) : "-") << " | "
        << spread(1.0) << " | " << spread(ratio) << " | " << (r.paper > 0 ? fixed(r.paper, 0) : "")
        << " |\n";
  }
  return out.str() + "\n";
}

// What the converged runs say, each verdict with the numbers it rests on and its section:
// rendered from the same comparisons as the tables, so it cannot drift from them.
// What the converged life cycle measured, one line per run: how word-like the rows of each
// table end up (WordSim-353), beside word2vec's on the same tokens, and how much of the input
// table one step gives a gradient (with Adam's momentum, more rows than those change value).
std::string life_cycle_conclusion(const json& life) {
  if (life.is_null() || !life.contains("runs") || life.at("runs").empty()) return "";
  std::ostringstream out;
  out << "- **What the tables learn** (section 3, one seed), WordSim-353 Spearman of their rows";
  if (life.contains("word2vec_wordsim"))
    out << " (word2vec on the same tokens: " << fixed(life.at("word2vec_wordsim").get<double>(), 3)
        << ")";
  out << ":\n";
  for (const auto& run : life.at("runs"))
    out << "  - " << run.at("name").get<std::string>() << ": input table "
        << fixed(run.at("wordsim_input").get<double>(), 3) << ", output rows "
        << fixed(run.at("wordsim_output").get<double>(), 3) << "; a step gives "
        << fixed(100 * run.at("rows_per_step_mean").get<double>(), 1)
        << "% of the input rows a non-zero gradient"
        << (run.value("rows_changed_per_step_mean", json()).is_number()
                ? " and changes the values of " +
                      fixed(100 * run.at("rows_changed_per_step_mean").get<double>(), 1) +
                      "% (bitwise)\n"
                : " (with Adam, rows that had one earlier keep moving: how many change value "
                  "was not measured in this run)\n");
  return out.str();
}

// The GPT's verdicts regrouped by how much data it saw, for the study's question: which
// embeddings beat learned ones, and when. A one-seed verdict is not yet a decision.
std::string in_short(const StudyFolder& gpt, const StudyFolder& sweep) {
  std::vector<std::pair<std::string, std::vector<const Comparison*>>> shares;
  const auto add = [&](const std::string& share, const Comparison& c) {
    auto at = std::ranges::find(shares, share, [](const auto& s) { return s.first; });
    if (at == shares.end()) at = shares.insert(shares.end(), {share, {}});
    at->second.push_back(&c);
  };
  for (const Comparison& c : sweep.comparisons)
    if (c.key.first.starts_with("gpt ")) add(c.key.first.substr(4) + " of the training split", c);
  for (const Comparison& c : gpt.comparisons)
    if (c.key.first == "gpt") add("the whole training split", c);
  if (shares.empty()) return "";
  std::string out =
      "- **In short** (GPT; each embedding mode against learned embeddings, the language model "
      "trained on the same share; -full: its word2vec trained on the whole split):\n";
  for (const auto& [share, rows] : shares) {
    std::string better, worse, undecided;
    for (const Comparison* c : rows) {
      std::string& list = c->verdict == Verdict::better  ? better
                          : c->verdict == Verdict::worse ? worse
                                                         : undecided;
      list += (list.empty() ? "" : ", ") + c->key.second;
    }
    std::string line;
    for (const auto& [name, list] :
         {std::pair{"better", &better}, {"worse", &worse}, {"not decided", &undecided}})
      if (!list->empty()) line += (line.empty() ? "" : "; ") + std::string(name) + ": " + *list;
    out += "  - " + share + ": " + line + "\n";
  }
  return out;
}

std::string conclusions_section(double ratio, const FolderFiles& paper,
                                const std::vector<ScaleRow>& scale, const StudyFolder& gpt,
                                const StudyFolder& nplm, const StudyFolder& sweep,
                                const std::vector<Comparison>& tie, const json& converged_life,
                                const Compute& compute) {
  std::ostringstream out;
  out << in_short(gpt, sweep);
  if (ratio > 0)
    out << "- **Calibration.** Our Kneser-Ney 5-gram's test perplexity is " << fixed(ratio, 3)
        << " times the paper's on their copy of Brown: our test split is that much harder "
           "(Calibration).\n";
  for (const PaperRow& p : kPaperRows) {
    const json& run = file_in(paper, std::string(p.name) + "_seed1.json");
    if (run.is_null() || run.contains("interrupted") || ratio <= 0) continue;
    const double calibrated = run.at("test_ppl").get<double>() / (p.test * ratio);
    out << "- **The paper's " << p.name << "** reaches test perplexity "
        << fixed(run.at("test_ppl").get<double>(), 1) << " against their " << fixed(p.test, 0)
        << ": " << fixed(calibrated, 3) << " after calibration ("
        << (std::fabs(calibrated - 1) <= 0.05 ? "within" : "outside")
        << " 5%; The NPLM against Bengio et al.).\n";
  }
  // The best of ours on the paper's scale against the best of theirs (an MLP mixed with a
  // trigram). A model run over several seeds comes before a single run that happens to score
  // lower, which is named beside it: one seed's luck is not the model's. The rows are ranked,
  // so the first match is the best; the n-grams have no seed.
  const bool several = std::ranges::any_of(scale, [](const ScaleRow& r) { return r.seeds > 1; });
  const auto best =
      std::ranges::find_if(scale, [&](const ScaleRow& r) { return r.seeds > (several ? 1 : 0); });
  const auto first_neural =
      std::ranges::find_if(scale, [](const ScaleRow& r) { return r.seeds > 0; });
  if (ratio > 0 && best != scale.end()) {
    double paper_best = kPaperRows[0].mixture_test;
    for (const PaperRow& p : kPaperRows) paper_best = std::min(paper_best, p.mixture_test);
    out << "- **Best model" << (several ? " over several seeds" : "") << ":** " << best->model
        << ", test perplexity " << fixed(best->mean, 1) << " (" << best->seeds
        << (best->seeds == 1 ? " seed" : " seeds") << "), " << fixed(best->mean / ratio, 1)
        << " calibrated, against the paper's best, " << fixed(paper_best, 0)
        << " (an MLP mixed with a trigram; All models on one scale)";
    if (first_neural != best)
      out << "; a single run scores lower: " << first_neural->model << ", "
          << fixed(first_neural->mean, 1);
    out << ".\n";
  }
  for (const auto& [model, study] : {std::pair{"gpt", &gpt}, {"nplm", &nplm}})
    if (!study->comparisons.empty())
      out << "- **" << model << " at convergence**, test perplexity against learned embeddings "
          << "(section 1):\n"
          << verdict_lines(study->comparisons) << tying_cost(study->summary);
  if (!tie.empty())
    out << "- **Tying with one decay policy** (section 1c), learned-tied against the untied GPT "
           "whose vocabulary matrices have no weight decay either:\n"
        << verdict_lines(tie);
  if (!sweep.comparisons.empty())
    out << "- **With less data** (section 2), each share's modes against learned at the same "
           "share:\n"
        << verdict_lines(sweep.comparisons, true);
  out << life_cycle_conclusion(converged_life);
  if (out.str().empty()) return "";
  if (compute.runs > 0)
    out << "- **Compute.** " << compute.runs << " runs, " << duration(compute.train_seconds)
        << " of training on one core each (Compute).\n";
  return "## Conclusions\n\nFrom the converged runs and the baselines below. " + method_sentence() +
         " The interval resamples the seeds and, within each, runs of adjacent test blocks."
         "\n\n" +
         out.str() + "\n";
}

// The five modes trained to early stopping (scripts/converged.sh), GPT then NPLM.
std::string converged_section(const fs::path& dir, const StudyFolder& gpt_study,
                              const StudyFolder& nplm_study, bool plots) {
  const std::string gpt = converged_model(dir, "gpt", gpt_study, plots);
  const std::string nplm = converged_model(dir, "nplm", nplm_study, plots);
  if (gpt.empty() && nplm.empty()) return "";
  return "## 1. At convergence: frozen pretrained vs learned embeddings (and tied vs untied)\n\n"
         "`scripts/converged.sh`. Every number is of the parameters of the best validation "
         "epoch.\n\n" +
         gpt + nplm;
}

}  // namespace

namespace {

std::string render(const std::string& results_dir, bool plots) {
  const fs::path dir(results_dir);
  const json emb = load_summary(dir / "embeddings" / "summary.json");
  const json size = load_summary(dir / "data_size" / "summary.json");
  const json life = load_summary(dir / "lifecycle" / "summary.json");
  const json converged_life = load_summary(dir / "converged" / "lifecycle" / "summary.json");
  if (emb.is_null() && size.is_null() && life.is_null() && !fs::exists(dir / "converged") &&
      !fs::exists(dir / "paper_nplm"))
    throw std::runtime_error(
        results_dir +
        ": no experiment results (run scripts/reproduce.sh or an exp_* binary first)");
  // Without gnuplot the report still renders, but its pictures would vanish unannounced.
  if (plots && !have_gnuplot()) {
    std::fprintf(stderr,
                 "report: gnuplot not found: REPORT.md gets its tables but no plots "
                 "(scripts/setup.sh report installs gnuplot; --no-plots asks for tables only)\n");
    plots = false;
  }
  std::ostringstream md;
  md << "# Embedding experiments: results\n\n"
     << "Rendered by `build/bin/report` from the JSON files in this folder; every number below "
        "comes from them.\n\n";
  // The long studies, each folder read (and compared) once for its sections and the conclusions.
  const FolderFiles ngram = read_folder(dir / "ngram"), paper = read_folder(dir / "paper_nplm");
  const double ngram_ratio = ngram_ratio_of(ngram);
  StudyFolder gpt = load_study(dir / "converged" / "gpt", false),
              nplm = load_study(dir / "converged" / "nplm", false),
              sweep = load_study(dir / "converged" / "data_size", true);
  const StudyFolder no_decay = load_study(dir / "converged" / "gpt_table_decay_none", false);
  std::vector<Comparison> tie = fair_tie(gpt, no_decay);
  // One family for Holm's correction: every comparison the conclusions draw on.
  std::vector<Comparison*> family;
  for (StudyFolder* study : {&gpt, &nplm, &sweep})
    for (Comparison& c : study->comparisons) family.push_back(&c);
  for (Comparison& c : tie) family.push_back(&c);
  decide(family);
  Compute compute;
  const std::string compute_table = compute_section(dir, paper, gpt, nplm, sweep, compute);
  const std::vector<ScaleRow> scale = scale_rows(ngram, paper, gpt, nplm);
  md << conclusions_section(ngram_ratio, paper, scale, gpt, nplm, sweep, tie, converged_life,
                            compute)
     << calibration_section(ngram) << paper_nplm_section(paper, ngram_ratio)
     << one_scale_section(scale, ngram_ratio) << converged_section(dir, gpt, nplm, plots)
     << fair_tie_section(tie);
  if (!emb.is_null()) {
    md << "## 1a. A short budget: the same comparison after 2 epochs\n\n"
       << data_line(emb) << "\n\n";
    if (emb.contains("word2vec"))
      md << "word2vec (skip-gram, trained on the training split only): WordSim-353 Spearman "
         << fixed(emb["word2vec"]["wordsim353"].get<double>(), 3) << ", "
         << fixed(emb.at("word2vec").at("seconds").get<double>(), 1) << " s.\n\n";
    md << embeddings_table(emb)
       << "\nppl = perplexity; mean ± sample standard deviation over seeds. Valid/test: full "
          "splits "
       << "with the parameters of the best validation epoch; train ppl: first 50,000 training "
          "tokens in evaluation mode "
       << "(a gap between train and valid ppl shows over-fitting). Wall time includes "
          "evaluation.\n\n";
    if (plots) {
      const FolderFiles folder = read_folder(dir / "embeddings");
      md << validation_curves(emb, load_run_files(runs_by_row(emb.at("runs")), folder), dir,
                              "embeddings");
    }
  }
  // The runs of `scripts/reproduce.sh --target` (longer training), when they sit next to the
  // full profile's results, get their own table and a line in the reference table.
  const json longer = load_summary(dir / "target" / "embeddings" / "summary.json");
  if (!longer.is_null())
    md << "## 1b. Longer training: the runs below 252\n\n"
       << "`scripts/reproduce.sh --target`, results in `target/`: " << training_setup(longer)
       << "\n\n"
       << embeddings_table(longer) << "\n";
  md << "## Reference: Bengio et al. (2003) on the same protocol\n\n"
     << bengio_reference_table(emb.is_null() ? nullptr : &emb, longer.is_null() ? nullptr : &longer)
     << "\n";
  const std::string converged_size = converged_data_size(dir, sweep, gpt, plots);
  md << converged_size;
  if (!size.is_null()) {
    md << (converged_size.empty() ? "## 2. How much data: where does pretraining help?\n\n"
                                  : "## 2a. How much data: a short budget\n\n")
       << data_line(size) << "\n\n"
       << data_size_table(size) << "\n";
    if (plots) md << data_size_plot(size, dir, "data_size");
  }
  // The life cycle of the converged runs (scripts/converged.sh --parts lifecycle), then the
  // short one.
  if (!converged_life.is_null()) {
    md << "## 3. The life cycle of an embedding table (at convergence)\n\n"
       << "`converged/lifecycle/`: " << training_setup(converged_life) << " Seed "
       << converged_life.at("base_config").value("seed", 1) << ".\n\n"
       << lifecycle_section(converged_life);
    if (plots) md << drift_plot(converged_life, dir, fs::path("converged") / "lifecycle");
  }
  if (!life.is_null()) {
    // Alone, the short life cycle still says it is short, so no one takes it for a converged one.
    md << (converged_life.is_null()
               ? "## 3. The life cycle of an embedding table: a short budget\n\n"
                 "Not yet run at convergence (`scripts/converged.sh --parts lifecycle`).\n\n"
               : "## 3a. The life cycle: a short budget\n\n")
       << data_line(life) << "\n\n";
    if (const std::string setup = training_setup(life); !setup.empty()) md << setup << "\n\n";
    md << lifecycle_section(life);
    if (plots) md << drift_plot(life, dir, "lifecycle");
  }
  md << compute_table;
  const std::string text = md.str();
  base::atomic_write((dir / "REPORT.md").string(), [&](std::ostream& o) { o << text; });
  return text;
}

}  // namespace

std::string render_report(const std::string& results_dir, bool plots) {
  try {
    return render(results_dir, plots);
  } catch (const json::exception& e) {
    // A results file without a field the report reads (by hand, or from another program).
    throw std::runtime_error(results_dir +
                             ": a results file lacks what the report needs: " + e.what());
  }
}

}  // namespace tg::experiments
