// build/bin/exp_lifecycle: what happens to an embedding table during training: the share of
// rows with a gradient and of rows the optimizer changed per step, the rows touched per epoch,
// each row's cosine drift from its initial value by frequency band, probe words' neighbours
// before and after (next to word2vec's), and WordSim-353 of the input and output matrices,
// tied and untied (LifecycleProbe).
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "autograd/io.hpp"
#include "distributed/distributed.hpp"
#include "experiments/flags.hpp"
#include "experiments/lifecycle_probe.hpp"
#include "experiments/programs.hpp"
#include "experiments/report/sections.hpp"
#include "experiments/study.hpp"
#include "experiments/test_losses.hpp"
#include "text/bpe.hpp"
#include "text/similarity.hpp"
#include "text/vectors.hpp"

using namespace tg;
using nlohmann::json;

namespace {

// A probe word as the table names its row. A BPE has a token for the word inside running text,
// after a space (" cat" is "Ġcat"), and often another for it without one ("cat": the start of a
// text, or the middle of a word); the first is the word's. A word that is not one token that way
// (a token's own spelling, "Ġcat", included) is taken as given.
std::string probe_token(const text::Vocabulary& vocab, const std::string& word) {
  if (!vocab.bpe()) return word;
  const std::vector<int32_t> ids = vocab.bpe()->encode(" " + word);
  return ids.size() == 1 ? vocab.spelling(ids[0]) : word;
}

// The rows of each frequency band.
json band_sizes(const std::vector<size_t>& train_count, int32_t unk) {
  json sizes = json::object();
  for (size_t id = 0; id < train_count.size(); ++id) {
    const std::string band =
        experiments::frequency_band(static_cast<int32_t>(id), train_count[id], unk);
    sizes[band] = sizes.value(band, 0) + 1;
  }
  return sizes;
}

// One run's entry in the summary (beside its name and whether it is tied), from its results
// and the probe's.
json summary_entry(size_t vocab, const json& r, const json& bands) {
  json rows_per_epoch = json::array(), drift = json::array();
  for (const auto& e : r.at("epochs")) {
    rows_per_epoch.push_back(e.at("rows_touched"));
    drift.push_back({{"epoch", e.at("epoch")}, {"bands", e.at("drift")}});
  }
  const json& life = r.at("lifecycle");
  return {{"vocab", vocab},
          {"valid_ppl", r.at("valid_ppl")},
          {"test_ppl", r.at("test_ppl")},
          {"best_epoch", r.value("best_epoch", 0)},
          {"stopped_early", r.value("stopped_early", false)},
          {"rows_per_step_mean", life.at("rows_per_step_mean")},
          {"rows_changed_per_step_mean", life.value("rows_changed_per_step_mean", json())},
          {"rows_per_epoch", rows_per_epoch},
          {"drift", drift},
          {"band_sizes", bands},
          {"wordsim_input", life.at("wordsim_input")},
          {"wordsim_output", life.at("wordsim_output")},
          {"neighbours", life.at("neighbours")},
          {"table", life.value("table", json())}};
}

// A finished run is reused with its own probes' neighbours: other --probes would be silently
// ignored, so they are refused before anything trains.
void check_probes(const experiments::Plan& plan, const std::vector<std::string>& probes,
                  const std::string& probes_flag) {
  for (const experiments::Plan::Run& run : plan.runs()) {
    const json done = experiments::finished_run(run.config, run.file, "lifecycle");
    if (done.is_null()) continue;
    std::vector<std::string> probed;
    for (const json& p : done.at("lifecycle").value("neighbours", json::array()))
      probed.push_back(p.value("word", std::string()));
    if (probed != probes)
      throw std::invalid_argument("--probes " + probes_flag + ": the finished run " + run.file +
                                  " was probed with " + experiments::join_commas(probed) +
                                  " (the neighbours are found while it trains); give those "
                                  "--probes, or another --out to train it again");
  }
}

// The probe words as the table names their rows.
std::vector<std::string> probe_tokens(const text::Vocabulary& vocab, const std::string& flag) {
  std::vector<std::string> probes;
  for (const std::string& word : experiments::split_commas(flag))
    probes.push_back(probe_token(vocab, word));
  return probes;
}

// A run per mode, each trained with its LifecycleProbe's hooks (none for --dry-run): the
// probe's results are what a finished run must have ("lifecycle").
experiments::Plan lifecycle_plan(const std::string& out, const train::TrainConfig& base,
                                 const text::LMData& data,
                                 const std::vector<experiments::Mode>& modes,
                                 const std::vector<train::TrainHooks>& hooks) {
  const json bands = band_sizes(text::train_counts(data), data.vocab.unk());
  experiments::Plan plan(
      out + "/summary.json",
      {{"experiment", "lifecycle"}, {"base_config", base.to_json()}, {"data", data.description}},
      [vocab = data.vocab.size(), bands](const json& r) { return summary_entry(vocab, r, bands); },
      {"name"}, {"valid_ppl", "test_ppl"});
  for (size_t i = 0; i < modes.size(); ++i) {
    const train::TrainConfig c =
        experiments::run_config(base, base.model.name, modes[i], base.seed);
    const std::string label = c.model.name + " " + modes[i].name;
    plan.add({c,
              label,
              out + "/" + c.model.name + "_" + modes[i].name + ".json",
              {{"name", label}, {"tied", modes[i].tied}},
              {},
              hooks.empty() ? train::TrainHooks{} : hooks[i],
              "lifecycle"});
  }
  return plan;
}

// Each mode's probe, starting from the table its configuration builds before training (the
// same seed gives the same parameters; checked against the trained model's at its first step),
// with word2vec's neighbours beside (`w2v` must outlive the probes).
std::vector<std::unique_ptr<experiments::LifecycleProbe>> make_probes(
    const train::TrainConfig& base, const text::LMData& data,
    const std::vector<experiments::Mode>& modes, const std::vector<std::string>& probes, size_t k,
    const text::VectorIndex& w2v) {
  std::vector<std::string> names;  // each id as word2vec's vectors name it
  for (size_t id = 0; id < data.vocab.size(); ++id)
    names.push_back(data.vocab.spelling(static_cast<int32_t>(id)));
  // A BPE's tokens that no text encodes to: known unused before training.
  const std::vector<int32_t> unreachable =
      data.vocab.bpe() ? data.vocab.bpe()->unreachable_tokens() : std::vector<int32_t>{};
  std::vector<std::unique_ptr<experiments::LifecycleProbe>> out;
  for (const experiments::Mode& mode : modes) {
    const train::TrainConfig c = experiments::run_config(base, base.model.name, mode, base.seed);
    const Tensor initial = train::build_model(c, data, nullptr)->input_embedding().weight().clone();
    out.push_back(std::make_unique<experiments::LifecycleProbe>(
        initial, text::train_counts(data), data.vocab.unk(), probes, k, w2v, names, unreachable));
  }
  return out;
}

}  // namespace

