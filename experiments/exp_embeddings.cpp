// build/bin/exp_embeddings: learned (untied, tied) vs frozen word2vec vs fine-tuned word2vec vs
// frozen random embeddings, for the GPT and the NPLM, over seeds. Writes one JSON per run and
// summary.json into --out, and prints the table.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "autograd/io.hpp"
#include "experiments/flags.hpp"
#include "experiments/programs.hpp"
#include "experiments/report/tables.hpp"
#include "experiments/study.hpp"

using namespace tg;
using nlohmann::json;

namespace {

// The pretrained modes' vectors of each seed: named when the study is planned, trained (or
// reused, checked by their hash) when the first run that needs them trains, so that a finished
// study invoked again (to list its runs, or after files were moved in) trains none. A seed's
// file is named by that seed, seed 1's without a suffix (the name of the one file all seeds
// shared before each had its own), so that the runs of one study trained in parts (--seed S
// --seeds N in another folder) join it by moving their files. The summary lists each seed's log.
class SeedVectors {
 public:
  SeedVectors(const train::TrainConfig& base, const experiments::CommonFlags& f)
      : flags_(f), d_model_(base.model.d_model), first_(base.seed) {
    for (uint64_t seed = first_; seed < first_ + f.seeds; ++seed)
      trained_with_[seed] = f.w2v_seeds == experiments::VectorSeeds::shared ? first_ : seed;
  }
  // The file of the seed's vectors of `width` columns (a kind of table may read vectors of
  // another width than d_model: nn::vector_width).
  std::string file(uint64_t seed, size_t width) const {
    const uint64_t trained_with = trained_with_.at(seed);
    return flags_.out + "/word2vec_d" + std::to_string(width) +
           (trained_with == 1 ? "" : "_seed" + std::to_string(trained_with)) + ".bin";
  }

  // The logs of the d_model vectors trained before, as they are (a run that uses them checks
  // them).
  void list_logs(json& summary) const {
    for (const auto& [seed, trained_with] : trained_with_) {
      std::ifstream in(file(seed, d_model_) + ".json");
      const json log = in ? json::parse(in, nullptr, false) : json();
      if (log.is_object()) record(summary, trained_with, d_model_, log);
    }
  }
  // The seed's vectors on disk, trained now unless they are there; their log in the summary.
  void prepare(uint64_t seed, size_t width, const text::LMData& data, json& summary) {
    const std::string path = file(seed, width);
    if (!ready_.insert(path).second) return;
    const uint64_t trained_with = trained_with_.at(seed);
    record(
        summary, trained_with, width,
        experiments::pretrain_word2vec(data, flags_.word2vec_options(width, trained_with), path));
  }

 private:
  void record(json& summary, uint64_t trained_with, size_t width, const json& log) const {
    if (width != d_model_) {
      summary["word2vec_by_width"][std::to_string(width)][std::to_string(trained_with)] = log;
      return;
    }
    if (trained_with == first_) summary["word2vec"] = log;
    summary["word2vec_by_seed"][std::to_string(trained_with)] = log;
  }

  const experiments::CommonFlags& flags_;
  size_t d_model_;
  uint64_t first_;
  std::map<uint64_t, uint64_t> trained_with_;  // seed: the seed its vectors are trained with
  std::set<std::string> ready_;                // checked by this invocation
};

// What a run's summary entry keeps of its results.
json summary_entry(const json& results) {
  json e;
  for (const char* key : {"valid_ppl", "test_ppl", "train_ppl", "trainable_params", "total_params",
                          "wall_s", "train_tokens_per_s", "best_epoch", "epochs"})
    e[key] = results.value(key, json());  // null when an older file lacks it
  // Subword tokens: the per-word scale too (word-level runs have none, and their entries stay
  // as they were).
  if (results.contains("test_ppl_per_word")) e["test_ppl_per_word"] = results["test_ppl_per_word"];
  return e;
}

// Every (model, mode, seed) run of the study; a mode that loads vectors gets its seed's
// word2vec at the width its table asks for, made when its first run comes. Returns whether any
// run loads vectors.
bool add_runs(experiments::Plan& plan, const std::vector<std::string>& models,
              const std::vector<experiments::Mode>& modes, const experiments::ExperimentProgram& p,
              SeedVectors& vectors, const text::LMData& data) {
  bool needs_vectors = false;
  for (const auto& model : models)
    for (const auto& mode : modes)
      for (size_t seed = 1; seed <= p.flags.seeds; ++seed) {
        train::TrainConfig c = experiments::run_config(p.base, model, mode, p.base.seed + seed - 1);
        std::function<void()> prepare;
        if (nn::is_pretrained(mode.embedding)) {
          needs_vectors = true;
          const size_t width = nn::vector_width(mode.embedding, c.model.d_model);
          c.model.vectors = vectors.file(c.seed, width);
          prepare = [&vectors, &plan, &data, seed = c.seed, width] {
            vectors.prepare(seed, width, data, plan.summary());
          };
        }
        const std::string stem = model + "_" + mode.name + "_seed" + std::to_string(c.seed);
        plan.add({c,
                  model + " " + mode.name + " seed " + std::to_string(c.seed),
                  p.flags.out + "/" + stem + ".json",
                  {{"model", model}, {"mode", mode.name}, {"seed", c.seed}},
                  prepare});
      }
  return needs_vectors;
}

}  // namespace

int tg::experiments::exp_embeddings_main(int argc, char** argv) {
  experiments::ExperimentProgram program(
      "exp_embeddings", "which input embedding predicts the next word better?",
      "results/embeddings",
      "learned,learned-tied,frozen-pretrained,finetune-pretrained,frozen-random");
  const train::TrainConfig& base = program.base;
  const experiments::CommonFlags& f = program.flags;
  return program.run(argc, argv, [&] {
    const auto mode_list = experiments::parse_modes(program.modes);
    const std::vector<std::string> models = experiments::split_commas(f.models);
    if (!f.dry_run) experiments::make_dirs(f.out);
    const text::LMData data = train::load_data(base.data);
    std::fprintf(stderr, "%s\n", data.description.c_str());

    json summary = {{"experiment", "embeddings"},
                    {"base_config", base.to_json()},
                    {"data", data.description},
                    {"vocab", data.vocab.size()},
                    {"seeds", f.seeds}};
    experiments::Plan plan(f.out + "/summary.json", summary, summary_entry,
                           experiments::group_keys_of("embeddings"),
                           {"valid_ppl", "test_ppl", "test_ppl_per_word", "train_ppl",
                            "trainable_params", "wall_s", "train_tokens_per_s"});
    SeedVectors vectors(base, f);
    const bool needs_vectors = add_runs(plan, models, mode_list, program, vectors, data);
    if (f.dry_run) {
      std::printf("%s", plan.describe().c_str());
      return 0;
    }
    if (needs_vectors) vectors.list_logs(plan.summary());
    plan.declare("learned");
    plan.collect_finished();
    // Seed-major: every run of the first seed before the second seed's, so that a study stopped
    // part-way has whole seeds of every mode.
    for (size_t seed = 1; seed <= f.seeds; ++seed)
      for (size_t i = 0; i < plan.runs().size(); ++i)
        if (plan.runs()[i].config.seed == base.seed + seed - 1) plan.train(i, data);
    std::printf("%s", report::embeddings_table(plan.summary()).c_str());
    plan.say_unfinished();
    std::fprintf(stderr, "wrote %s/summary.json\n", f.out.c_str());
    return 0;
  });
}
