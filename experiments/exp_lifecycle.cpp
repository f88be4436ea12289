// build/bin/exp_lifecycle: what happens to an embedding table during training, measured from
// the gradients: the share of rows updated per step and per epoch, each row's cosine drift
// from its initial value by frequency band, probe words' neighbours before and after (next to
// word2vec's), and WordSim-353 of the input and output matrices, tied and untied.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "autograd/io.hpp"
#include "distributed/distributed.hpp"
#include "experiments/flags.hpp"
#include "experiments/programs.hpp"
#include "experiments/report_render.hpp"
#include "experiments/study.hpp"
#include "text/similarity.hpp"
#include "text/vectors.hpp"

using namespace tg;
using nlohmann::json;

namespace {
const char* band_of(int32_t id, size_t count) {
  if (id == 0) return "<unk>";
  if (count == 0) return "unseen";
  if (count < 10) return "rare (1-9)";
  if (count < 100) return "middle (10-99)";
  return "frequent (100+)";
}

// Rows with any non-zero gradient, from the sparse part and the dense part.
void mark_rows(const Tensor& w, std::vector<bool>& touched) {
  const size_t width = w.size(1);
  if (const SparseGrad* s = w.sparse_grad())
    for (int32_t r : s->rows) touched[static_cast<size_t>(r)] = true;
  if (w.has_dense_grad()) {
    const float* g = w.grad().data();
    for (size_t r = 0; r < touched.size(); ++r)
      for (size_t j = 0; j < width && !touched[r]; ++j) touched[r] = g[r * width + j] != 0.0f;
  }
}

std::vector<std::string> neighbours(const text::VectorIndex& index, const std::string& word,
                                    size_t k) {
  const int row = index.find(word, false);
  if (row < 0) return {};
  std::vector<std::string> out;
  for (const auto& [r, s] : index.nearest(index.row(row), k, {row})) out.push_back(index.word(r));
  return out;
}
}  // namespace

