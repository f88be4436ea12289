// build/bin/exp_data_size: the embedding modes trained on a share of the training tokens
// (word2vec pretrained on the same share, and as separate rows on the full split): where does
// pretraining help, and where does learning end to end overtake it?
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "autograd/io.hpp"
#include "base/hash.hpp"
#include "distributed/distributed.hpp"
#include "experiments/flags.hpp"
#include "experiments/programs.hpp"
#include "experiments/report/tables.hpp"
#include "experiments/study.hpp"

using namespace tg;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
// How early stopping's patience counts at a share f of the training split: in epochs, as at
// the full split (an epoch of 5% of the split is 20 steps of the converged GPT, so patience 2
// can stop a run inside its learning-rate warm-up), or in tokens (patience / f epochs: as many
// tokens without improvement as at the full split).
enum class SharePatience { same, tokens };
constexpr base::NameTable<SharePatience, 2> kSharePatienceNames = {
    {{SharePatience::same, "same"}, {SharePatience::tokens, "tokens"}}};
}  // namespace

namespace {

std::vector<double> parse_fractions(const std::string& flag) {
  std::vector<double> fractions;
  for (const std::string& s : experiments::split_commas(flag)) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !(v > 0 && v <= 1))
      throw std::invalid_argument("--fractions: '" + s + "' is not a number in (0, 1]");
    fractions.push_back(v);
  }
  if (fractions.empty())
    throw std::invalid_argument("--fractions: no share given (e.g. 0.05,0.25,1)");
  return fractions;
}

std::string tag_of(double fraction) {  // 0.25 -> "f0.25"
  char tag[32];
  std::snprintf(tag, sizeof tag, "f%g", fraction);
  return tag;
}

// The sweep's settings beyond the common flags.
struct Sweep {
  std::string fractions_flag = "0.05,0.25,1";
  size_t max_epochs = 20;
  SharePatience share_patience = SharePatience::same;
};

// What a run's summary entry keeps of its results.
json summary_entry(const json& r) {
  json e = {{"train_tokens", r.at("data").at("train_tokens")},
            {"epochs_run", r.at("epochs").size()}};
  for (const char* key : {"valid_ppl", "test_ppl", "train_ppl", "trainable_params", "wall_s"})
    e[key] = r.value(key, json());  // null when an older file lacks it
  return e;
}

// The seed whose word2vec a run's pretrained table starts from (--w2v-seeds).
uint64_t vectors_seed(const experiments::ExperimentProgram& p, const train::TrainConfig& c) {
  return p.flags.w2v_seeds == experiments::VectorSeeds::shared ? p.base.seed : c.seed;
}

// The share's word2vec file for run c: trained on the share, at the width c's kind of table
// reads (nn::vector_width), with vectors_seed. word2vec_f0.25.bin for --d-model columns and the
// first seed; word2vec_f0.25_d8_seed2.bin for 8 columns and seed 2.
std::string share_vectors_file(const experiments::ExperimentProgram& p, const std::string& tag,
                               const train::TrainConfig& c) {
  const size_t width = nn::vector_width(c.model.embedding, c.model.d_model);
  const uint64_t seed = vectors_seed(p, c);
  return p.flags.out + "/word2vec_" + tag +
         (width == p.base.model.d_model ? "" : "_d" + std::to_string(width)) +
         (seed == p.base.seed ? "" : "_seed" + std::to_string(seed)) + ".bin";
}

// Every run of one share of the training split: each model, mode and seed, with as many tokens
// as --epochs full passes (at most --max-epochs passes over the share).
void add_share_runs(experiments::Plan& plan, double fraction,
                    const experiments::ExperimentProgram& p,
                    const std::vector<experiments::Mode>& modes, const Sweep& sweep,
                    const std::string& full_vectors) {
  const train::TrainConfig& base = p.base;
  const experiments::CommonFlags& f = p.flags;
  const std::string tag = tag_of(fraction);
  // A count of full-split epochs as epochs of the share: as many tokens.
  const auto per_share = [fraction](size_t full_epochs) {
    return static_cast<size_t>(std::ceil(static_cast<double>(full_epochs) / fraction));
  };
  const size_t epochs = std::min(sweep.max_epochs, per_share(base.epochs));
  const size_t patience =
      sweep.share_patience == SharePatience::tokens ? per_share(base.patience) : base.patience;
  if (distributed::is_main())
    std::fprintf(stderr, "[share %s] up to %zu epochs, patience %zu epochs\n", tag.c_str(), epochs,
                 patience);
  for (const auto& model : experiments::split_commas(f.models))
    for (const auto& mode : modes)
      for (size_t seed = 1; seed <= f.seeds; ++seed) {
        train::TrainConfig c = experiments::run_config(base, model, mode, base.seed + seed - 1);
        c.data.train_fraction = fraction;
        c.epochs = epochs;
        c.patience = patience;
        if (nn::is_pretrained(mode.embedding))
          c.model.vectors = mode.full_vectors ? full_vectors : share_vectors_file(p, tag, c);
        const std::string name =
            model + "_" + mode.name + "_" + tag + "_seed" + std::to_string(c.seed);
        plan.add(
            {c,
             model + " " + mode.name + " " + tag + " seed " + std::to_string(c.seed),
             f.out + "/" + name + ".json",
             {{"model", model}, {"mode", mode.name}, {"fraction", fraction}, {"seed", c.seed}}});
      }
}

