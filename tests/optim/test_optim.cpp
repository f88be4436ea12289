// Optimizer trajectories against PyTorch, lazy Adam's row semantics, clipping, schedules and
// checkpoints.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "autograd/op_cases.hpp"
#include "needs_openmp.hpp"
#include "nn/nn.hpp"
#include "optim/checkpoint.hpp"
#include "optim/optimizer.hpp"
#include "optim/schedule.hpp"

using namespace tg;
using namespace tg::testing;

namespace {
const TensorFile& golden() {
  static const TensorFile file = load_safetensors(TAPEGRAD_GOLDEN_DIR "/optim.safetensors");
  return file;
}

// The tiny problem of make_golden_nn.py: loss = CE(linear(table[ids], weight, bias), targets).
struct Problem {
  Tensor table, weight, bias;
  std::vector<optim::ParamGroup> groups(float wd) const {
    return {{{{"table", table}, {"weight", weight}, {"bias", bias}}, wd}};
  }
  Tensor loss(size_t step) const {
    const Ids& ids = golden().id_array("ids");
    const Ids& targets = golden().id_array("targets");
    const size_t n = ids.shape[1];
    Ids step_ids({n}, std::vector<int32_t>(ids.values.begin() + step * n,
                                           ids.values.begin() + (step + 1) * n));
    Ids step_targets({n}, std::vector<int32_t>(targets.values.begin() + step * n,
                                               targets.values.begin() + (step + 1) * n));
    return cross_entropy(linear(embedding(table, step_ids, true), weight, bias), step_targets);
  }
};

Problem fresh_problem() {
  auto init = [](const char* n) {
    return golden().tensor(std::string("init/") + n).clone().set_requires_grad(true);
  };
  return {init("table"), init("weight"), init("bias")};
}

std::unique_ptr<optim::Optimizer> make(const std::string& name, const Problem& p) {
  if (name == "sgd")
    return std::make_unique<optim::SGD>(p.groups(0.01f), optim::SGDOptions{0.1f, 0.9f});
  if (name == "adam")
    return std::make_unique<optim::Adam>(p.groups(0.01f), optim::AdamOptions{.lr = 0.01f}, false);
  if (name == "adamw")
    return std::make_unique<optim::Adam>(p.groups(0.1f), optim::AdamOptions{.lr = 0.01f}, true);
  if (name == "lazy_adam")
    return std::make_unique<optim::LazyAdam>(p.groups(0.0f), optim::AdamOptions{.lr = 0.01f});
  return std::make_unique<optim::Adam>(p.groups(0.1f), optim::AdamOptions{.lr = 0.05f},
                                       true);  // adamw_clip_cosine
}

const std::vector<std::string> kOptimizers = {"sgd", "adam", "adamw", "lazy_adam",
                                              "adamw_clip_cosine"};
}  // namespace

BOOST_AUTO_TEST_SUITE(optim_suite)

BOOST_DATA_TEST_CASE(trajectory_matches_pytorch, boost::unit_test::data::make(kOptimizers), name) {
  Problem p = fresh_problem();
  auto opt = make(name, p);
  const optim::WarmupCosine schedule{0.05f, 2, 5, 0.005f};
  for (size_t step = 0; step < 5; ++step) {
    opt->zero_grad();
    backward(p.loss(step));
    if (name == "adamw_clip_cosine") {
      optim::clip_grad_norm({p.table, p.weight, p.bias}, 0.5f);
      opt->set_lr(schedule(static_cast<long>(step)));
    }
    opt->step();
    for (const auto& [pname, t] : std::vector<std::pair<std::string, Tensor>>{
             {"table", p.table}, {"weight", p.weight}, {"bias", p.bias}}) {
      const std::string key = name + "/step" + std::to_string(step) + "/" + pname;
      const Comparison c = compare(t.array(), golden().tensor(key).array(), 1e-6, 1e-5);
      BOOST_TEST_MESSAGE(key << ": max |diff| = " << c.max_abs_diff);
      BOOST_TEST(c.ok, key << " differs from PyTorch at " << c.where);
    }
  }
}