int tg::experiments::exp_lifecycle_main(int argc, char** argv) {
  CLI::App app{"exp_lifecycle: the life cycle of an embedding table"};
  apps::add_version_flag(app);
  train::TrainConfig base;
  apps::add_training_flags(app, base);
  experiments::CommonFlags f;
  experiments::add_common_flags(app, f, "results/lifecycle");
  std::string modes = "learned,learned-tied", probes_flag = "cat,dog,king,money,said,Monday";
  size_t k = 5;
  app.add_option("--modes", modes, "learned and/or learned-tied")->capture_default_str();
  app.add_option("--probes", probes_flag, "words whose neighbours are shown")
      ->capture_default_str();
  app.add_option("--neighbours", k, "neighbours per probe word")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return apps::guarded_main("exp_lifecycle", [&] {
    std::fprintf(stderr, "exp_lifecycle %s\n", apps::describe_flags(app).c_str());
    const auto mode_list = experiments::parse_modes(modes);
    for (const auto& m : mode_list)
      if (m.embedding != "learned")
        throw std::invalid_argument(
            "--modes: exp_lifecycle studies learned tables (learned, learned-tied)");
    const std::vector<std::string> probes = experiments::split_commas(probes_flag);
    experiments::make_dirs(f.out);
    const text::LMData data = train::load_data(base.data);
    std::fprintf(stderr, "%s\n", data.description.c_str());
    const size_t vocab = data.vocab.size();
    std::vector<size_t> train_count(vocab, 0);
    for (size_t i = data.train.begin; i < data.train.end; ++i)
      ++train_count[static_cast<size_t>(data.stream[i])];
    json band_sizes = json::object();
    for (size_t id = 0; id < vocab; ++id)
      band_sizes[band_of(static_cast<int32_t>(id), train_count[id])] =
          band_sizes.value(band_of(static_cast<int32_t>(id), train_count[id]), 0) + 1;

    text::Word2VecOptions w2v = f.w2v;
    w2v.size = base.model.d_model, w2v.cbow = f.w2v_cbow == 1, w2v.seed = base.seed;
    // Only rank 0 trains word2vec, so only its log has the scores: look them up with value()
    // (operator[] on a const json with a missing key is undefined behaviour, which aborted
    // rank 1 under the sanitizers and read garbage without them).
    const json w2v_log = experiments::pretrain_word2vec(data, w2v, f.out + "/word2vec.bin");
    const text::WordVectors vectors = text::load_vectors(f.out + "/word2vec.bin");
    const text::VectorIndex w2v_index(vectors.words, vectors.matrix);

    json summary = {{"experiment", "lifecycle"},
                    {"base_config", base.to_json()},
                    {"data", data.description},
                    {"word2vec_wordsim", w2v_log.value("wordsim353", json())},
                    {"word2vec", w2v_log}};
    json runs = json::array();
    for (const auto& mode : mode_list) {
      train::TrainConfig c = base;
      c.model.embedding = nn::EmbeddingMode::learned, c.model.tied = mode.tied;
      if (c.model.name == "nplm") c.model.hidden = c.model.d_model;
      // The table before training: the model this configuration builds (the same seed gives
      // the same parameters; checked against the trained model's at its first step).
      const Tensor initial =
          train::build_model(c, data, nullptr)->input_embedding().weight().clone();
      // Within an epoch: which rows had a gradient, and the mean share per step. They are the
      // hooks' state, saved in every checkpoint, so a resumed run counts every step once.
      std::vector<bool> touched_epoch(vocab, false), touched_step(vocab, false);
      double rows_sum = 0;
      long steps = 0;
      train::TrainHooks hooks;
      hooks.after_backward = [&](long step, nn::LanguageModel& m) {
        const Tensor& w = m.input_embedding().weight();
        if (step == 0 && !std::equal(w.data(), w.data() + w.numel(), initial.data()))
          throw std::logic_error("exp_lifecycle: the rebuilt initial table is not the model's");
        std::fill(touched_step.begin(), touched_step.end(), false);
        mark_rows(w, touched_step);
        size_t n = 0;
        for (size_t r = 0; r < vocab; ++r) {
          n += touched_step[r];
          touched_epoch[r] = touched_epoch[r] || touched_step[r];
        }
        rows_sum += static_cast<double>(n) / static_cast<double>(vocab);
        ++steps;
      };
      hooks.save_state = [&] {
        std::vector<size_t> rows;
        for (size_t r = 0; r < vocab; ++r)
          if (touched_epoch[r]) rows.push_back(r);
        return json{{"rows_sum", rows_sum}, {"steps", steps}, {"touched_epoch", rows}};
      };
      hooks.load_state = [&](const json& state) {
        rows_sum = state.at("rows_sum").get<double>(), steps = state.at("steps").get<long>();
        std::fill(touched_epoch.begin(), touched_epoch.end(), false);
        for (size_t r : state.at("touched_epoch").get<std::vector<size_t>>())
          touched_epoch.at(r) = true;
      };
      // Each epoch's share of rows touched and drift by band go into its record (kept in
      // checkpoints with the curve).
      hooks.after_epoch = [&](size_t, nn::LanguageModel& m, json& record) {
        size_t n = 0;
        for (bool t : touched_epoch) n += t;
        record["rows_touched"] = static_cast<double>(n) / static_cast<double>(vocab);
        std::fill(touched_epoch.begin(), touched_epoch.end(), false);
        const Tensor& w = m.input_embedding().weight();
        const size_t width = w.size(1);
        std::map<std::string, std::pair<double, size_t>> acc;
        for (size_t r = 0; r < vocab; ++r) {
          double dot = 0, a = 0, b = 0;
          for (size_t j = 0; j < width; ++j) {
            const double x = initial.data()[r * width + j], y = w.data()[r * width + j];
            dot += x * y, a += x * x, b += y * y;
          }
          const double cos = a > 0 && b > 0 ? dot / std::sqrt(a * b) : 1.0;
          auto& [sum, count] = acc[band_of(static_cast<int32_t>(r), train_count[r])];
          sum += 1.0 - cos, ++count;
        }
        json bands = json::object();
        for (const auto& [band, sc] : acc) bands[band] = sc.first / static_cast<double>(sc.second);
        record["drift"] = bands;
      };
      // With the best parameters: the tables' neighbours and word similarity, into the
      // run's results file.
      hooks.after_training = [&](nn::LanguageModel& m, json& results) {
        const text::VectorIndex before(data.vocab.words(), initial);
        const text::VectorIndex after(data.vocab.words(), m.input_embedding().weight());
        const text::VectorIndex output(data.vocab.words(), m.output_matrix());
        json probe_rows = json::array();
        for (const auto& p : probes)
          probe_rows.push_back({{"word", p},
                                {"before", neighbours(before, p, k)},
                                {"after", neighbours(after, p, k)},
                                {"output", neighbours(output, p, k)},
                                {"word2vec", neighbours(w2v_index, p, k)}});
        results["lifecycle"] = {
            {"rows_per_step_mean", steps ? rows_sum / static_cast<double>(steps) : 0.0},
            {"wordsim_input",
             text::evaluate_similarity(after, experiments::data_path("wordsim353.tsv")).spearman},
            {"wordsim_output",
             text::evaluate_similarity(output, experiments::data_path("wordsim353.tsv")).spearman},
            {"neighbours", probe_rows}};
      };
      const std::string label = c.model.name + " " + mode.name;
      const json r = experiments::run_one(c, data, label,
                                          f.out + "/" + c.model.name + "_" + mode.name + ".json",
                                          hooks, "lifecycle");
      json rows_per_epoch = json::array(), drift = json::array();
      for (const auto& e : r.at("epochs")) {
        rows_per_epoch.push_back(e.at("rows_touched"));
        drift.push_back({{"epoch", e.at("epoch")}, {"bands", e.at("drift")}});
      }
      const json& life = r.at("lifecycle");
      runs.push_back({{"name", label},
                      {"tied", mode.tied},
                      {"vocab", vocab},
                      {"valid_ppl", r.at("valid_ppl")},
                      {"test_ppl", r.at("test_ppl")},
                      {"best_epoch", r.value("best_epoch", 0)},
                      {"stopped_early", r.value("stopped_early", false)},
                      {"rows_per_step_mean", life.at("rows_per_step_mean")},
                      {"rows_per_epoch", rows_per_epoch},
                      {"drift", drift},
                      {"band_sizes", band_sizes},
                      {"wordsim_input", life.at("wordsim_input")},
                      {"wordsim_output", life.at("wordsim_output")},
                      {"neighbours", life.at("neighbours")}});
      summary["runs"] = runs;
      experiments::write_json(f.out + "/summary.json", summary);
    }
    // Rank 0 alone holds the full results (the others' output is silenced anyway): rendering
    // on another rank failed at the end of an MPI run.
    if (!distributed::is_main()) return 0;
    std::printf("%s", experiments::lifecycle_section(summary).c_str());
    std::fprintf(stderr, "wrote %s/summary.json\n", f.out.c_str());
    return 0;
  });
}
