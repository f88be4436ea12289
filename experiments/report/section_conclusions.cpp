#include <algorithm>
#include <cmath>
#include <sstream>

#include "experiments/report/format.hpp"
#include "experiments/report/paper.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/report/tables.hpp"
#include "experiments/significance.hpp"
#include "train/optimizers.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Where section 1c compares tying in `folder`'s model under one decay policy, or why it does
// not yet.
std::string fair_tie_pointer(const std::string& folder, const FairTie& tie) {
  for (const TieEffect& e : tie.pairings)
    if (e.pairing->tied == folder) return "section 1c compares tying under one policy";
  for (const TiePairing& p : kTiePairings)
    if (p.tied == folder)
      return "section 1c will compare tying under one policy once `converged/" +
             std::string(p.untied) + "/` has runs";
  return "section 1c has no pairing for this model";
}

// What tying costs in parameters, beside its verdict: the input table doubles as the output
// matrix, so one vocabulary x d_model table is trained instead of two.
std::string tying_cost(const json& summary, const std::string& folder, const FairTie& tie) {
  const auto params_of = [&](const std::string& mode) {
    for (const auto& r : summary.at("rows"))
      if (r.at("mode") == mode) return r.at("trainable_params").at("mean").get<double>();
    return 0.0;
  };
  const double untied = params_of("learned"), tied = params_of("learned-tied");
  if (untied <= 0 || tied <= 0) return "";
  // AdamW decays an untied output matrix but no embedding table, a tied one included, unless
  // the runs chose --table-decay none or all.
  const train::TrainConfig c = config_of(summary.at("base_config"));
  const bool confounded = train::decays_tables_by_role(c.optimizer) && c.weight_decay > 0 &&
                          c.table_decay == optim::TableDecay::output;
  return "  - tying trains " + thousands(tied) + " parameters instead of " + thousands(untied) +
         " (" + fixed(100 * (1 - tied / untied), 0) + "% fewer)" +
         (confounded
              ? "; the comparison is confounded: the untied output matrix has weight decay " +
                    fixed(c.weight_decay, 2) + ", the tied table none (--table-decay output; " +
                    fair_tie_pointer(folder, tie) + ")"
              : "") +
         "\n";
}

