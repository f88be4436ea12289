// build/bin/exp_data_size: the embedding modes trained on a share of the training tokens
// (word2vec pretrained on the same share, and as separate rows on the full split): where does
// pretraining help, and where does learning end to end overtake it?
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "autograd/io.hpp"
#include "distributed/distributed.hpp"
#include "experiments/flags.hpp"
#include "experiments/programs.hpp"
#include "experiments/report/tables.hpp"
#include "experiments/study.hpp"

using namespace tg;
using nlohmann::json;

namespace {
// How early stopping's patience counts at a share f of the training split: in epochs, as at
// the full split (an epoch of 5% of the split is 20 steps of the converged GPT, so patience 2
// can stop a run inside its learning-rate warm-up), or in tokens (patience / f epochs: as many
// tokens without improvement as at the full split).
enum class SharePatience { same, tokens };
constexpr base::NameTable<SharePatience, 2> kSharePatienceNames = {
    {{SharePatience::same, "same"}, {SharePatience::tokens, "tokens"}}};
}  // namespace

int tg::experiments::exp_data_size_main(int argc, char** argv) {
  experiments::ExperimentProgram program(
      "exp_data_size", "embedding modes across training-set sizes", "results/data_size",
      "learned,frozen-pretrained,finetune-pretrained,frozen-pretrained-full");
  CLI::App& app = program.app;
  const train::TrainConfig& base = program.base;
  const experiments::CommonFlags& f = program.flags;
  std::string fractions_flag = "0.05,0.25,1";
  size_t max_epochs = 20;
  SharePatience share_patience = SharePatience::same;
  app.add_option("--fractions", fractions_flag, "shares of the training split")
      ->capture_default_str();
  app.add_option("--max-epochs", max_epochs,
                 "each run sees about --epochs x the full split's tokens: a share f trains for "
                 "--epochs / f epochs, "
                 "at most this many (early stopping with --patience still applies)")
      ->capture_default_str();
  apps::add_enum_option(
      app, "--share-patience", share_patience, kSharePatienceNames,
      "same: --patience epochs at every share; tokens: --patience / f epochs at a "
      "share f, as many tokens without improvement as at the full split");
  return program.run(argc, argv, [&] {
    const auto mode_list = experiments::parse_modes(program.modes);
    std::vector<double> fractions;
    for (const std::string& s : experiments::split_commas(fractions_flag)) {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0' || !(v > 0 && v <= 1))
        throw std::invalid_argument("--fractions: '" + s + "' is not a number in (0, 1]");
      fractions.push_back(v);
    }
    if (fractions.empty())
      throw std::invalid_argument("--fractions: no share given (e.g. 0.05,0.25,1)");
    const std::vector<std::string> models = experiments::split_commas(f.models);
    experiments::make_dirs(f.out);
    text::Word2VecOptions w2v = f.w2v;
    w2v.size = base.model.d_model;
    w2v.cbow = f.w2v_cbow == 1;
    w2v.seed = base.seed;

    json summary = {{"experiment", "data_size"},
                    {"base_config", base.to_json()},
                    {"fractions", fractions},
                    {"seeds", f.seeds}};
    std::string full_vectors;
    auto needs = [&](bool full) {
      for (const auto& m : mode_list)
        if (nn::is_pretrained(m.embedding) && m.full_vectors == full) return true;
      return false;
    };
    const auto tag_of = [](double fraction) {
      char tag[32];
      std::snprintf(tag, sizeof tag, "f%g", fraction);
      return std::string(tag);
    };
    summary["word2vec"] = json::object();
    summary["data"] = json::object();
    experiments::Plan plan(f.out + "/summary.json", summary,
                           [](const json& r) {
                             json e = {{"train_tokens", r.at("data").at("train_tokens")},
                                       {"epochs_run", r.at("epochs").size()}};
                             for (const char* key : {"valid_ppl", "test_ppl", "train_ppl",
                                                     "trainable_params", "wall_s"})
                               e[key] = r.value(key, json());  // null when an older file lacks it
                             return e;
                           },
                           {"model", "mode", "fraction", "train_tokens"},
                           {"valid_ppl", "test_ppl", "train_ppl", "wall_s"});
    if (needs(true)) full_vectors = f.out + "/word2vec_full.bin";
    for (double fraction : fractions) {
      const std::string tag = tag_of(fraction);
      // A count of full-split epochs as epochs of the share: as many tokens.
      const auto per_share = [fraction](size_t full_epochs) {
        return static_cast<size_t>(std::ceil(static_cast<double>(full_epochs) / fraction));
      };
      // As many tokens as --epochs full passes, at most --max-epochs passes over the share.
      const size_t epochs = std::min(max_epochs, per_share(base.epochs));
      const size_t patience =
          share_patience == SharePatience::tokens ? per_share(base.patience) : base.patience;
      if (distributed::is_main())
        std::fprintf(stderr, "[share %s] up to %zu epochs, patience %zu epochs\n", tag.c_str(),
                     epochs, patience);
      for (const auto& model : models)
        for (const auto& mode : mode_list)
          for (size_t seed = 1; seed <= f.seeds; ++seed) {
            train::TrainConfig c = base;
            c.model.name = model;
            c.model.embedding = mode.embedding;
            c.model.tied = mode.tied;
            c.seed = base.seed + seed - 1;
            c.data.train_fraction = fraction;
            c.epochs = epochs;
            c.patience = patience;
            if (nn::is_pretrained(mode.embedding))
              c.model.vectors =
                  mode.full_vectors ? full_vectors : f.out + "/word2vec_" + tag + ".bin";
            if (model == "nplm") c.model.hidden = c.model.d_model;
            plan.add({c,
                      model + " " + mode.name + " " + tag + " seed " + std::to_string(c.seed),
                      f.out + "/" + model + "_" + mode.name + "_" + tag + "_seed" +
                          std::to_string(c.seed) + ".json",
                      {{"model", model},
                       {"mode", mode.name},
                       {"fraction", fraction},
                       {"seed", c.seed}}});
          }
    }
    plan.collect_finished();
    if (needs(true)) {
      text::LMDataOptions o = base.data;
      o.train_fraction = 1.0;
      plan.summary()["word2vec"]["full"] =
          experiments::pretrain_word2vec(train::load_data(o), w2v, full_vectors);
    }
    // Seed-major: every run of the first seed (each share, each mode) before the second seed's,
    // so that a study stopped part-way has whole seeds. Each share's data and vectors are made
    // once, when its first run comes.
    std::map<double, text::LMData> share_data;
    for (size_t seed = 1; seed <= f.seeds; ++seed)
      for (double fraction : fractions) {
        auto found = share_data.find(fraction);
        if (found == share_data.end()) {
          text::LMDataOptions o = base.data;
          o.train_fraction = fraction;
          found = share_data.emplace(fraction, train::load_data(o)).first;
          std::fprintf(stderr, "%s\n", found->second.description.c_str());
          const std::string tag = tag_of(fraction);
          plan.summary()["data"][tag] = found->second.description;  // each share its own
          if (needs(false))
            plan.summary()["word2vec"][tag] = experiments::pretrain_word2vec(
                found->second, w2v, f.out + "/word2vec_" + tag + ".bin");
        }
        for (size_t i = 0; i < plan.runs().size(); ++i) {
          const train::TrainConfig& c = plan.runs()[i].config;
          if (c.data.train_fraction == fraction && c.seed == base.seed + seed - 1)
            plan.train(i, found->second);
        }
      }
    std::printf("%s", report::data_size_table(plan.summary()).c_str());
    std::fprintf(stderr, "wrote %s/summary.json\n", f.out.c_str());
    return 0;
  });
}
