#include <algorithm>
#include <sstream>

#include "apps/ngram_config.hpp"
#include "base/files.hpp"
#include "experiments/report/format.hpp"
#include "experiments/report/paper.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/significance.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The tokens a run predicts: "words" (the vocabulary's words, the rest <unk>), or its subword
// tokenizer's name and size.
std::string tokens_of(const json& run) {
  if (!run.contains("tokenizer")) return "words";
  const json& t = run.at("tokenizer");
  return markdown_text(base::last_path_component(t.at("name").get<std::string>())) + " BPE, " +
         grouped(t.at("tokens").get<size_t>()) + " tokens";
}

}  // namespace

// Our n-gram baselines (build/bin/ngram, in ngram/) next to Bengio et al.'s rows for the
// same models on their copy of Brown: the ratio measures how much harder our split is.
// `ngram`: the files of dir/ngram.
std::string calibration_section(const FolderFiles& ngram) {
  std::vector<json> runs;  // word-level ones: the paper's n-grams read words
  for (const auto& [name, run] : ngram)
    if (!run.contains("tokenizer")) runs.push_back(run);
  if (runs.empty()) return "";
  const auto key = [](const json& run) {
    const apps::NgramConfig c = apps::NgramConfig::from_json(run.at("config"));
    return std::make_pair(base::name_of(text::kNgramSmoothingNames, c.smoothing), c.order);
  };
  std::sort(runs.begin(), runs.end(),
            [&](const json& a, const json& b) { return key(a) < key(b); });
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
    const apps::NgramConfig model = apps::NgramConfig::from_json(r.at("config"));
    const double test = r.at("test_ppl").get<double>();
    const double theirs = paper_ngram_test(model.smoothing, model.order).value_or(0);
    out << "| " << model.name() << " | " << fixed(r.at("valid_ppl").get<double>(), 1) << " | "
        << fixed(test, 1) << " | " << (theirs > 0 ? fixed(theirs, 0) : "") << " | "
        << (theirs > 0 ? fixed(test / theirs, 3) : "") << " |\n";
  }
  const Calibration c = calibration_of(ngram);
  if (c.known())
    out << "\nThe calibration range is that of the last column, " << fixed(c.low, 3) << " to "
        << fixed(c.high, 3)
        << ": a figure of ours is divided by each end to put it on the paper's scale, and agrees "
           "with the paper's within 5% only when the whole range does. Calibration corrects for "
           "how much harder our split is, not for what else differs: the corpus version, the "
           "split sizes, back-off against interpolated smoothing.\n";
  return out.str() + "\n";
}

std::string calibrated_range(const Calibration& c, double ours, int decimals) {
  if (!c.known()) return "-";
  const auto [low, high] = c.on_paper_scale(ours);
  const std::string a = fixed(low, decimals), b = fixed(high, decimals);
  return a == b ? a : a + " to " + b;
}

