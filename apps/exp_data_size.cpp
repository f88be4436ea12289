// build/bin/exp_data_size: the embedding modes trained on a share of the training tokens
// (word2vec pretrained on the same share, and as separate rows on the full split): where does
// pretraining help, and where does learning end to end overtake it?
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

int tg::apps::exp_data_size_main(int argc, char** argv) {
  CLI::App app{"exp_data_size: embedding modes across training-set sizes"};
  cli::add_version_flag(app);
  train::TrainConfig base;
  train::add_training_flags(app, base);
  study::CommonFlags f;
  study::add_common_flags(app, f, "results/data_size");
  std::string modes = "learned,frozen-pretrained,finetune-pretrained,frozen-pretrained-full";
  std::string fractions_flag = "0.05,0.25,1";
  size_t max_epochs = 20;
  app.add_option("--modes", modes, "rows to run")->capture_default_str();
  app.add_option("--fractions", fractions_flag, "shares of the training split")
      ->capture_default_str();
  app.add_option("--max-epochs", max_epochs,
                 "each run sees about --epochs x the full split's tokens: a share f trains for "
                 "--epochs / f epochs, "
                 "at most this many (early stopping with --patience still applies)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return cli::guarded_main("exp_data_size", [&] {
    std::fprintf(stderr, "exp_data_size %s\n", train::describe_flags(app).c_str());
    const auto mode_list = study::parse_modes(modes);
    std::vector<double> fractions;
    for (const std::string& s : study::split_commas(fractions_flag)) {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0' || !(v > 0 && v <= 1))
        throw std::invalid_argument("--fractions: '" + s + "' is not a number in (0, 1]");
      fractions.push_back(v);
    }
    const std::vector<std::string> models = study::split_commas(f.models);
    study::make_dirs(f.out);
    text::Word2VecOptions w2v = f.w2v;
    w2v.size = base.model.d_model, w2v.cbow = f.w2v_cbow == 1, w2v.seed = base.seed;

    json summary = {{"experiment", "data_size"},
                    {"base_config", base.to_json()},
                    {"fractions", fractions},
                    {"seeds", f.seeds}};
    std::vector<json> runs;
    json vectors_log = json::object();
    std::string full_vectors;
    auto needs = [&](bool full) {
      for (const auto& m : mode_list)
        if (nn::is_pretrained(nn::parse_embedding_mode(m.embedding)) && m.full_vectors == full)
          return true;
      return false;
    };
    if (needs(true)) {
      text::LMDataOptions o = base.data;
      o.train_fraction = 1.0;
      const text::LMData full = train::load_data(o);
      full_vectors = f.out + "/word2vec_full.bin";
      vectors_log["full"] = study::pretrain_word2vec(full, w2v, full_vectors);
    }
    for (double fraction : fractions) {
      text::LMDataOptions o = base.data;
      o.train_fraction = fraction;
      const text::LMData data = train::load_data(o);
      std::fprintf(stderr, "%s\n", data.description.c_str());
      summary["data"] = data.description;
      char tag[32];
      std::snprintf(tag, sizeof tag, "f%g", fraction);
      std::string subset_vectors;
      if (needs(false)) {
        subset_vectors = f.out + "/word2vec_" + tag + ".bin";
        vectors_log[tag] = study::pretrain_word2vec(data, w2v, subset_vectors);
      }
      for (const auto& model : models)
        for (const auto& mode : mode_list)
          for (size_t seed = 1; seed <= f.seeds; ++seed) {
            train::TrainConfig c = base;
            c.model.name = model, c.model.embedding = nn::parse_embedding_mode(mode.embedding),
            c.model.tied = mode.tied, c.seed = base.seed + seed - 1;
            c.data.train_fraction = fraction;
            c.epochs = std::min<size_t>(
                max_epochs,
                static_cast<size_t>(std::ceil(static_cast<double>(base.epochs) / fraction)));
            if (nn::is_pretrained(nn::parse_embedding_mode(mode.embedding)))
              c.model.vectors = mode.full_vectors ? full_vectors : subset_vectors;
            if (model == "nplm") c.model.hidden = c.model.d_model;
            const std::string label =
                model + " " + mode.name + " " + tag + " seed " + std::to_string(c.seed);
            const std::string file = f.out + "/" + model + "_" + mode.name + "_" + tag + "_seed" +
                                     std::to_string(c.seed) + ".json";
            const json r = study::run_one(c, data, label, file);
            runs.push_back({{"model", model},
                            {"mode", mode.name},
                            {"fraction", fraction},
                            {"seed", c.seed},
                            {"file", file},
                            {"train_tokens", data.train.size()},
                            {"epochs_run", r["epochs"].size()},
                            {"valid_ppl", r["valid_ppl"]},
                            {"test_ppl", r["test_ppl"]},
                            {"train_ppl", r["train_ppl"]},
                            {"trainable_params", r["trainable_params"]},
                            {"wall_s", r["wall_s"]}});
            summary["runs"] = runs;
            summary["word2vec"] = vectors_log;
            summary["rows"] = study::aggregate(runs, {"model", "mode", "fraction", "train_tokens"},
                                               {"valid_ppl", "test_ppl", "train_ppl", "wall_s"});
            study::write_json(f.out + "/summary.json", summary);
          }
    }
    std::printf("%s", report::data_size_table(summary).c_str());
    std::fprintf(stderr, "wrote %s/summary.json\n", f.out.c_str());
    return 0;
  });
}