// The GPT's verdicts regrouped by how much data it saw, and by what it reads, for the
// study's question: which embeddings beat learned ones, and when. A one-seed verdict is not yet
// a decision.
std::string in_short(const std::vector<ConvergedStudy>& converged, const Study& sweep) {
  std::vector<std::pair<std::string, std::vector<const Comparison*>>> shares;
  const auto add = [&](const std::string& share, const Comparison& c) {
    auto at = std::ranges::find(shares, share, [](const auto& s) { return s.first; });
    if (at == shares.end()) at = shares.insert(shares.end(), {share, {}});
    at->second.push_back(&c);
  };
  for (const Comparison& c : sweep.comparisons)
    if (c.key.first.starts_with("gpt ")) add(c.key.first.substr(4) + " of the training split", c);
  // The GPT's studies in converged order, words first, a subword one named by what it reads.
  for (const ConvergedStudy& s : converged)
    for (const Comparison& c : s.study.comparisons)
      if (c.key.first == "gpt")
        add("the whole training split" + (s.reads.empty() ? "" : ", in " + s.reads), c);
  if (shares.empty()) return "";
  std::string out =
      "- **In short** (GPT; each embedding mode against learned embeddings, the language model "
      "trained on the same share; -full: its word2vec trained on the whole split, 1 / share "
      "times the text the language model saw, so a -full row measures that extra text, not "
      "word2vec against a table learned end to end):\n";
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

// The calibration range, and the paper's MLPs on the paper's scale: within 5% of their figure
// only when the whole calibrated range is.
std::string calibration_lines(const Calibration& calibration, const FolderFiles& paper) {
  if (!calibration.known()) return "";
  std::string names;
  for (const auto& [name, ratio] : calibration.ratios) names += (names.empty() ? "" : ", ") + name;
  const bool one = calibration.ratios.size() == 1;
  std::string out =
      "- **Calibration.** Our " +
      std::string(one ? names + "'s test perplexity is " : "n-grams' test perplexities are ") +
      fixed(calibration.low, 3) + (one ? "" : " to " + fixed(calibration.high, 3)) +
      " times the paper's" + (one ? "" : " for the same models (" + names + ")") +
      " on their copy of Brown: our test split is that much harder (Calibration).\n";
  for (const PaperMlp& p : kPaperMlps) {
    const json& run = file_in(paper, std::string(p.name) + "_seed1.json");
    if (run.is_null() || run.contains("interrupted")) continue;
    const double test = run.at("test_ppl").get<double>();
    const Agreement a = agreement(calibration.on_paper_scale(test / p.test));
    out += "- **The paper's " + std::string(p.name) + "** reaches test perplexity " +
           fixed(test, 1) + " against their " + fixed(p.test, 0) + ": " +
           calibrated_range(calibration, test / p.test, 3) + " after calibration (" +
           (a == Agreement::within    ? "within 5%"
            : a == Agreement::outside ? "outside 5%"
                                      : "the range straddles 5%: neither within nor outside") +
           "; The NPLM against Bengio et al.).\n";
  }
  return out;
}

// The best of ours on the paper's scale against the best of theirs (an MLP mixed with a
// trigram). A model run over several seeds comes before a single run that happens to score
// lower, which is named beside it: one seed's luck is not the model's. The rows are ranked, so
// the first match is the best; the n-grams have no seed.
std::string best_model_line(const std::vector<ScaleRow>& scale, const Calibration& calibration) {
  const bool several = std::ranges::any_of(scale, [](const ScaleRow& r) { return r.seeds > 1; });
  const auto best =
      std::ranges::find_if(scale, [&](const ScaleRow& r) { return r.seeds > (several ? 1 : 0); });
  const auto first_neural =
      std::ranges::find_if(scale, [](const ScaleRow& r) { return r.seeds > 0; });
  if (!calibration.known() || best == scale.end()) return "";
  std::string out = "- **Best model" + std::string(several ? " over several seeds" : "") + ":** " +
                    best->model + ", test perplexity " + fixed(best->mean, 1) + " (" +
                    std::to_string(best->seeds) + (best->seeds == 1 ? " seed" : " seeds") + "), " +
                    calibrated_range(calibration, best->mean, 1) +
                    " on the paper's scale, beside the paper's best, " + fixed(kPaperBest, 0) +
                    " (an MLP mixed with a trigram): a comparison across two copies of the corpus "
                    "that holds only as far as the calibration does (All models on one scale)";
  if (first_neural != best)
    out +=
        "; a single run scores lower: " + first_neural->model + ", " + fixed(first_neural->mean, 1);
  return out + ".\n";
}

// Whether another model's verdicts are the GPT's, mode by mode: do the conclusions hold for it?
// Only modes both models have tested; "" when they share none. Not decided is not a contrary
// verdict: a mode decided for one model only is listed apart, with both mean differences, so a
// reader sees whether the undecided one points the same way.
std::string same_verdicts_as_gpt(const std::string& label, const Study& study, const Study& gpt) {
  std::string same, opposite, one_only;
  const auto add = [](std::string& list, const std::string& item) {
    list += (list.empty() ? "" : ", ") + item;
  };
  const auto difference = [](const Comparison& c) {
    return std::string(c.per_seed.mean > 0 ? "+" : "") + fixed(c.per_seed.mean, 1);
  };
  for (const Comparison& c : study.comparisons) {
    const auto theirs = std::ranges::find(gpt.comparisons, c.key.second,
                                          [](const Comparison& g) { return g.key.second; });
    if (theirs == gpt.comparisons.end() || c.verdict == Verdict::one_seed ||
        theirs->verdict == Verdict::one_seed)
      continue;
    const std::string here = base::name_of(kVerdictNames, c.verdict),
                      there = base::name_of(kVerdictNames, theirs->verdict);
    if (c.verdict == theirs->verdict)
      add(same, c.key.second + " (" + here + ")");
    else if (c.verdict != Verdict::not_decided && theirs->verdict != Verdict::not_decided)
      add(opposite, c.key.second + " (here " + here + ", gpt " + there + ")");
    else
      add(one_only, c.key.second + " (here " + here + " at " + difference(c) + ", gpt " + there +
                        " at " + difference(*theirs) + ")");
  }
  if (same.empty() && opposite.empty() && one_only.empty()) return "";
  const auto or_none = [](const std::string& list) { return list.empty() ? "none" : list; };
  return "- **Does the GPT's verdict hold for " + label + "?** The same verdict: " + or_none(same) +
         "; the opposite: " + or_none(opposite) +
         "; decided for one of the two only (mean test perplexity differences against learned): " +
         or_none(one_only) + ".\n";
}

}  // namespace

