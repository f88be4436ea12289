// Flags every experiment binary adds on top of the training flags.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "apps/validators.hpp"
#include "experiments/study.hpp"
#include "text/word2vec.hpp"
#include "train/models.hpp"

namespace tg::experiments {

// Which word2vec vectors the pretrained modes of each seed start from.
enum class VectorSeeds {
  per_run,  // vectors trained with the run's own seed: pretraining noise is in the spread
  shared,   // one file for every seed, trained with the first
};
inline constexpr base::NameTable<VectorSeeds, 2> kVectorSeedsNames{
    {{VectorSeeds::per_run, "per-run"}, {VectorSeeds::shared, "shared"}}};

struct CommonFlags {
  std::string models = "gpt";
  size_t seeds = 1;
  std::string out;
  text::Word2VecOptions w2v;  // size follows --d-model
  int w2v_cbow = 0;
  VectorSeeds w2v_seeds = VectorSeeds::per_run;
  bool dry_run = false;

  // The word2vec options of the flags for a table of `size` columns, trained with `seed`.
  text::Word2VecOptions word2vec_options(size_t size, uint64_t seed) const {
    text::Word2VecOptions o = w2v;
    o.size = size;
    o.cbow = w2v_cbow == 1;
    o.seed = seed;
    return o;
  }
};

inline void add_common_flags(CLI::App& app, CommonFlags& f, const std::string& default_out) {
  f.out = default_out;
  f.w2v.cbow = false;
  f.w2v.min_count = 1;  // every word the LM keeps gets a vector if it occurs in the subset
  app.add_option("--models", f.models, "comma-separated registered models: " + train::model_help())
      ->capture_default_str();
  app.add_option("--seeds", f.seeds, "runs per row, seeds 1..N, trained seed by seed")
      ->capture_default_str()
      ->check(apps::positive());
  app.add_option("--out", f.out, "folder for the JSON results")->capture_default_str();
  app.add_flag("--dry-run", f.dry_run,
               "list the study's runs and what invoking it would do with each (done, resume "
               "from its checkpoint, train), then stop: nothing is trained or written");
  app.add_option("--w2v-window", f.w2v.window, "word2vec window")->capture_default_str();
  app.add_option("--w2v-negative", f.w2v.negative, "word2vec negatives")
      ->capture_default_str()
      ->check(apps::positive());
  app.add_option("--w2v-iter", f.w2v.iter, "word2vec epochs")->capture_default_str();
  app.add_option("--w2v-sample", f.w2v.sample, "word2vec sub-sampling")->capture_default_str();
  app.add_option("--w2v-cbow", f.w2v_cbow, "word2vec: 1 = CBOW, 0 = skip-gram")
      ->capture_default_str()
      ->check(apps::number_in(0, 1, false, true));
  apps::add_enum_option(app, "--w2v-seeds", f.w2v_seeds, kVectorSeedsNames,
                        "per-run: each seed's pretrained runs start from word2vec trained with "
                        "that seed; shared: one file, trained with the first seed");
}

// The experiment programs' common start: the training flags, the study's own (CommonFlags) and
// --modes; a program adds its own flags to `app`, then returns run(argc, argv, body), which
// parses, prints every flag with its value and runs body inside apps::guarded_main.
struct ExperimentProgram {
  ExperimentProgram(std::string program, const std::string& description,
                    const std::string& default_out, std::string default_modes,
                    const std::string& modes_help = "")
      : name(std::move(program)), app{name + ": " + description}, modes(std::move(default_modes)) {
    apps::add_version_flag(app);
    apps::add_training_flags(app, base);
    add_common_flags(app, flags, default_out);
    app.add_option("--modes", modes,
                   !modes_help.empty()
                       ? modes_help
                       : "rows to run: kinds of token table (" + nn::table_kind_help() +
                             "), or KIND-tied for a kind that can tie")
        ->capture_default_str();
    app.get_option("--token-nll")
        ->description(
            "a folder: each run's valid and test token losses in a file named like its JSON");
  }

  int run(int argc, char** argv, const std::function<int()>& body) {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    return apps::guarded_main(name.c_str(), [&] {
      // A study names each run's files itself, in --out: one --results or --checkpoint would
      // be overwritten by every run, and resumed by the wrong one.
      for (const auto& [flag, value] : {std::pair{"--results", &base.results},
                                        {"--checkpoint", &base.checkpoint},
                                        {"--resume", &base.resume}})
        if (!value->empty())
          throw std::invalid_argument(
              std::string(flag) + ": " + name +
              " writes each run's results and checkpoint into --out (RUN.json, RUN.ckpt) and "
              "resumes from them when invoked again; give --out instead");
      const std::vector<std::string> models = split_commas(flags.models);
      for (const std::string& model : models)
        if (!train::has_model(model))
          throw std::invalid_argument("--models: " + train::unknown_model_message(model));
      // Before any data is read, --dry-run too: an option for a model that takes none, or for
      // a model the study does not train (MODEL:KEY=VALUE scopes one to one model).
      train::check_model_options(base.model.options, models);
      std::fprintf(stderr, "%s %s\n", name.c_str(), apps::describe_flags(app).c_str());
      return body();
    });
  }

  std::string name;
  CLI::App app;
  train::TrainConfig base;
  CommonFlags flags;
  std::string modes;
};

}  // namespace tg::experiments