// The share's vectors a run starts from, other than the share's first (--d-model columns, the
// first seed: trained when the share's data is loaded, its log the summary's "word2vec" of the
// share), trained on the share before the run, once per invocation; each file's log in the
// summary under its name.
void prepare_run_vectors(experiments::Plan& plan, const experiments::ExperimentProgram& p,
                         const train::TrainConfig& c, const text::LMData& share,
                         std::set<std::string>& made) {
  if (!nn::is_pretrained(c.model.embedding)) return;
  const std::string tag = tag_of(c.data.train_fraction);
  if (c.model.vectors != share_vectors_file(p, tag, c) || made.contains(c.model.vectors)) return;
  made.insert(c.model.vectors);
  const size_t width = nn::vector_width(c.model.embedding, c.model.d_model);
  plan.summary()["word2vec_by_file"][fs::path(c.model.vectors).filename().string()] =
      experiments::pretrain_word2vec(share, p.flags.word2vec_options(width, vectors_seed(p, c)),
                                     c.model.vectors);
}

// Trains the plan seed-major: every run of the first seed (each share, each mode) before the
// second seed's, so that a study stopped part-way has whole seeds. Each share's data and
// vectors are made once, when its first run comes.
void train_seed_major(experiments::Plan& plan, const std::vector<double>& fractions,
                      const experiments::ExperimentProgram& p) {
  const train::TrainConfig& base = p.base;
  std::map<double, text::LMData> share_data;
  std::set<std::string> made;  // the vector files this invocation trained or checked
  for (size_t seed = 1; seed <= p.flags.seeds; ++seed)
    for (double fraction : fractions) {
      auto found = share_data.find(fraction);
      if (found == share_data.end()) {
        text::LMDataOptions o = base.data;
        o.train_fraction = fraction;
        found = share_data.emplace(fraction, train::load_data(o)).first;
        std::fprintf(stderr, "%s\n", found->second.description.c_str());
        const std::string tag = tag_of(fraction);
        plan.summary()["data"][tag] = found->second.description;  // each share its own
        const std::string path = p.flags.out + "/word2vec_" + tag + ".bin";
        if (std::ranges::any_of(plan.runs(), [&](const experiments::Plan::Run& r) {
              return r.config.model.vectors == path;
            })) {
          plan.summary()["word2vec"][tag] = experiments::pretrain_word2vec(
              found->second, p.flags.word2vec_options(base.model.d_model, base.seed), path);
          made.insert(path);
        }
      }
      for (size_t i = 0; i < plan.runs().size(); ++i) {
        const train::TrainConfig& c = plan.runs()[i].config;
        if (c.data.train_fraction != fraction || c.seed != base.seed + seed - 1) continue;
        prepare_run_vectors(plan, p, c, found->second, made);
        plan.train(i, found->second);
      }
    }
}

// The KIND-full rows against --full-vectors: a file no row reads is refused, and so is a kind
// that reads another width than --d-model's when no file of its width is given (the whole
// split's word2vec is trained at --d-model).
void check_full_rows(const std::vector<experiments::Mode>& modes, size_t d_model,
                     const std::string& full_vectors_file) {
  if (!full_vectors_file.empty() &&
      std::ranges::none_of(modes, [](const experiments::Mode& m) { return m.full_vectors; }))
    throw std::invalid_argument("--full-vectors: no KIND-full row in --modes reads it");
  for (const experiments::Mode& m : modes)
    if (const size_t width = nn::vector_width(m.embedding, d_model);
        m.full_vectors && full_vectors_file.empty() && width != d_model)
      throw std::invalid_argument("--modes " + m.name + ": the kind reads vectors of " +
                                  std::to_string(width) +
                                  " columns, the whole split's word2vec has --d-model's; give "
                                  "--full-vectors of that width");
}