std::string paper_nplm_section(const FolderFiles& paper, const Calibration& calibration) {
  std::ostringstream rows;
  for (const PaperMlp& p : kPaperMlps) {
    for (int seed = 1; seed <= 9; ++seed) {
      const std::string stem = std::string(p.name) + "_seed" + std::to_string(seed);
      const json& run = file_in(paper, stem + ".json");
      if (run.is_null() || run.contains("interrupted")) continue;
      const json& mix = file_in(paper, "mixture_" + stem + ".json");
      const double test = run.at("test_ppl").get<double>();
      const auto calibrated = [&](double ours, double theirs) {
        return calibrated_range(calibration, ours / theirs, 3);
      };
      rows << "| " << p.name << " | " << p.n << " | " << p.hidden << " | " << p.features << " | "
           << (p.direct ? "yes" : "no") << " | " << seed << " | " << run.value("best_epoch", 0)
           << " of " << run.at("epochs").size() << " | "
           << fixed(run.at("valid_ppl").get<double>(), 1) << " | " << fixed(test, 1) << " | "
           << fixed(p.test, 0) << " | " << calibrated(test, p.test) << " |\n";
      if (!mix.is_null() && mix.contains("mixture")) {
        const json& m = mix.at("mixture");
        rows << "| " << p.name << " + " << apps::NgramConfig::from_json(mix.at("config")).name()
             << " (weight " << fixed(m.at("weight").get<double>(), 2) << ") | | | | | " << seed
             << " | | " << fixed(m.at("valid_ppl").get<double>(), 1) << " | "
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
         "ours / (theirs x r) for r across the calibration range " +
         (calibration.known() ? fixed(calibration.low, 3) + " to " + fixed(calibration.high, 3)
                              : std::string("(no n-gram baselines yet)")) +
         ": 1.000 means the NPLM matches the paper as closely as the n-grams do.\n\n"
         "| row | n | h | m | direct | seed | best epoch | valid ppl | test ppl | paper test | "
         "calibrated |\n|---|---:|---:|---:|---|---:|---|---:|---:|---:|---:|\n" +
         rows.str() + "\n";
}

namespace {

std::string description_of(const json& run) {
  return run.contains("data") ? markdown_text(run.at("data").value("description", "")) : "";
}

// Mean and sample standard deviation of the test perplexity per word over the finished runs
// among `runs` (a word-level run's per-token figure is its per-word one).
ScaleRow scale_row(std::string model, const std::vector<const json*>& runs, double paper) {
  ScaleRow row{std::move(model), 0, 0, 0, paper};
  std::vector<double> ppl;
  for (const json* run : runs)
    if (run && !run->is_null() && !run->contains("interrupted")) {
      ppl.push_back(run->value("test_ppl_per_word", run->at("test_ppl").get<double>()));
      row.tokens = tokens_of(*run);
      row.data = description_of(*run);
    }
  const experiments::Spread s = experiments::spread_of(ppl);
  row.seeds = s.n;
  row.mean = s.mean;
  row.sd = s.sd;
  row.per_seed = std::move(ppl);
  return row;
}

}  // namespace

UnkSpellingCost unk_spelling_cost(const FolderFiles& ngram) {
  for (const auto& [name, run] : ngram) {
    if (!run.contains("unk_spelling")) continue;
    const json& s = run.at("unk_spelling");
    UnkSpellingCost c;
    c.data = description_of(run);
    c.factor = s.at("test_ppl").get<double>() / run.at("test_ppl").get<double>();
    c.order = s.at("order").get<size_t>();
    c.train_unk = s.at("train_unk").get<size_t>();
    c.test_unk = s.at("test").at("unk").get<size_t>();
    c.test_words = run.at("data").at("test_tokens").get<size_t>();
    c.nats_per_unk = c.test_unk ? s.at("test").at("nll_sum").get<double>() / c.test_unk : 0;
    return c;  // every word-level n-gram of one data has the same
  }
  return {};
}

// Every model of the study in one table on one scale: the n-grams, the paper's NPLM rows and
// the converged models, each with its test perplexity on our split and divided by the
// calibration ratio (what it would be on the paper's copy of Brown if our split is as much
// harder for it as for the Kneser-Ney 5-gram), next to the paper's figure for the same model.
// Ranked by test perplexity.
std::vector<ScaleRow> scale_rows(const FolderFiles& ngram, const FolderFiles& paper,
                                 const std::vector<ConvergedStudy>& converged) {
  std::vector<ScaleRow> rows;
  for (const auto& [name, run] : ngram) {
    const apps::NgramConfig model = apps::NgramConfig::from_json(run.at("config"));
    // The paper's figure is of a word-level model: beside word-level rows only.
    const double paper =
        run.contains("tokenizer") ? 0 : paper_ngram_test(model.smoothing, model.order).value_or(0);
    rows.push_back({model.name(), 0,
                    run.value("test_ppl_per_word", run.at("test_ppl").get<double>()), 0, paper,
                    tokens_of(run), description_of(run)});
  }
  for (const PaperMlp& p : kPaperMlps) {
    std::vector<const json*> runs, mixtures;
    std::string mixture_data;  // the mixture files' (the mixtures themselves do not say)
    for (int seed = 1; seed <= 9; ++seed) {
      const std::string stem = std::string(p.name) + "_seed" + std::to_string(seed);
      runs.push_back(&file_in(paper, stem + ".json"));
      if (const json& mix = file_in(paper, "mixture_" + stem + ".json"); mix.contains("mixture")) {
        mixtures.push_back(&mix.at("mixture"));
        mixture_data = description_of(mix);
      }
    }
    const std::string name = "Bengio et al.'s " + std::string(p.name) + " (n " +
                             std::to_string(p.n) + ", h " + std::to_string(p.hidden) + ", m " +
                             std::to_string(p.features) + (p.direct ? ", direct)" : ")");
    rows.push_back(scale_row(name, runs, p.test));
    rows.push_back(scale_row(name + " + trigram mixture", mixtures, p.mixture_test));
    rows.back().data = mixture_data;
  }
  for (const auto& [folder, reads, label, study] : converged) {
    if (study.summary.is_null()) continue;
    // The model's width and context as far as its configuration names them.
    const train::ModelConfig m = config_of(study.summary.at("base_config")).model;
    const std::string shape = " d" + std::to_string(m.d_model) +
                              (m.name == "nplm" ? " (n " + std::to_string(m.ngram) + ")" : "");
    for (const auto& [key, by_seed] : study.files) {
      std::vector<const json*> runs;
      for (const auto& [seed, run] : by_seed) runs.push_back(run);
      rows.push_back(scale_row(key.first + shape + ", " + key.second + " (section 1)", runs, 0));
    }
  }
  std::erase_if(rows, [](const ScaleRow& r) { return r.mean <= 0; });
  // Spelled out: a word-level row on the data the speller was measured on; a subword row as it
  // is (it spells every word already).
  const UnkSpellingCost spelling = unk_spelling_cost(ngram);
  for (ScaleRow& r : rows)
    if (r.tokens != "words")
      r.spelled = r.mean;
    else if (spelling.known() && r.data == spelling.data)
      r.spelled = r.mean * spelling.factor;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ScaleRow& a, const ScaleRow& b) { return a.mean < b.mean; });
  return rows;
}

std::string one_scale_section(const std::vector<ScaleRow>& rows, const Calibration& calibration,
                              const UnkSpellingCost& spelling) {
  if (!calibration.known() || rows.empty()) return "";
  std::ostringstream out;
  out << "## All models on one scale\n\n"
         "Every model of this report, ranked by test perplexity on our split (mean ± standard "
         "deviation over seeds), and calibrated: the mean divided by each end of the calibration "
         "range, "
      << fixed(calibration.low, 3) << " to " << fixed(calibration.high, 3)
      << ", which is what the model would score on the paper's copy of Brown if our split is as "
         "much harder for it as for the n-grams. Bengio et al.'s column: their figure for the "
         "same model, where they have one. Perplexity is per word, exp(total NLL / words of the "
         "split), so that models predicting subword tokens and words share one scale; a "
         "word-level model's per-token figure is its per-word one, and it gets `<unk>` for "
         "free: every rare word is one guess of `<unk>`, where a subword model must spell the "
         "word out, so word-level figures flatter their models against subword ones.";
  if (spelling.known())
    out << " The column `<unk> spelled out` charges them for it: each `<unk>` of the test split "
           "costs what spelling the word costs, p(word) = p(`<unk>`) p(its bytes), under a "
           "byte-level Kneser-Ney "
        << spelling.order << "-gram counted on the training split's " << grouped(spelling.train_unk)
        << " `<unk>` words (`ngram --unk-spelling-order " << spelling.order
        << "`). The test split's " << grouped(spelling.test_unk) << " `<unk>` of "
        << grouped(spelling.test_words) << " words cost " << fixed(spelling.nats_per_unk, 1)
        << " nats each, which multiplies a word-level perplexity by " << fixed(spelling.factor, 3)
        << "; a subword model's figure stays as it is. The speller also gives some of its "
           "probability to words of the vocabulary, so this charge is an upper bound: the fair "
           "word-level figure lies between the two columns.";
  out << "\n\n| model | tokens | seeds | test ppl per word | calibrated | Bengio et al. |"
      << (spelling.known() ? " <unk> spelled out |" : "") << "\n|---|---|---:|---:|---:|---:|"
      << (spelling.known() ? "---:|" : "") << "\n";
  for (const ScaleRow& r : rows) {
    out << "| " << r.model << " | " << r.tokens << " | "
        << (r.seeds ? std::to_string(r.seeds) : "-") << " | " << fixed(r.mean, 1)
        << (r.seeds > 1 ? " ± " + fixed(r.sd, 1) : "") << " | "
        << calibrated_range(calibration, r.mean, 1) << " | "
        << (r.paper > 0 ? fixed(r.paper, 0) : "") << " |";
    if (spelling.known()) out << " " << (r.spelled > 0 ? fixed(r.spelled, 1) : "") << " |";
    out << "\n";
  }
  return out.str() + "\n";
}
}  // namespace tg::experiments::report
