// build/bin/exp_embeddings: learned (untied, tied) vs frozen word2vec vs fine-tuned word2vec vs
// frozen random embeddings, for the GPT and the NPLM, over seeds. Writes one JSON per run and
// summary.json into --out, and prints the table.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/exp_flags.hpp"
#include "apps/experiment.hpp"
#include "apps/flags.hpp"
#include "apps/programs.hpp"
#include "apps/report_render.hpp"
#include "autograd/io.hpp"

using namespace tg;
using nlohmann::json;

int tg::apps::exp_embeddings_main(int argc, char** argv) {
  CLI::App app{"exp_embeddings: which input embedding predicts the next word better?"};
  cli::add_version_flag(app);
  train::TrainConfig base;
  train::add_training_flags(app, base);
  study::CommonFlags f;
  study::add_common_flags(app, f, "results/embeddings");
  std::string modes = "learned,learned-tied,frozen-pretrained,finetune-pretrained,frozen-random";
  app.add_option("--modes", modes, "rows to run")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return cli::guarded_main("exp_embeddings", [&] {
    std::fprintf(stderr, "exp_embeddings %s\n", train::describe_flags(app).c_str());
    const auto mode_list = study::parse_modes(modes);
    const std::vector<std::string> models = study::split_commas(f.models);
    study::make_dirs(f.out);
    const text::LMData data = train::load_data(base.data);
    std::fprintf(stderr, "%s\n", data.description.c_str());

    json summary = {{"experiment", "embeddings"},
                    {"base_config", base.to_json()},
                    {"data", data.description},
                    {"vocab", data.vocab.size()},
                    {"seeds", f.seeds}};
    std::string vectors;
    bool needs_vectors = false;
    for (const auto& m : mode_list)
      needs_vectors = needs_vectors || nn::is_pretrained(nn::parse_embedding_mode(m.embedding));
    if (needs_vectors) {
      text::Word2VecOptions o = f.w2v;
      o.size = base.model.d_model, o.cbow = f.w2v_cbow == 1, o.seed = base.seed;
      vectors = f.out + "/word2vec_d" + std::to_string(base.model.d_model) + ".bin";
      summary["word2vec"] = study::pretrain_word2vec(data, o, vectors);
    }
    // Every run of this invocation, in order; the summary lists those finished, in this order,
    // from the start: a study resumed with more seeds keeps the finished rows in it.
    struct Planned {
      train::TrainConfig config;
      std::string mode, label, file;
    };
    std::vector<Planned> plan;
    for (const auto& model : models)
      for (const auto& mode : mode_list)
        for (size_t seed = 1; seed <= f.seeds; ++seed) {
          train::TrainConfig c = base;
          c.model.name = model, c.model.embedding = nn::parse_embedding_mode(mode.embedding),
          c.model.tied = mode.tied, c.seed = base.seed + seed - 1;
          c.model.vectors =
              nn::is_pretrained(nn::parse_embedding_mode(mode.embedding)) ? vectors : "";
          if (model == "nplm")
            c.model.hidden =
                c.model.d_model;  // so that tying (U = C) is possible with one architecture
          plan.push_back(
              {c, mode.name, model + " " + mode.name + " seed " + std::to_string(c.seed),
               f.out + "/" + model + "_" + mode.name + "_seed" + std::to_string(c.seed) + ".json"});
        }
    std::vector<json> entries(plan.size());  // null: not finished
    const auto entry = [](const Planned& p, const json& r) {
      return json{{"model", p.config.model.name},
                  {"mode", p.mode},
                  {"seed", p.config.seed},
                  {"file", p.file},
                  {"valid_ppl", r["valid_ppl"]},
                  {"test_ppl", r["test_ppl"]},
                  {"train_ppl", r["train_ppl"]},
                  {"trainable_params", r["trainable_params"]},
                  {"total_params", r["total_params"]},
                  {"wall_s", r["wall_s"]},
                  {"train_tokens_per_s", r["train_tokens_per_s"]},
                  {"best_epoch", r["best_epoch"]},
                  {"epochs", r["epochs"]}};
    };
    const auto save_summary = [&] {
      std::vector<json> runs;
      for (const json& e : entries)
        if (!e.is_null()) runs.push_back(e);
      summary["runs"] = runs;
      summary["rows"] = study::aggregate(runs, {"model", "mode"},
                                         {"valid_ppl", "test_ppl", "train_ppl", "trainable_params",
                                          "wall_s", "train_tokens_per_s"});
      study::write_json(f.out + "/summary.json", summary);
    };
    for (size_t i = 0; i < plan.size(); ++i)
      if (const json done = study::finished_run(plan[i].config, plan[i].file); !done.is_null())
        entries[i] = entry(plan[i], done);
    save_summary();
    for (size_t i = 0; i < plan.size(); ++i) {
      entries[i] =
          entry(plan[i], study::run_one(plan[i].config, data, plan[i].label, plan[i].file));
      save_summary();
    }
    std::printf("%s", report::embeddings_table(summary).c_str());
    std::fprintf(stderr, "wrote %s/summary.json\n", f.out.c_str());
    return 0;
  });
}