// Rows 5..9 are never looked up: lazy Adam leaves them bit for bit, dense AdamW with weight
// decay does not.
BOOST_AUTO_TEST_CASE(lazy_adam_leaves_untouched_rows_alone) {
  for (const std::string name : {"lazy_adam", "adamw"}) {
    Problem p = fresh_problem();
    const Tensor before = p.table.clone();
    auto opt = make(name, p);
    for (size_t step = 0; step < 5; ++step) {
      opt->zero_grad();
      backward(p.loss(step));
      opt->step();
    }
    const bool untouched =
        std::memcmp(before.data() + 5 * 4, p.table.data() + 5 * 4, 5 * 4 * sizeof(float)) == 0;
    BOOST_TEST(untouched == (name == "lazy_adam"), name);
  }
}

// Clipping and AdamW's update are split over threads (the norm in fixed chunks): 1 and 2
// threads give the same parameters bit for bit, on a tensor large enough to be split.
BOOST_AUTO_TEST_CASE(adamw_step_is_the_same_on_1_and_2_threads,
                     *boost::unit_test::precondition(testing::needs_openmp)) {
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Generator gen(5);
    Tensor w = randn({200, 200}, gen, 1.0f, true);
    optim::Adam opt({{{{"w", w}}, 0.1f}}, {.lr = 1e-2f}, true);
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      backward(sum(mul(mul(w, w), randn({200, 200}, gen))));
      optim::clip_grad_norm({w}, 0.5f);
      opt.step();
    }
    results.emplace_back(w.data(), w.data() + w.numel());
  }
  set_num_threads(1);
  BOOST_TEST(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)) ==
             0);
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_scales_dense_and_sparse) {
  Tensor a = Tensor::zeros({2}, true), table = Tensor::zeros({4, 2}, true);
  a.grad_data()[0] = 3.0f;
  SparseGrad& sg = table.sparse_grad_mut();
  sg.rows = {1};
  sg.values = Array::from_shape({1, 2});
  sg.values(0, 0) = 4.0f;
  sg.values(0, 1) = 0.0f;
  BOOST_TEST(optim::clip_grad_norm({a, table}, 10.0f) == 5.0f);  // no clipping below the bound
  BOOST_TEST(a.grad().data()[0] == 3.0f);
  BOOST_TEST(optim::clip_grad_norm({a, table}, 1.0f) == 5.0f);
  BOOST_TEST(a.grad().data()[0] == 0.6f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(table.sparse_grad()->values(0, 0) == 0.8f, boost::test_tools::tolerance(1e-5f));
}

// The norm is a sum of squares over chunks of 2^15 values, each summed in order, the chunks
// added in order: the same bits whatever the thread count and however the chunks are grouped
// (9 full chunks and a partial one: groups of 4 side by side, then single chunks).
BOOST_AUTO_TEST_CASE(clip_grad_norm_sums_in_a_fixed_order) {
  constexpr size_t kChunk = size_t{1} << 15;
  const size_t n = 9 * kChunk + 1000;
  Generator gen(3);
  Tensor w = Tensor::zeros({n}, true);
  const Tensor g = randn({n}, gen);
  std::copy_n(g.data(), n, w.grad_data());
  double total = 0.0;
  for (size_t c = 0; c * kChunk < n; ++c) {
    double s = 0.0;
    for (size_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i)
      s += static_cast<double>(g.data()[i]) * g.data()[i];
    total += s;
  }
  const float want = static_cast<float>(std::sqrt(total));
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    BOOST_TEST(optim::clip_grad_norm({w}, 1e9f) == want, threads << " threads");
  }
  set_num_threads(1);
}