// The sweep's own flags, beside the study's common ones.
void add_sweep_flags(CLI::App& app, Sweep& sweep, std::string& full_vectors_file) {
  app.add_option("--fractions", sweep.fractions_flag, "shares of the training split")
      ->capture_default_str();
  app.add_option("--max-epochs", sweep.max_epochs,
                 "each run sees about --epochs x the full split's tokens: a share f trains for "
                 "--epochs / f epochs, at most this many (early stopping with --patience still "
                 "applies)")
      ->capture_default_str();
  app.add_option("--full-vectors", full_vectors_file,
                 "the KIND-full rows' vectors from this word2vec-format file instead of word2vec "
                 "on the whole training split (e.g. a table train_lm --export-vectors wrote "
                 "after training on the whole split: the same text, learned end to end)")
      ->check(CLI::ExistingFile);
  apps::add_enum_option(
      app, "--share-patience", sweep.share_patience, kSharePatienceNames,
      "same: --patience epochs at every share; tokens: --patience / f epochs at a "
      "share f, as many tokens without improvement as at the full split");
}

// The KIND-full rows' vectors, recorded in the summary: the file given (--full-vectors), or
// word2vec trained on the whole training split into `full_vectors`.
void prepare_full_vectors(experiments::Plan& plan, const experiments::ExperimentProgram& p,
                          const std::string& given, const std::string& full_vectors) {
  if (!given.empty()) {
    plan.summary()["word2vec"]["full"] = {
        {"file", given}, {"fnv1a", base::fnv1a_file_hex(given)}, {"given", true}};
    return;
  }
  text::LMDataOptions o = p.base.data;
  o.train_fraction = 1.0;
  plan.summary()["word2vec"]["full"] = experiments::pretrain_word2vec(
      train::load_data(o), p.flags.word2vec_options(p.base.model.d_model, p.base.seed),
      full_vectors);
}

}  // namespace

int tg::experiments::exp_data_size_main(int argc, char** argv) {
  experiments::ExperimentProgram program(
      "exp_data_size", "embedding modes across training-set sizes", "results/data_size",
      "learned,frozen-pretrained,finetune-pretrained,frozen-pretrained-full",
      "rows to run: kinds of token table (" + nn::table_kind_help() +
          "), KIND-tied for a kind that can tie, KIND-full for one that loads vectors (its "
          "word2vec trained on the whole training split, not the share)");
  CLI::App& app = program.app;
  const train::TrainConfig& base = program.base;
  const experiments::CommonFlags& f = program.flags;
  // One word2vec per share for every seed unless asked otherwise: the sweep's committed studies
  // were made so, and a study invoked again must find the same files.
  program.flags.w2v_seeds = experiments::VectorSeeds::shared;
  app.get_option("--w2v-seeds")->default_str("shared");
  Sweep sweep;
  std::string full_vectors_file;
  add_sweep_flags(app, sweep, full_vectors_file);
  return program.run(argc, argv, [&] {
    const auto mode_list = experiments::parse_modes(program.modes, true);
    const std::vector<double> fractions = parse_fractions(sweep.fractions_flag);
    if (!f.dry_run) experiments::make_dirs(f.out);
    const auto needs = [&](bool full) {
      return std::ranges::any_of(mode_list, [full](const experiments::Mode& m) {
        return nn::is_pretrained(m.embedding) && m.full_vectors == full;
      });
    };
    const json summary = {{"experiment", "data_size"},  {"base_config", base.to_json()},
                          {"fractions", fractions},     {"seeds", f.seeds},
                          {"word2vec", json::object()}, {"data", json::object()}};
    std::vector<std::string> group_keys = experiments::group_keys_of("data_size");
    group_keys.push_back("train_tokens");  // each share's, listed in its summary rows
    experiments::Plan plan(f.out + "/summary.json", summary, summary_entry, group_keys,
                           {"valid_ppl", "test_ppl", "train_ppl", "wall_s"});
    check_full_rows(mode_list, base.model.d_model, full_vectors_file);
    const std::string full_vectors = !needs(true)                 ? std::string()
                                     : !full_vectors_file.empty() ? full_vectors_file
                                                                  : f.out + "/word2vec_full.bin";
    for (double fraction : fractions)
      add_share_runs(plan, fraction, program, mode_list, sweep, full_vectors);
    if (f.dry_run) {
      std::printf("%s", plan.describe().c_str());
      return 0;
    }
    plan.declare("learned");
    plan.collect_finished();
    if (needs(true)) prepare_full_vectors(plan, program, full_vectors_file, full_vectors);
    train_seed_major(plan, fractions, program);
    std::printf("%s", report::data_size_table(plan.summary()).c_str());
    plan.say_unfinished();
    std::fprintf(stderr, "wrote %s/summary.json\n", f.out.c_str());
    return 0;
  });
}