// Each model read in subword tokens against the same model and embedding mode in words, on the
// one per-word scale: the word-level figure as it is and with every <unk> spelled out (an upper
// bound of what <unk> for free is worth), so that the reader sees whether words win on either.
// Each side is a Welch t-test over the seeds (the runs are not paired: seed 1 in words and seed
// 1 in subword tokens share nothing but the number), Holm-corrected across every test listed.
std::string words_against_subwords(const std::vector<ScaleRow>& scale) {
  struct Pair {
    const ScaleRow *sub, *word;
    std::vector<double> spelled;  // the word-level runs' figures with <unk> spelled out
  };
  std::vector<Pair> pairs;
  std::vector<double> p;  // two per pair: <unk> for free, then spelled out
  for (const ScaleRow& sub : scale) {
    if (sub.tokens == "words" || sub.seeds == 0) continue;
    const auto word = std::ranges::find_if(scale, [&](const ScaleRow& r) {
      return r.tokens == "words" && r.model == sub.model && r.spelled > 0;
    });
    if (word == scale.end()) continue;
    Pair pair{&sub, &*word, word->per_seed};
    for (double& ppl : pair.spelled) ppl *= word->spelled / word->mean;
    p.push_back(experiments::welch_t_test(word->per_seed, sub.per_seed).p);
    p.push_back(experiments::welch_t_test(pair.spelled, sub.per_seed).p);
    pairs.push_back(std::move(pair));
  }
  if (pairs.empty()) return "";
  const std::vector<double> holm = experiments::holm_adjust(p);
  // Which side is lower, where the corrected test decides.
  const auto lower = [](double word, double sub, double p_holm) -> std::string {
    if (p_holm >= 0.05) return "not decided";
    return word < sub ? "words lower" : "subword tokens lower";
  };
  const auto seeds = [](const ScaleRow& r) {
    return std::to_string(r.seeds) + (r.seeds == 1 ? " seed" : " seeds");
  };
  std::string lines;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const ScaleRow &sub = *pairs[i].sub, &word = *pairs[i].word;
    const double p_free = holm[2 * i], p_spelled = holm[2 * i + 1];
    const std::string free = lower(word.mean, sub.mean, p_free),
                      spelled = lower(word.spelled, sub.mean, p_spelled);
    const std::string verdict =
        free == spelled ? (free == "not decided" ? free : free + " on both")
                        : free + " with `<unk>` for free, " + spelled + " with it spelled out";
    lines += "  - " + sub.model + ": " + fixed(sub.mean, 1) + " in " + sub.tokens + " (" +
             seeds(sub) + "), against " + fixed(word.mean, 1) + " in words (" + seeds(word) +
             "), " + fixed(word.spelled, 1) + " with `<unk>` spelled out: " + verdict +
             " (Holm p " + p_value(p_free) + " and " + p_value(p_spelled) + ")\n";
  }
  return "- **Words against subword tokens** (All models on one scale), test perplexity per "
         "word, a word-level model also with every `<unk>` charged its spelling (an upper "
         "bound); each side a Welch t-test over the seeds, Holm-corrected across the " +
         std::to_string(p.size()) +
         " tests of this list. One setup for both: the model size, learning rate and 64-token "
         "context chosen for words (fewer words fit in 64 subword tokens), and the subword runs "
         "not tuned for their tokenization (the Brown BPE's stopped at their epoch cap); so these "
         "say which is lower in this setup, not which tokenization is better:\n" +
         lines;
}