int tg::experiments::exp_lifecycle_main(int argc, char** argv) {
  experiments::ExperimentProgram program("exp_lifecycle", "the life cycle of an embedding table",
                                         "results/lifecycle", "learned,learned-tied",
                                         "learned and/or learned-tied");
  CLI::App& app = program.app;
  const train::TrainConfig& base = program.base;
  const experiments::CommonFlags& f = program.flags;
  std::string probes_flag = "cat,dog,king,money,said,Monday";
  size_t k = 5;
  app.add_option("--probes", probes_flag,
                 "words whose neighbours are shown (with a BPE: the word's token after a space, "
                 "Ġcat, when it is one)")
      ->capture_default_str();
  app.add_option("--neighbours", k, "neighbours per probe word")->capture_default_str();
  return program.run(argc, argv, [&] {
    const auto mode_list = experiments::parse_modes(program.modes);
    for (const auto& m : mode_list)
      if (m.embedding != "learned")
        throw std::invalid_argument(
            "--modes: exp_lifecycle studies learned tables (learned, learned-tied)");
    if (!f.dry_run) experiments::make_dirs(f.out);
    const text::LMData data = train::load_data(base.data);
    std::fprintf(stderr, "%s\n", data.description.c_str());
    const std::vector<std::string> probes = probe_tokens(data.vocab, probes_flag);
    if (f.dry_run) {
      std::printf("%s", lifecycle_plan(f.out, base, data, mode_list, {}).describe().c_str());
      return 0;
    }
    // Only rank 0 trains word2vec, so only its log has the scores: the others read them with
    // value(), which gives null for a missing key.
    const json w2v_log = experiments::pretrain_word2vec(
        data, f.word2vec_options(base.model.d_model, base.seed), f.out + "/word2vec.bin");
    const text::WordVectors vectors = text::load_vectors(f.out + "/word2vec.bin");
    const text::VectorIndex w2v_index(vectors.words, vectors.matrix);
    const auto probed_runs = make_probes(base, data, mode_list, probes, k, w2v_index);
    std::vector<train::TrainHooks> hooks;
    for (const auto& probe : probed_runs) hooks.push_back(probe->hooks());
    experiments::Plan plan = lifecycle_plan(f.out, base, data, mode_list, hooks);
    plan.summary()["word2vec_wordsim"] = w2v_log.value("wordsim353", json());
    plan.summary()["word2vec"] = w2v_log;
    plan.collect_finished();
    check_probes(plan, probes, probes_flag);
    for (size_t i = 0; i < plan.runs().size(); ++i) plan.train(i, data);
    const json& summary = plan.summary();
    // Rank 0 alone holds the full results (the others' output is silenced anyway).
    if (!distributed::is_main()) return 0;
    std::printf("%s", report::lifecycle_section(summary).c_str());
    plan.say_unfinished();
    std::fprintf(stderr, "wrote %s/summary.json\n", f.out.c_str());
    return 0;
  });
}