BOOST_AUTO_TEST_CASE(schedules) {
  const optim::WarmupCosine s{1.0f, 10, 110, 0.1f};
  BOOST_TEST(s(0) == 0.1f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(s(9) == 1.0f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(s(60) == 0.55f, boost::test_tools::tolerance(1e-5f));  // half way: mean of lr and min
  BOOST_TEST(s(110) == 0.1f);
  BOOST_TEST(s(500) == 0.1f);
  const optim::InverseDecay bengio{0.1f, 1e-3f};
  BOOST_TEST(bengio(1000) == 0.05f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(base::name_of(optim::kScheduleNames, optim::ScheduleKind::inverse) == "inverse");
  BOOST_TEST((base::parse_name(optim::kScheduleNames, "cosine", "--schedule") ==
              optim::ScheduleKind::cosine));
  try {
    base::parse_name(optim::kScheduleNames, "linear", "--schedule");
    BOOST_FAIL("an unknown schedule was accepted");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()) ==
               "--schedule: unknown value 'linear' (use constant, cosine or inverse)");
  }
}

// The vocabulary's matrices decay as TableDecay says; the other matrices always, biases and
// norms never; a tied table is an embedding (it never decays under `output`).
BOOST_AUTO_TEST_CASE(table_decay_picks_which_vocabulary_matrices_decay) {
  const auto decayed = [](bool tied, optim::TableDecay tables) {
    const nn::GPT model({.vocab = 11,
                         .context = 4,
                         .d_model = 8,
                         .layers = 1,
                         .heads = 2,
                         .tied = tied,
                         .parts = {}});
    std::set<std::string> names;
    const auto groups = optim::decay_groups(model, 0.1f, tables);
    for (const auto& p : groups.front().params) names.insert(p.name);
    return names;
  };
  const auto has = [](const std::set<std::string>& s, const char* name) {
    return s.count(name) > 0;
  };
  for (const bool tied : {false, true})
    for (const auto tables :
         {optim::TableDecay::output, optim::TableDecay::none, optim::TableDecay::all}) {
      const std::set<std::string> d = decayed(tied, tables);
      BOOST_TEST(has(d, "blocks.0.mlp.fc.weight"));
      BOOST_TEST(!has(d, "blocks.0.mlp.fc.bias"));
      BOOST_TEST(has(d, "wte.weight") == (tables == optim::TableDecay::all));
      BOOST_TEST(has(d, "lm_head.weight") == (!tied && tables != optim::TableDecay::none));
    }
}

BOOST_AUTO_TEST_CASE(checkpoint_round_trip_and_resume) {
  namespace fs = std::filesystem;
  const std::string path =
      (fs::temp_directory_path() / ("tapegrad_ckpt_" + std::to_string(::getpid()))).string();
  nn::GPTConfig c{
      .vocab = 12, .context = 6, .d_model = 8, .layers = 1, .heads = 2, .seed = 9, .parts = {}};
  const Ids ids({2, 6}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0}),
      targets({2, 6}, {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1});
  auto train = [&](nn::GPT& m, optim::Optimizer& o, int steps) {
    std::vector<float> losses;
    for (int i = 0; i < steps; ++i) {
      o.zero_grad();
      Tensor loss = m.loss(ids, targets);
      backward(loss);
      o.step();
      losses.push_back(loss.item());
    }
    return losses;
  };
  nn::GPT a(c);
  optim::Adam opt_a(optim::decay_groups(a, 0.1f), {.lr = 1e-2f}, true);
  train(a, opt_a, 3);
  optim::save_checkpoint(path, a, &opt_a, {{"step", "3"}});
  const auto continued = train(a, opt_a, 3);

  c.seed = 77;  // different initial values: everything must come from the file
  nn::GPT b(c);
  optim::Adam opt_b(optim::decay_groups(b, 0.1f), {.lr = 1e-2f}, true);
  const auto meta = optim::load_checkpoint(path, b, &opt_b);
  BOOST_TEST(meta.at("step") == "3");
  BOOST_TEST(opt_b.steps() == 3);
  const auto resumed = train(b, opt_b, 3);
  BOOST_TEST(resumed == continued, boost::test_tools::per_element());  // bit for bit

  // A damaged checkpoint is refused, naming what is wrong: resuming it would silently differ
  // from the uninterrupted run. Each tensor has a checksum; the data section has no bytes that
  // belong to no tensor.
  {
    const auto refused = [&](const std::string& file, const std::string& expected) {
      try {
        optim::load_checkpoint(file, b, &opt_b);
        BOOST_ERROR("a checkpoint that should be refused (" + expected + ") resumed");
      } catch (const std::runtime_error& e) {
        BOOST_TEST(std::string(e.what()).find(expected) != std::string::npos, e.what());
      }
    };
    const std::string damaged_path = path + ".damaged";
    const auto damaged_with = [&](const std::function<void(TensorFile&)>& damage) {
      TensorFile file = load_safetensors(path);
      damage(file);
      save_safetensors(damaged_path, file);
      return damaged_path;
    };
    refused(damaged_with([](TensorFile& f) { f.tensors.erase("optim.exp_avg_sq.wte.weight"); }),
            "tensor 'optim.exp_avg_sq.wte.weight' is missing");
    refused(damaged_with([](TensorFile& f) {
              f.tensors.erase("optim.exp_avg.wte.weight");
              f.tensors.erase("optim.exp_avg_sq.wte.weight");
            }),
            "tensor 'optim.exp_avg.wte.weight' is missing");
    refused(damaged_with([](TensorFile& f) {
              std::erase_if(f.tensors, [](const auto& t) { return t.first.starts_with("optim."); });
            }),
            "is missing");
    refused(damaged_with([](TensorFile& f) {
              Tensor w = f.tensors.at("wte.weight").clone();
              w.data()[3] *= 1000;
              f.tensors["wte.weight"] = w;
            }),
            "tensor 'wte.weight' does not match its checksum");
    refused(damaged_with([](TensorFile& f) { f.tensors["extra.added"] = Tensor::zeros({2}); }),
            "tensor 'extra.added' was not in the checkpoint");
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::string flipped = bytes;
    flipped[flipped.size() - 3] ^= 0x10;  // inside the last tensor's data
    std::ofstream(damaged_path, std::ios::binary) << flipped;
    refused(damaged_path, "does not match its checksum");
    std::ofstream(damaged_path, std::ios::binary) << bytes << "junk";
    refused(damaged_path, "4 bytes after the last entry's data belong to no entry");
    // A checkpoint written before checksums (format 1) still resumes.
    TensorFile older = load_safetensors(path);
    older.metadata.erase("checksums");
    older.metadata["format"] = "tapegrad-checkpoint-1";
    save_safetensors(damaged_path, older);
    BOOST_CHECK_NO_THROW(optim::load_checkpoint(damaged_path, b, &opt_b));
    TensorFile damaged = load_safetensors(path);
    damaged.metadata["optim.steps"] = "1e30";
    save_safetensors(path + ".damaged", damaged);
    BOOST_CHECK_EXCEPTION(optim::load_checkpoint(path + ".damaged", b, &opt_b), std::runtime_error,
                          [](const std::runtime_error& e) {
                            return std::string(e.what()).find("'1e30' is not a whole number") !=
                                   std::string::npos;
                          });
    std::filesystem::remove(path + ".damaged");
  }
  // Rejections: another model shape, a truncated file, a corrupted header, a foreign file.
  nn::GPTConfig wider = c;
  wider.d_model = 16;
  nn::GPT other(wider);
  try {
    optim::load_checkpoint(path, other, nullptr);
    BOOST_FAIL("loaded a checkpoint into a model of another shape");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(std::string(e.what()).find("wte.weight") != std::string::npos, e.what());
  }
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  BOOST_CHECK_THROW(optim::load_checkpoint(path, b, &opt_b), std::runtime_error);
  std::string corrupt = bytes;
  corrupt[9] = '\x01';
  std::ofstream(path, std::ios::binary) << corrupt;
  BOOST_CHECK_THROW(optim::load_checkpoint(path, b, &opt_b), std::runtime_error);
  TensorFile foreign;
  foreign.tensors["x"] = Tensor::zeros({1});
  save_safetensors(path, foreign);
  BOOST_CHECK_THROW(optim::load_checkpoint(path, b, nullptr), std::runtime_error);
  optim::SGD sgd(optim::single_group(b), {});
  optim::save_checkpoint(path, b, &sgd, {});
  BOOST_CHECK_THROW(optim::load_checkpoint(path, b, &opt_b),
                    std::runtime_error);  // optimizer kind differs
  fs::remove(path);
}

BOOST_AUTO_TEST_SUITE_END()