std::string tying_by_band(const std::vector<ConvergedStudy>& converged) {
  std::string lines;
  for (const auto& [folder, reads, label, study] : converged)
    for (const BandDifferences& row : band_differences(study.files, "learned")) {
      if (row.key.second != "learned-tied" || row.seeds < 2) continue;
      lines += "  - " + label + " (" + std::to_string(row.seeds) +
               " seeds): " + band_verdicts(row) + "\n";
    }
  if (lines.empty()) return "";
  return "- **Where tying gains, by band** (section 1; exploratory: outside the family the "
         "verdicts are corrected over, so no verdict is drawn): test loss per token of the "
         "target's frequency band in training, tied minus learned (nats), with 95% t intervals "
         "over the seeds, not corrected across the bands or the comparisons; the bands whose "
         "interval lies below or above zero are listed:\n" +
         lines;
}

// What the converged runs say, each verdict with the numbers it rests on and its section:
// rendered from the same comparisons as the tables, so it cannot drift from them.
std::string conclusions_section(const Findings& f) {
  std::ostringstream out;
  out << in_short(f.converged, f.sweep) << calibration_lines(f.calibration, f.paper)
      << best_model_line(f.scale, f.calibration) << words_against_subwords(f.scale);
  for (const auto& [folder, reads, label, study] : f.converged) {
    if (study.comparisons.empty()) continue;
    // A study whose runs used their whole epoch budget says so where its verdicts are.
    const EpochCap cap = epoch_cap(study);
    const std::string when =
        cap.capped == 0
            ? "at convergence**"
            : "at convergence or the epoch cap** (" + std::to_string(cap.capped) + " of its " +
                  std::to_string(cap.runs) + " runs used all " + std::to_string(cap.epochs) +
                  " epochs, not converged by the early-stopping rule)";
    out << "- **" << label << " " << when << ", test perplexity against learned embeddings "
        << "(section 1, `converged/" << folder << "/`):\n"
        << verdict_lines(study.comparisons) << tying_cost(study.summary, folder, f.tie);
  }
  for (const auto& [folder, reads, label, study] : f.converged)
    if (folder != "gpt") out << same_verdicts_as_gpt(label, study, f.gpt());
  out << tying_by_band(f.converged) << fair_tie_conclusion(f.tie);
  out << precision_conclusion(f.bf16);
  if (!f.sweep.comparisons.empty())
    out << "- **With less data** (section 2), each share's modes against learned at the same "
           "share:\n"
        << verdict_lines(f.sweep.comparisons, true);
  out << life_cycle_conclusion(f.converged_life) << optimizer_rows_conclusion(f.optimizers)
      << lazy_adam_conclusion(f.lazy) << census_conclusion(f.gpt2_life);
  if (out.str().empty()) return "";
  if (f.compute.runs > 0)
    out << "- **Compute.** " << f.compute.runs << " runs, " << duration(f.compute.train_seconds)
        << " of training on one core each (Compute).\n";
  return "## Conclusions\n\nFrom the converged runs and the baselines below. " + method_sentence() +
         " The interval resamples the seeds and, within each, runs of adjacent test blocks."
         "\n\n" +
         out.str() + "\n";
}
}  // namespace tg::experiments::report
