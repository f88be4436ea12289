// build/bin/exp_embeddings: learned (untied, tied) vs frozen word2vec vs fine-tuned word2vec vs
// frozen random embeddings, for the GPT and the NPLM, over seeds. Writes one JSON per run and
// summary.json into --out, and prints the table.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
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

// The pretrained modes' vectors, by seed, trained now unless the study has them; their logs go
// into the summary. A seed's file is named by that seed, seed 1's without a suffix (the name of
// the one file all seeds shared before each had its own), so that the runs of one study trained
// in parts (--seed S --seeds N in another folder) join it by moving their files.
std::string vectors_file(const std::string& stem, uint64_t seed) {
  return seed == 1 ? stem + ".bin" : stem + "_seed" + std::to_string(seed) + ".bin";
}

std::map<uint64_t, std::string> pretrain_per_seed(const text::LMData& data,
                                                  const train::TrainConfig& base,
                                                  const experiments::CommonFlags& f,
                                                  json& summary) {
  std::map<uint64_t, std::string> vectors;
  const std::string stem = f.out + "/word2vec_d" + std::to_string(base.model.d_model);
  for (size_t i = 0; i < f.seeds; ++i) {
    const uint64_t seed = base.seed + i;
    const bool first = i == 0;
    if (f.w2v_seeds == experiments::VectorSeeds::shared && !first) {
      vectors[seed] = vectors.at(base.seed);
      continue;
    }
    vectors[seed] = vectors_file(stem, seed);
    const json log = experiments::pretrain_word2vec(
        data, f.word2vec_options(base.model.d_model, seed), vectors[seed]);
    if (first) summary["word2vec"] = log;
    summary["word2vec_by_seed"][std::to_string(seed)] = log;
  }
  return vectors;
}

// What a run's summary entry keeps of its results.
json summary_entry(const json& results) {
  json e;
  for (const char* key : {"valid_ppl", "test_ppl", "train_ppl", "trainable_params", "total_params",
                          "wall_s", "train_tokens_per_s", "best_epoch", "epochs"})
    e[key] = results.value(key, json());  // null when an older file lacks it
  return e;
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
    experiments::make_dirs(f.out);
    const text::LMData data = train::load_data(base.data);
    std::fprintf(stderr, "%s\n", data.description.c_str());

    json summary = {{"experiment", "embeddings"},
                    {"base_config", base.to_json()},
                    {"data", data.description},
                    {"vocab", data.vocab.size()},
                    {"seeds", f.seeds}};
    bool needs_vectors = false;
    for (const auto& m : mode_list) needs_vectors = needs_vectors || nn::is_pretrained(m.embedding);
    const std::map<uint64_t, std::string> vectors = needs_vectors
                                                        ? pretrain_per_seed(data, base, f, summary)
                                                        : std::map<uint64_t, std::string>{};
    experiments::Plan plan(
        f.out + "/summary.json", summary, summary_entry, {"model", "mode"},
        {"valid_ppl", "test_ppl", "train_ppl", "trainable_params", "wall_s", "train_tokens_per_s"});
    for (const auto& model : models)
      for (const auto& mode : mode_list)
        for (size_t seed = 1; seed <= f.seeds; ++seed) {
          train::TrainConfig c = experiments::run_config(base, model, mode, base.seed + seed - 1);
          if (nn::is_pretrained(mode.embedding)) c.model.vectors = vectors.at(c.seed);
          const std::string stem = model + "_" + mode.name + "_seed" + std::to_string(c.seed);
          plan.add({c,
                    model + " " + mode.name + " seed " + std::to_string(c.seed),
                    f.out + "/" + stem + ".json",
                    {{"model", model}, {"mode", mode.name}, {"seed", c.seed}}});
        }
    plan.collect_finished();
    // Seed-major: every run of the first seed before the second seed's, so that a study stopped
    // part-way has whole seeds of every mode.
    for (size_t seed = 1; seed <= f.seeds; ++seed)
      for (size_t i = 0; i < plan.runs().size(); ++i)
        if (plan.runs()[i].config.seed == base.seed + seed - 1) plan.train(i, data);
    std::printf("%s", report::embeddings_table(plan.summary()).c_str());
    std::fprintf(stderr, "wrote %s/summary.json\n", f.out.c_str());
    return 0;
  });
}
