#include "experiments/report/tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "base/enum_names.hpp"
#include "base/files.hpp"
#include "experiments/report/format.hpp"
#include "experiments/significance.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

std::string comparison_table(const json& summary, const TimeColumns& time) {
  std::ostringstream out;
  // Subword tokens: per-word perplexity too, the scale shared with word-level rows.
  const bool per_word = std::ranges::any_of(
      summary.at("rows"), [](const json& r) { return r.contains("test_ppl_per_word"); });
  out << "| model | embedding | trainable params | valid ppl | test ppl | "
      << (per_word ? "test ppl per word | " : "") << "train ppl | " << time.time_header << " | "
      << time.speed_header << " | runs |\n"
      << "|---|---|---:|---:|---:|" << (per_word ? "---:|" : "") << "---:|---:|---:|---:|\n";
  for (const auto& r : summary.at("rows")) {
    out << "| " << r.at("model").get<std::string>() << " | " << r.at("mode").get<std::string>()
        << " | "
        // A data-size sweep's summary keeps no parameter count: "-".
        << (r.contains("trainable_params")
                ? thousands(r.at("trainable_params").at("mean").get<double>())
                : std::string("-"))
        << " | " << mean_spread(r, "valid_ppl") << " | " << mean_spread(r, "test_ppl") << " | "
        << (per_word ? mean_spread(r, "test_ppl_per_word") + " | " : "")
        << mean_spread(r, "train_ppl") << " | " << duration(time.seconds(r)) << " | "
        << fixed(time.tokens_per_second(r), 0) << " | " << r.at("runs").get<size_t>() << " |\n";
  }
  return out.str();
}

std::string embeddings_table(const json& summary) {
  return comparison_table(
      summary,
      {"wall time", "train tokens/s",
       [](const json& row) { return row.at("wall_s").at("mean").get<double>(); },
       [](const json& row) { return row.at("train_tokens_per_s").at("mean").get<double>(); }});
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

// A study's data, in one line. The data-size sweep describes each of its shares
// ({"f0.05": ..., "f1": ...}); the largest share stands for the corpus there (the table gives
// each share's size).
namespace {

// A run's mean test NLL per token (nats) in each band it recorded.
std::map<std::string, double> band_nll(const json& run) {
  std::map<std::string, double> out;
  if (run.contains("test_bands"))
    for (const auto& [band, b] : run.at("test_bands").items())
      out[band] = b.at("nll_sum").get<double>() / b.at("tokens").get<double>();
  return out;
}

// The bands some run of `files` recorded, in kBands' order: a subword study has no <unk>
// band, and a column of dashes says nothing.
std::vector<const char*> recorded_bands(const RunFiles& files) {
  std::vector<const char*> bands;
  for (const char* band : kBands)
    for (const auto& [key, by_seed] : files)
      if (std::ranges::any_of(by_seed, [&](const auto& seed_run) {
            const json& run = *seed_run.second;
            return run.contains("test_bands") && run.at("test_bands").contains(band);
          })) {
        bands.push_back(band);
        break;
      }
  return bands;
}

// One table row: the row's name, its seeds, then each band's cell by `cell` from the band's
// values ("-" for a band without any).
std::string band_row(const RowKey& key, size_t seeds, const std::vector<const char*>& bands,
                     const std::map<std::string, std::vector<double>>& by_band,
                     const std::function<std::string(const std::vector<double>&)>& cell) {
  std::string row = "| " + key.first + " | " + key.second + " | " + std::to_string(seeds) + " |";
  for (const char* band : bands) {
    const auto found = by_band.find(band);
    row += " " + (found == by_band.end() ? std::string("-") : cell(found->second)) + " |";
  }
  return row + "\n";
}

}  // namespace

std::string band_table(const RunFiles& files) {
  const std::vector<const char*> bands = recorded_bands(files);
  std::map<std::string, size_t> tokens;  // each band's test tokens (the same for every run)
  std::ostringstream rows;
  for (const auto& [key, by_seed] : files) {
    std::map<std::string, std::vector<double>> ppl;
    size_t seeds = 0;
    for (const auto& [seed, run] : by_seed) {
      if (!run->contains("test_bands")) continue;
      ++seeds;
      for (const auto& [band, b] : run->at("test_bands").items()) {
        const double n = b.at("tokens").get<double>();
        ppl[band].push_back(std::exp(b.at("nll_sum").get<double>() / n));
        tokens[band] = b.at("tokens").get<size_t>();
      }
    }
    if (seeds == 0) continue;
    rows << band_row(key, seeds, bands, ppl, [](const std::vector<double>& values) {
      const experiments::Spread s = experiments::spread_of(values);
      return fixed(s.mean, 1) + (s.n > 1 ? " ± " + fixed(s.sd, 1) : "");
    });
  }
  if (rows.str().empty()) return "";
  std::string header = "| model | embedding | seeds |", rule = "|---|---|---:|";
  for (const char* band : bands) {
    header +=
        " " + std::string(band) + ": " + thousands(static_cast<double>(tokens[band])) + " tokens |";
    rule += "---:|";
  }
  const bool unk = std::ranges::find(bands, std::string_view("<unk>")) != bands.end();
  return std::string(
             "Test perplexity by how often the target occurs in the training split (mean "
             "± sd over the seeds that recorded it") +
         (unk ? "; `<unk>`: the words outside the vocabulary, one row of the table for all of them"
              : "") +
         "):\n\n" + header + "\n" + rule + "\n" + rows.str() + "\n";
}

std::vector<BandDifferences> band_differences(const RunFiles& files, const std::string& reference) {
  std::vector<BandDifferences> out;
  for (const auto& [key, by_seed] : files) {
    if (key.second == reference) continue;
    const RowKey reference_key{key.first, reference};
    const auto ref =
        std::ranges::find(files, reference_key, [](const auto& row) { return row.first; });
    if (ref == files.end()) continue;
    BandDifferences row{key, 0, {}};
    for (const auto& [seed, run] : by_seed) {
      const auto other = ref->second.find(seed);
      if (other == ref->second.end()) continue;
      const auto mine = band_nll(*run), theirs = band_nll(*other->second);
      if (mine.empty() || theirs.empty()) continue;
      ++row.seeds;
      for (const auto& [band, nll] : mine)
        if (const auto t = theirs.find(band); t != theirs.end())
          row.by_band[band].push_back(nll - t->second);
    }
    if (row.seeds > 0) out.push_back(std::move(row));
  }
  return out;
}

std::string band_difference_cell(const std::vector<double>& differences) {
  return band_difference_cell(experiments::t_interval(differences));
}

std::string band_difference_cell(const experiments::TInterval& i) {
  const auto signed_fixed = [](double v) { return (v > 0 ? "+" : "") + fixed(v, 3); };
  return signed_fixed(i.mean) +
         (i.n > 1 ? " (" + signed_fixed(i.low) + " to " + signed_fixed(i.high) + ")" : "");
}

std::string band_verdicts(const BandDifferences& row) {
  std::string cells, lower, higher;
  for (const char* band : kBands) {
    const auto found = row.by_band.find(band);
    if (found == row.by_band.end()) continue;
    const experiments::TInterval i = experiments::t_interval(found->second);
    cells += (cells.empty() ? "" : ", ") + std::string(band) + " " + band_difference_cell(i);
    if (i.high < 0) lower += (lower.empty() ? "" : ", ") + std::string(band);
    if (i.low > 0) higher += (higher.empty() ? "" : ", ") + std::string(band);
  }
  // Exploratory: these intervals are outside the family Holm's correction runs over, so they
  // are listed, not turned into verdicts.
  return cells + "; uncorrected interval below zero in: " + (lower.empty() ? "none" : lower) +
         "; above zero in: " + (higher.empty() ? "none" : higher);
}

std::string band_difference_table(const RunFiles& files, const std::string& reference,
                                  std::string_view opening) {
  const std::vector<const char*> bands = recorded_bands(files);
  std::ostringstream rows;
  for (const BandDifferences& row : band_differences(files, reference))
    rows << band_row(row.key, row.seeds, bands, row.by_band, [](const std::vector<double>& values) {
      return band_difference_cell(values);
    });
  if (rows.str().empty()) return "";
  std::string header = "| model | embedding | seeds |", rule = "|---|---|---:|";
  for (const char* band : bands) {
    header += " " + std::string(band) + " |";
    rule += "---:|";
  }
  return std::string(opening) + ", each row against its model's `" + reference +
         "` row seed by seed (the seeds both recorded): the mean difference in test loss "
         "per token of the band (nats; negative: the row predicts the band better) and, from "
         "two seeds on, its 95% t interval over the seeds. Where a row gains or loses, frequent "
         "tokens or rare ones; a perplexity ratio is e to the difference:\n\n" +
         header + "\n" + rule + "\n" + rows.str() + "\n";
}

std::string budget_of(const json& summary) {
  if (!summary.contains("base_config")) return "";
  const train::TrainConfig c = config_of(summary.at("base_config"));
  return c.steps > 0 ? std::to_string(c.steps) + (c.steps == 1 ? " step" : " steps")
                     : std::to_string(c.epochs) + (c.epochs == 1 ? " epoch" : " epochs");
}

bool on_brown(const json& summary) {
  return !summary.contains("base_config") ||
         config_of(summary.at("base_config")).data.corpus_file.empty();
}

std::string data_line(const json& summary) {
  const json data = summary.value("data", json(""));
  if (data.is_string()) return markdown_text(data.get<std::string>());
  if (!data.is_object() || data.empty()) return "";
  auto share = [](const std::string& tag) {  // "f0.25" -> 0.25
    return tag.empty() ? 0.0 : std::strtod(tag.c_str() + 1, nullptr);
  };
  auto largest = data.items().begin();
  for (auto it = data.items().begin(); it != data.items().end(); ++it)
    if (share(it.key()) > share(largest.key())) largest = it;
  return markdown_text(largest.value().get<std::string>());
}

// The setup of a study's runs in one sentence. The model's shape comes from a run's own
// configuration when one is given: an experiment may set fields per run (the NPLM's hidden
// width is its d_model, so that its output matrix can be tied), and the study's base
// configuration then holds the flag's value, not the run's.
std::string training_setup(const json& summary, const json& run_config) {
  if (!summary.contains("base_config")) return "";
  const train::TrainConfig c = config_of(summary.at("base_config"));
  const train::ModelConfig m = run_config.is_object() ? config_of(run_config).model : c.model;
  std::ostringstream out;
  out << m.name << ", d_model " << m.d_model;
  if (m.name == "gpt")
    out << ", " << m.layers << " layers, " << m.heads << " heads, context " << m.context
        << (m.positions == nn::Positions::learned
                ? ""
                : ", " + std::string(base::name_of(nn::kPositionsNames, m.positions)) +
                      " positions");
  else if (m.name == "nplm")
    out << ", n " << m.ngram << ", " << m.hidden << " hidden units, " << (m.direct ? "" : "no ")
        << "direct connections, windows of " << m.context << " predictions";
  else if (m.name == "lstm" || m.name == "gru")
    out << ", " << m.layers << " layers of " << m.hidden << " hidden units, state carried "
        << "across batches (truncated backpropagation through time over " << m.context
        << " tokens)";
  else
    out << ", context " << m.context;
  // What it reads, when not Bengio's words (the run's own configuration, like the shape).
  const std::string tokenizer =
      run_config.is_object() ? config_of(run_config).data.tokenizer : c.data.tokenizer;
  if (tokenizer == "gpt2")
    out << ", reading GPT-2's byte-level BPE tokens";
  else if (tokenizer != "word")
    // By its folder's name, not the machine's path: REPORT.md does not depend on where it ran.
    out << ", reading the byte-level BPE tokens of "
        << markdown_code(base::last_path_component(tokenizer));
  out << ", batch " << c.batch << ", " << c.optimizer << " lr " << c.lr;
  if (c.weight_decay > 0) {
    out << ", weight decay " << c.weight_decay;
    // --table-decay: which vocabulary matrices decay (the default, output, needs no words).
    if (c.table_decay == optim::TableDecay::none)
      out << " (not on the vocabulary matrices)";
    else if (c.table_decay == optim::TableDecay::all)
      out << " (the vocabulary matrices too)";
  }
  out << ", " << c.warmup << " warm-up steps, " << base::name_of(optim::kScheduleNames, c.schedule)
      << ", dropout " << fixed(c.model.dropout, 2) << ", up to " << c.epochs << " epochs, patience "
      << c.patience;
  // Early stopping (and the per-epoch curve) watch the first valid_limit validation tokens; the
  // tables' figures are of the whole split.
  if (c.valid_limit > 0)
    out << " on the first " << thousands(static_cast<double>(c.valid_limit))
        << " validation tokens (the tables: the whole split)";
  out << ".";
  return out.str();
}

// The verdicts' method, in the words the tables and the conclusions use.
std::string method_sentence(const std::string& family) {
  return std::string(
             "A row is better or worse only when a paired t-test of the per-seed "
             "differences, with Holm's correction across every comparison of ") +
         family +
         " (family-wise error 5%), says so; otherwise it is not decided, and a row with one seed "
         "is not tested.";
}

std::string t_interval_text(const experiments::TInterval& interval) {
  return fixed(interval.low, 1) + " to " + fixed(interval.high, 1);
}

std::string verdict_text(const Comparison& c) {
  const std::string verdict = base::name_of(kVerdictNames, c.verdict);
  if (c.verdict != Verdict::not_decided) return verdict;
  return verdict + (c.seeds_to_decide > 0
                        ? " (" + std::to_string(c.seeds_to_decide) + " seeds would decide it)"
                        : " (not within 1,000 seeds at this spread)");
}

std::string significance_rows(const std::vector<Comparison>& rows, const std::string& reference,
                              const std::string& family) {
  if (rows.empty()) return "";
  std::ostringstream out;
  for (const Comparison& c : rows) {
    const std::string per_seed = c.seeds == 1
                                     ? fixed(c.per_seed.mean, 1)
                                     : fixed(c.per_seed.sd, 1) + " (" + fixed(c.per_seed.min, 1) +
                                           " to " + fixed(c.per_seed.max, 1) + ")";
    out << "| " << c.key.first << " | " << c.key.second << " | " << fixed(c.per_seed.mean, 1)
        << " | " << (c.seeds > 1 ? t_interval_text(c.interval) : "-") << " | " << per_seed << " | "
        << (c.seeds > 1 ? p_value(c.test.p) : "-") << " | "
        << (c.seeds > 1 ? p_value(c.holm_p) : "-") << " | " << verdict_text(c) << " |\n";
  }
  return "Each row against " + reference +
         " embeddings of the same model, over the seeds both rows ran: the mean difference in "
         "test perplexity seed by seed, its 95% Student t interval over the seeds (the interval "
         "the paired t-test inverts: it excludes zero exactly when p < 0.05 before Holm's "
         "correction), and the per-seed spread (standard deviation, range). " +
         method_sentence(family) +
         " An undecided row names the seeds that would decide it at its mean difference and "
         "spread, even under Bonferroni's correction over the family (Holm's never asks more)."
         "\n\n"
         "| model | embedding | test ppl difference | 95% t interval (seeds) | per seed "
         "sd (range) | p (t-test over seeds) | Holm p | verdict |\n"
         "|---|---|---:|---:|---:|---:|---:|---|\n" +
         out.str() + "\n";
}

// "best epoch/epochs run (training time)" for each seed of each row, from the runs' own
// files: the training time adds up over the sittings of a resumed run, where wall_s counts
// the last process only.
std::string epochs_table(const RunFiles& files, RunClock clock) {
  const bool cpu = clock == RunClock::cpu;
  std::ostringstream out;
  out << "| model | embedding | best epoch / epochs run (" << (cpu ? "CPU" : "training")
      << " time), by seed; cap: stopped by its epoch cap, not by early stopping |\n"
      << "|---|---|---|\n";
  for (const auto& [key, by_seed] : files) {
    std::string cell;
    for (const auto& [seed, file] : by_seed) {
      const json& run = *file;
      cell += (cell.empty() ? "" : ", ") + std::to_string(run.value("best_epoch", size_t{0})) +
              "/" + std::to_string(run.contains("epochs") ? run.at("epochs").size() : 0);
      std::string notes;
      if (cpu || run.contains("train_seconds") || run.contains("wall_s"))
        notes = duration(run_seconds(run, clock));
      // Ran out of epochs before validation stopped improving: not converged by that rule.
      if (run.contains("stopped_early") && !run.at("stopped_early").get<bool>())
        notes += notes.empty() ? "cap" : ", cap";
      if (!notes.empty()) cell += " (" + notes + ")";
    }
    out << "| " << key.first << " | " << key.second << " | " << cell << " |\n";
  }
  return out.str();
}

// "  - learned-tied: -14.9 (95% interval -17.2 to -12.6; 3 seeds, p 0.004, Holm 0.07): not
// decided" for each row, the model's name first when `with_model`.
std::string verdict_lines(const std::vector<Comparison>& rows, bool with_model) {
  std::string out;
  for (const Comparison& c : rows)
    out += "  - " + (with_model ? c.key.first + ", " : "") + c.key.second + ": " +
           fixed(c.per_seed.mean, 1) +
           (c.seeds == 1 ? " (1 seed"
                         : " (95% t interval " + t_interval_text(c.interval) + "; " +
                               std::to_string(c.seeds) + " seeds, p " + p_value(c.test.p) +
                               ", Holm " + p_value(c.holm_p)) +
           "): " + verdict_text(c) + "\n";
  return out;
}

namespace {

// One run of a search: "291.0 / 264.3 (6 of 8)", "(12 of 12, cap)" at the cap.
std::string search_cell(const json& run, size_t cap, const char* valid, const char* test) {
  const size_t epochs = run.at("epochs").size();
  return fixed(run.at(valid).get<double>(), 1) + " / " + fixed(run.at(test).get<double>(), 1) +
         " (" + std::to_string(run.at("best_epoch").get<size_t>()) + " of " +
         std::to_string(epochs) + (epochs >= cap ? ", cap)" : ")");
}

// A search's runs: its groups (width, NAME of NAME_lr<rate>) -> rate -> each arm's cell and the
// sum of the arms' validation perplexities.
struct Search {
  struct Rate {
    std::map<std::string, std::string> cells;  // arm -> its run
    double valid_sum = 0;
  };
  std::map<std::pair<size_t, std::string>, std::map<float, Rate>> groups;
  std::set<std::string> arms;
  bool per_word = true;  // where every run has it: a tokenization's rates on the words' scale
};

Search load_search(const fs::path& folder) {
  std::vector<std::pair<std::string, json>> searched;  // folder name, summary
  for (const fs::path& f : base::folders_inside(folder))
    if (json summary = load_summary(f / "summary.json"); !summary.is_null())
      searched.emplace_back(f.filename().string(), std::move(summary));
  Search s;
  for (const auto& [name, summary] : searched)
    for (const auto& run : summary.at("runs"))
      s.per_word = s.per_word && run.contains("valid_ppl_per_word");
  const char* valid = s.per_word ? "valid_ppl_per_word" : "valid_ppl";
  for (const auto& [name, summary] : searched) {
    const train::TrainConfig c = config_of(summary.at("base_config"));
    Search::Rate& rate = s.groups[{c.model.d_model, name.substr(0, name.rfind("_lr"))}][c.lr];
    for (const auto& run : summary.at("runs")) {
      const std::string arm = run.at("mode").get<std::string>();
      s.arms.insert(arm);
      rate.cells[arm] =
          search_cell(run, c.epochs, valid, s.per_word ? "test_ppl_per_word" : "test_ppl");
      rate.valid_sum += run.at(valid).get<double>();
    }
  }
  return s;
}

}  // namespace

std::string search_table(const fs::path& results, const fs::path& search, const std::string& group,
                         const std::string& made_by) {
  const Search s = load_search(results / search);
  if (s.groups.empty()) return "";
  std::ostringstream md;
  md << "The search for the learning rate (" << markdown_code(search.generic_string() + "/") << ", "
     << markdown_code(made_by) << "): seed 1 of each arm at each rate, validation / test "
     << (s.per_word ? "perplexity per word" : "perplexity")
     << " (best epoch of the epochs run; cap: the run used all its epochs). The rate whose "
        "arms have the lowest mean validation perplexity is the rate chosen (bold), among the "
        "rates where every arm has run:\n\n| "
     << group << " | lr |";
  for (const std::string& arm : s.arms) md << " " << markdown_text(arm) << " |";
  md << " mean valid ppl |\n|---|---:|";
  for (size_t i = 0; i < s.arms.size(); ++i) md << "---|";
  md << "---:|\n";
  const auto complete = [&](const Search::Rate& r) { return r.cells.size() == s.arms.size(); };
  for (const auto& [key, rates] : s.groups) {
    std::optional<float> lowest;
    for (const auto& [lr, r] : rates)
      if (complete(r) && (!lowest || r.valid_sum < rates.at(*lowest).valid_sum)) lowest = lr;
    for (const auto& [lr, r] : rates) {
      char rate[32];
      std::snprintf(rate, sizeof rate, "%g", static_cast<double>(lr));  // 0.0005, not 5e-04
      md << "| " << markdown_text(key.second) << " | " << rate << " |";
      for (const std::string& arm : s.arms)
        md << " " << (r.cells.contains(arm) ? r.cells.at(arm) : "-") << " |";
      const std::string mean = fixed(r.valid_sum / static_cast<double>(r.cells.size()), 1);
      const std::string cell = !complete(r) ? "-" : lowest == lr ? "**" + mean + "**" : mean;
      md << " " << cell << " |\n";
    }
  }
  return md.str() + "\n";
}

}  // namespace tg::experiments::report
