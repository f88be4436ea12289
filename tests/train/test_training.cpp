// The training loop on the toy corpus: the results file, determinism, exact resume from a
// checkpoint, early stopping and the pretrained path.
#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "base/build_info.hpp"
#include "base/machine.hpp"
#include "temp_folder.hpp"
#include "text/bpe.hpp"
#include "text/vectors.hpp"
#include "train/evaluate.hpp"
#include "train/models.hpp"
#include "train/optimizers.hpp"
#include "train/recorded_sigterm.hpp"
#include "train/signals.hpp"
#include "train/toy_data.hpp"
#include "train/trainer.hpp"

using namespace tg;
namespace fs = std::filesystem;

namespace {
const text::LMData& toy() {
  return testing::toy_data();
}

train::TrainConfig tiny(const std::string& model) {
  train::TrainConfig c;
  c.model = testing::tiny_model(model);
  c.batch = 8;
  c.epochs = 2;
  c.warmup = 5;
  c.lr = model == "lstm" ? 1e-2f : 3e-3f;  // an LSTM wants larger steps in so few of them
  c.model.dropout = 0.1f;
  c.quiet = true;
  c.seed = 4;
  return c;
}

std::vector<double> losses(const nlohmann::json& j) {
  std::vector<double> out;
  for (const auto& e : j["epochs"]) {
    out.push_back(e["train_loss"].get<double>());
    out.push_back(e["valid_loss"].get<double>());
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(train_training)

BOOST_AUTO_TEST_CASE(results_file_has_the_documented_keys_and_training_helps) {
  const testing::TempFolder folder;
  for (const std::string model : {"gpt", "nplm", "lstm"}) {
    train::TrainConfig c = tiny(model);
    c.results = folder.file(model + ".json");
    const train::RunResult r = train::train_language_model(c, toy());
    std::ifstream in(c.results);
    const nlohmann::json j = nlohmann::json::parse(in);
    for (const char* key :
         {"valid_ppl", "test_ppl", "trainable_params", "train_tokens_per_s", "wall_s", "epochs",
          "config", "seed", "provenance", "version", "schema"})
      BOOST_TEST(j.contains(key), model << " results lack " << key);
    BOOST_TEST(j["schema"] == train::RunRecord::kSchema);
    // The commit names the code: 12 hex digits ("-dirty" is a field of its own).
    const std::string commit = j["provenance"].value("commit", std::string());
    BOOST_TEST((commit == "unknown" ||
                (commit.size() == 12 &&
                 commit.find_first_not_of("0123456789abcdef") == std::string::npos)),
               "commit " << commit);
    // The file is the record the run returned, and reads back as it.
    BOOST_TEST(j == r.json);
    BOOST_TEST(train::RunRecord::from_json(j, c.results).to_json() == j);
    BOOST_TEST(j["epochs"].size() == 2u);
    BOOST_TEST(j["config"]["model"] == model);
    // Uniform guessing scores the vocabulary size.
    BOOST_TEST(r.valid_ppl < 0.75 * static_cast<double>(toy().vocab.size()),
               model << " did not learn: ppl " << r.valid_ppl << " for " << toy().vocab.size()
                     << " words");
    BOOST_TEST(j["epochs"][1]["train_loss"].get<double>() <
               j["epochs"][0]["train_loss"].get<double>());
  }
}

// Per-token losses (the test blocks in the results, --token-nll) are the same predictions as
// the perplexities: their mean is the reported loss.
BOOST_AUTO_TEST_CASE(token_losses_add_up_to_the_reported_perplexities) {
  const testing::TempFolder folder;
  for (const std::string model : {"gpt", "nplm", "lstm"}) {
    train::TrainConfig c = tiny(model);
    c.epochs = 1;
    c.results = folder.file(model + "_blocks.json");
    c.token_nll = folder.file(model + "_tokens.json");
    const train::RunResult r = train::train_language_model(c, toy());
    std::ifstream results_in(c.results), tokens_in(c.token_nll);
    const nlohmann::json j = nlohmann::json::parse(results_in),
                         t = nlohmann::json::parse(tokens_in);
    const auto mean = [](const nlohmann::json& values) {
      double sum = 0;
      for (const auto& v : values) sum += v.get<double>();
      return sum / static_cast<double>(values.size());
    };
    const size_t test_tokens = toy().test.end - toy().test.begin;
    BOOST_TEST(t["test"].size() == test_tokens);
    BOOST_TEST(t["valid"].size() == toy().valid.end - toy().valid.begin);
    BOOST_TEST(std::exp(mean(t["test"])) == r.test_ppl, boost::test_tools::tolerance(1e-5));
    BOOST_TEST(std::exp(mean(t["valid"])) == r.valid_ppl, boost::test_tools::tolerance(1e-5));
    // A run without hooks keeps no per-token analysis of its own (a study's hooks add it).
    BOOST_TEST(!j.contains("test_blocks"));
    BOOST_TEST(!j.contains("test_bands"));
  }
}

// The after_test hook sees the losses the --token-nll file holds, before after_training, and
// what it adds is in the results file.
BOOST_AUTO_TEST_CASE(after_test_hook_sees_each_test_token_loss) {
  const testing::TempFolder folder;
  train::TrainConfig c = tiny("gpt");
  c.epochs = 1;
  c.results = folder.file("hooked.json");
  c.token_nll = folder.file("hooked_tokens.json");
  std::vector<double> seen;
  bool before_training_hook = false;
  train::TrainHooks hooks;
  hooks.after_test = [&](std::span<const double> test_nll, nlohmann::json& results) {
    seen.assign(test_nll.begin(), test_nll.end());
    results["my_token_count"] = test_nll.size();
  };
  hooks.after_training = [&](nn::LanguageModel&, nlohmann::json& results) {
    before_training_hook = results.contains("my_token_count");
  };
  const train::RunResult r = train::train_language_model(c, toy(), hooks);
  std::ifstream tokens_in(c.token_nll);
  const nlohmann::json t = nlohmann::json::parse(tokens_in);
  BOOST_TEST(seen.size() == toy().test.end - toy().test.begin);
  BOOST_TEST(t["test"].size() == seen.size());
  for (size_t i = 0; i < seen.size(); ++i)
    BOOST_TEST(t["test"][i].get<double>() == seen[i], boost::test_tools::tolerance(1e-6));
  BOOST_TEST(before_training_hook);
  BOOST_TEST(r.json["my_token_count"].get<size_t>() == seen.size());
}

BOOST_AUTO_TEST_CASE(same_seed_same_numbers_bit_for_bit) {
  const auto a = train::train_language_model(tiny("gpt"), toy());
  const auto b = train::train_language_model(tiny("gpt"), toy());
  BOOST_TEST(losses(a.json) == losses(b.json), boost::test_tools::per_element());
  train::TrainConfig other = tiny("gpt");
  other.seed = 5;
  BOOST_TEST(losses(train::train_language_model(other, toy()).json) != losses(a.json));
}

// Crash mid-epoch (step 7) and right after an epoch boundary (where the checkpoint is written
// after the epoch's evaluation), resume to the end: the same losses as one uninterrupted run.
// Evaluating in the middle of epochs (--eval-every) only watches: the same training, bit for
// bit, so that studies may change it between sittings.
BOOST_AUTO_TEST_CASE(same_numbers_whatever_the_evaluation_frequency) {
  for (const std::string model : {"gpt", "nplm", "lstm"}) {
    train::TrainConfig c = tiny(model);
    const auto plain = train::train_language_model(c, toy());
    c.eval_every = 3;
    const auto watched = train::train_language_model(c, toy());
    BOOST_TEST(watched.json["evals"].size() > 0u);
    BOOST_TEST(losses(plain.json) == losses(watched.json), boost::test_tools::per_element());
    BOOST_TEST(plain.test_ppl == watched.test_ppl);
  }
}

// A model that carries its state reads the split as `batch` contiguous streams: row r of
// step k + 1 continues row r of step k, the targets are the inputs one token on, and the
// streams do not overlap.
BOOST_AUTO_TEST_CASE(stateful_models_read_contiguous_streams) {
  const size_t t = 16, rows = 8;
  train::Batcher streams(toy(), 0, t, rows, train::BatchOrder::streams);
  Generator gen(3);
  streams.start_epoch(gen);
  BOOST_TEST(streams.steps_per_epoch() >= 2u);
  const auto [in0, out0] = streams.batch(0);
  const auto [in1, out1] = streams.batch(1);
  BOOST_TEST(in0.shape == (Shape{rows, t}));
  const auto& ids = toy().stream;
  auto position = [&](const Ids& in, size_t r) {  // where row r's window starts in the stream
    for (size_t p = toy().train.begin; p + t <= toy().train.end; ++p)
      if (std::equal(in.values.begin() + static_cast<long>(r * t),
                     in.values.begin() + static_cast<long>((r + 1) * t),
                     ids.begin() + static_cast<long>(p)))
        return p;
    return size_t(0);
  };
  size_t previous_start = 0;
  for (size_t r = 0; r < rows; ++r) {
    const size_t p0 = position(in0, r), p1 = position(in1, r);
    BOOST_TEST(p1 == p0 + t, "row " << r << ": step 1 starts at " << p1 << ", step 0 at " << p0);
    BOOST_TEST(std::equal(out0.values.begin() + static_cast<long>(r * t),
                          out0.values.begin() + static_cast<long>((r + 1) * t),
                          ids.begin() + static_cast<long>(p0 + 1)));
    if (r > 0)
      BOOST_TEST(p0 >= previous_start + streams.steps_per_epoch() * t,
                 "row " << r << " overlaps row " << r - 1);
    previous_start = p0;
  }
  // The registered lstm trains on streams; a batch larger than the streams can hold is refused.
  BOOST_CHECK_EXCEPTION(
      train::Batcher(toy(), 0, t, toy().train.size() / (2 * t), train::BatchOrder::streams),
      std::invalid_argument, [](const std::invalid_argument& e) {
        return std::string(e.what()).find("too few for two windows") != std::string::npos;
      });
}

// A recurrent model is evaluated as it trains: the split read as contiguous streams with the
// state carried across windows. With one stream that is the same as one forward pass over the
// whole range from a fresh state; per-token and mean losses agree; the state it trained with is
// back afterwards; and a carried state predicts better than windows read from zeros.
BOOST_AUTO_TEST_CASE(recurrent_models_are_evaluated_with_their_state_carried) {
  train::TrainConfig c = tiny("lstm");
  c.model.dropout = 0.0f;
  const auto model = train::build_model(c, toy(), nullptr);
  const text::Range range = toy().valid;
  const double streamed = train::evaluate_nll(*model, toy(), range, 1);
  // The same windows (256 targets, then the rest) through training mode's carried state,
  // which the trainer uses (no dropout here, so training and evaluation mode compute the same).
  const auto window_loss = [&](nn::LanguageModel& m, size_t p, size_t len) {
    std::vector<int32_t> in(toy().stream.begin() + static_cast<long>(p - 1),
                            toy().stream.begin() + static_cast<long>(p - 1 + len));
    std::vector<int32_t> out(toy().stream.begin() + static_cast<long>(p),
                             toy().stream.begin() + static_cast<long>(p + len));
    return static_cast<double>(m.loss(Ids({1, len}, in), Ids({1, len}, out)).item());
  };
  BOOST_REQUIRE(range.size() > 256u);
  double whole = 0.0;
  {
    NoGrad no_grad;
    model->train();
    model->reset_state();
    whole = (window_loss(*model, range.begin, 256) * 256 +
             window_loss(*model, range.begin + 256, range.size() - 256) *
                 static_cast<double>(range.size() - 256)) /
            static_cast<double>(range.size());
  }
  BOOST_TEST(streamed == whole, boost::test_tools::tolerance(1e-5));
  const std::vector<double> nll = train::token_nll(*model, toy(), range, 4);
  double mean = 0.0;
  for (double x : nll) mean += x / static_cast<double>(nll.size());
  // (loss() sums in float, token_nll in double)
  BOOST_TEST(mean == train::evaluate_nll(*model, toy(), range, 4),
             boost::test_tools::tolerance(1e-6));
  // Train a few steps, so that the state matters and one is carried.
  c.steps = 30;
  c.epochs = 0;
  train::RunResult r = train::train_language_model(c, toy());
  const std::vector<Tensor> before = r.model->carried_state();
  BOOST_REQUIRE(!before.empty());
  const double carried = train::evaluate_nll(*r.model, toy(), range, 4);
  const std::vector<Tensor> after = r.model->carried_state();
  BOOST_REQUIRE_EQUAL(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i)
    BOOST_TEST(std::equal(before[i].data(), before[i].data() + before[i].numel(), after[i].data()));
  // Windows of 16 read from zeros (what evaluation did before): a worse loss.
  r.model->eval();
  double fresh = 0.0;
  size_t windows = 0;
  for (size_t p = range.begin; p + 16 <= range.end; p += 16, ++windows) {
    r.model->reset_state();
    fresh += window_loss(*r.model, p, 16);
  }
  BOOST_TEST_MESSAGE("lstm after 30 steps: carried " << carried << ", windows of 16 from zeros "
                                                     << fresh / static_cast<double>(windows));
  BOOST_TEST(carried < fresh / static_cast<double>(windows));
}

BOOST_AUTO_TEST_CASE(resume_continues_exactly) {
  const testing::TempFolder folder;
  for (const std::string model : {"gpt", "nplm", "lstm"})
    for (const bool at_boundary : {false, true}) {
      const auto whole = train::train_language_model(tiny(model), toy());
      const long crash = at_boundary ? whole.json["steps_per_epoch"].get<long>() : 7;
      // A run with checkpoints every 7 steps that crashes at step 7, then a resume.
      train::TrainConfig full_schedule = tiny(model);
      full_schedule.checkpoint_every = crash;
      train::TrainConfig killed = full_schedule;
      killed.checkpoint = folder.file(model + "_every.ckpt");
      train::TrainHooks stop_at_7;
      stop_at_7.after_backward = [&](long step, nn::LanguageModel&) {
        if (step == crash) throw std::runtime_error("simulated crash");
      };
      BOOST_CHECK_THROW(train::train_language_model(killed, toy(), stop_at_7), std::runtime_error);
      train::TrainConfig resumed = tiny(model);
      resumed.resume = killed.checkpoint;
      const auto rest = train::train_language_model(resumed, toy());
      BOOST_TEST(losses(rest.json) == losses(whole.json), boost::test_tools::per_element());
      BOOST_TEST(rest.test_ppl == whole.test_ppl,
                 model << (at_boundary ? " at an epoch boundary" : " mid-epoch"));
      fs::remove(killed.checkpoint);
    }
}

// Killed after training's last checkpoint, in the final evaluation (a study's test split takes
// a minute): resumed with the same settings, the run trains nothing more and ends with the
// uninterrupted run's numbers, at the last step and after early stopping alike.
BOOST_AUTO_TEST_CASE(a_run_killed_in_its_final_evaluation_resumes_to_the_same_numbers) {
  const testing::TempFolder folder;
  for (const bool early : {false, true}) {
    train::TrainConfig c = tiny("nplm");
    if (early) c.epochs = 30, c.patience = 1, c.lr = 3e-2f, c.model.dropout = 0.0f;
    const auto whole = train::train_language_model(c, toy());
    BOOST_TEST(whole.json["stopped_early"].get<bool>() == early);
    c.checkpoint = folder.file("final.ckpt");
    train::TrainHooks killed;
    killed.after_training = [](nn::LanguageModel&, nlohmann::json&) {
      throw std::runtime_error("simulated kill");
    };
    BOOST_CHECK_THROW(train::train_language_model(c, toy(), killed), std::runtime_error);
    c.resume = c.checkpoint;
    const auto rest = train::train_language_model(c, toy());
    BOOST_TEST(losses(rest.json) == losses(whole.json), boost::test_tools::per_element());
    BOOST_TEST(rest.json["steps"] == whole.json["steps"]);
    BOOST_TEST(rest.json["stopped_early"] == whole.json["stopped_early"]);
    BOOST_TEST(rest.json["best_epoch"] == whole.json["best_epoch"]);
    BOOST_TEST(rest.test_ppl == whole.test_ppl, (early ? "early stopping" : "last step"));
    BOOST_TEST(rest.json["train_tokens_per_s"].get<double>() > 0.0);
    // Past the end is refused, naming both steps.
    c.epochs = 1;
    c.patience = 0;
    BOOST_CHECK_EXCEPTION(train::train_language_model(c, toy()), std::invalid_argument,
                          [](const std::invalid_argument& e) {
                            return std::string(e.what()).find("raise --steps or --epochs") !=
                                   std::string::npos;
                          });
    fs::remove(c.checkpoint);
  }
}

// A damaged step count in a checkpoint is refused naming the field, not read as a wrapped
// number (1e30 resumed "at step -9223372036854775808").
BOOST_AUTO_TEST_CASE(a_checkpoint_with_a_damaged_step_count_is_refused) {
  const testing::TempFolder folder;
  train::TrainConfig c = tiny("gpt");
  c.epochs = 1;
  c.checkpoint = folder.file("damaged_step.ckpt");
  train::train_language_model(c, toy());
  for (const nlohmann::json& step :
       {nlohmann::json(1e30), nlohmann::json(-3), nlohmann::json("7")}) {
    TensorFile file = load_safetensors(c.checkpoint);
    nlohmann::json state = nlohmann::json::parse(file.metadata.at("train_state"));
    state["step"] = step;
    file.metadata["train_state"] = state.dump();
    save_safetensors(c.checkpoint + ".bad", file);
    train::TrainConfig resumed = c;
    resumed.resume = c.checkpoint + ".bad";
    resumed.checkpoint.clear();
    resumed.epochs = 2;
    BOOST_CHECK_EXCEPTION(train::train_language_model(resumed, toy()), std::runtime_error,
                          [&](const std::runtime_error& e) {
                            return std::string(e.what()).find(
                                       "damaged training state: training "
                                       "state 'step' is " +
                                       step.dump()) != std::string::npos;
                          });
  }
}

// A checkpoint of a run in BPE tokens records the BPE's hash; a resume whose BPE hashes
// otherwise (its files changed under the same name) is refused naming both hashes.
BOOST_AUTO_TEST_CASE(a_checkpoint_records_its_tokenizer_and_refuses_another) {
  const testing::TempFolder folder;
  text::LMDataOptions o;
  o.corpus_file = TAPEGRAD_FIXTURES "/toy_corpus.txt";
  o.tokenizer = "gpt2";
  const text::LMData data = text::load_lm_data(o);
  train::TrainConfig c = tiny("gpt");
  c.data = o;
  c.steps = 2;
  c.checkpoint = folder.file("tokenizer.ckpt");
  train::train_language_model(c, data);
  TensorFile file = load_safetensors(c.checkpoint);
  BOOST_TEST(file.metadata.at("tokenizer_hash") == data.vocab.bpe()->hash());
  file.metadata["tokenizer_hash"] = "0123456789abcdef";
  save_safetensors(c.checkpoint + ".other", file);
  train::TrainConfig resumed = c;
  resumed.resume = c.checkpoint + ".other";
  resumed.checkpoint.clear();
  resumed.steps = 3;
  BOOST_CHECK_EXCEPTION(
      train::train_language_model(resumed, data), std::invalid_argument,
      [&](const std::invalid_argument& e) {
        return std::string(e.what()).find("tokenizer hash: 0123456789abcdef in the checkpoint, " +
                                          data.vocab.bpe()->hash() + " in this run") !=
               std::string::npos;
      });
}

// --precision bf16 trains every built-in model close to fp32 (the products alone differ),
// records the precision, and a resume in the other precision is refused naming both. Where
// the CPU has no native bf16 the Trainer refuses bf16 before training instead.
BOOST_AUTO_TEST_CASE(bf16_trains_every_model_near_fp32_and_resumes_only_in_bf16) {
  const testing::TempFolder folder;
  if (!cpu_has_native_bf16()) {
    BOOST_TEST_MESSAGE("SKIPPED bf16 training: this CPU has no native bf16; checking the refusal");
    train::TrainConfig c = tiny("gpt");
    c.precision = Precision::bf16;
    BOOST_CHECK_THROW(train::train_language_model(c, toy()), std::invalid_argument);
    return;
  }
  for (const std::string model : {"gpt", "nplm", "lstm", "gru"}) {
    train::TrainConfig c = tiny(model);
    const auto fp32 = train::train_language_model(c, toy());
    c.precision = Precision::automatic;  // resolves to bf16 on this CPU
    c.checkpoint = folder.file(model + "_bf16.ckpt");
    const auto bf16 = train::train_language_model(c, toy());
    BOOST_TEST(bf16.json["config"]["precision"] == "bf16", model);
    BOOST_TEST(fp32.json["config"]["precision"] == "fp32", model);
    // Two epochs on the toy corpus: the losses follow fp32's within 2% (bf16's rounding, 2^-8
    // per input, does not compound over so few steps), but are not fp32's.
    const auto a = losses(fp32.json), b = losses(bf16.json);
    BOOST_REQUIRE_EQUAL(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      BOOST_TEST(std::abs(b[i] - a[i]) <= 0.02 * a[i],
                 model << " loss " << i << ": " << b[i] << " in bf16, " << a[i] << " in fp32");
    BOOST_TEST(a != b, model << ": bf16 gave fp32's losses bit for bit");
    train::TrainConfig resumed = tiny(model);
    resumed.resume = c.checkpoint;
    resumed.epochs = 3;
    BOOST_CHECK_EXCEPTION(train::train_language_model(resumed, toy()), std::invalid_argument,
                          [](const std::invalid_argument& e) {
                            const std::string m = e.what();
                            return m.find("precision") != std::string::npos &&
                                   m.find("bf16") != std::string::npos &&
                                   m.find("fp32") != std::string::npos;
                          });
    resumed.precision = Precision::bf16;
    BOOST_CHECK_NO_THROW(train::train_language_model(resumed, toy()));
  }
  set_precision(Precision::fp32);  // the next cases train in fp32
}

// wall_s, cpu_s and the curve's elapsed_s count every sitting of a resumed run (up to the
// checkpoint it resumed from), not the last sitting alone; time the process spends not running
// (here sleeping, in a study a SIGSTOP pause) is in wall_s but not in cpu_s.
BOOST_AUTO_TEST_CASE(wall_and_cpu_time_add_up_over_the_sittings_of_a_resumed_run) {
  const testing::TempFolder folder;
  train::TrainConfig c = tiny("gpt");
  c.epochs = 1;
  c.checkpoint = folder.file("wall.ckpt");
  // A first sitting of at least steps x 30 ms: each step sleeps 20 ms and computes 10 ms.
  train::TrainHooks slow;
  slow.after_backward = [](long, nn::LanguageModel&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto cpu_now = [] {
      timespec t{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
      return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
    };
    for (const double start = cpu_now(); cpu_now() - start < 0.01;) {
    }
  };
  const auto first = train::train_language_model(c, toy(), slow);
  const double steps = first.json["steps"].get<double>(), first_sitting = 0.03 * steps;
  BOOST_TEST(first.json["wall_s"].get<double>() >= first_sitting);
  const double first_cpu = first.json["cpu_s"].get<double>();
  BOOST_TEST(first_cpu >= 0.01 * steps);
  BOOST_TEST(first_cpu < first.json["wall_s"].get<double>() - 0.02 * steps);
  c.resume = c.checkpoint;
  c.epochs = 2;
  const auto start = std::chrono::steady_clock::now();
  const auto second = train::train_language_model(c, toy());
  const double second_sitting =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(second.json["wall_s"].get<double>() >= first_sitting);
  BOOST_TEST(second.json["wall_s"].get<double>() <=
             first.json["wall_s"].get<double>() + second_sitting);
  BOOST_TEST(second.json["epochs"].back()["elapsed_s"].get<double>() >= first_sitting);
  BOOST_TEST(second.json["cpu_s"].get<double>() >= 0.01 * steps);
}

BOOST_AUTO_TEST_CASE(pretrained_modes_and_config_errors) {
  const testing::TempFolder folder;
  const std::string vectors = folder.file("vec.txt");
  Generator gen(2);
  std::vector<std::string> words;
  for (size_t i = 1; i < toy().vocab.size(); i += 2)
    words.push_back(toy().vocab.word(static_cast<int32_t>(i)));
  text::save_vectors(vectors, words, randn({words.size(), 16}, gen), text::VectorFormat::text);
  train::TrainConfig c = tiny("gpt");
  c.model.embedding = "frozen-pretrained";
  c.model.vectors = vectors;
  const auto r = train::train_language_model(c, toy());
  BOOST_TEST(r.json["pretrained"]["found"].get<size_t>() == words.size());
  BOOST_TEST(r.json["trainable_params"].get<size_t>() ==
             r.json["total_params"].get<size_t>() - toy().vocab.size() * 16);
  c.model.d_model = 32;
  BOOST_CHECK_THROW(train::train_language_model(c, toy()),
                    std::invalid_argument);  // dimension mismatch
  c = tiny("gpt");
  c.model.embedding = "finetune-pretrained";
  BOOST_CHECK_THROW(c.validate(), std::invalid_argument);  // no vectors
  c = tiny("gpt");
  c.model.context = 5000;
  BOOST_CHECK_THROW(train::train_language_model(c, toy()),
                    std::invalid_argument);  // corpus shorter than a window
}

// The field table reads what it writes, and refuses what it does not know.
BOOST_AUTO_TEST_CASE(config_round_trips_and_refuses_unknown_keys) {
  train::TrainConfig c = tiny("gpt");
  c.lr = 2.5e-4f;
  c.model.tied = true;
  c.table_decay = optim::TableDecay::none;
  c.model.options["hidden"] = "64";
  c.data.corpus_file = "some/corpus.txt";
  const nlohmann::json j = c.to_json();
  BOOST_TEST(train::TrainConfig::from_json(j).to_json() == j);
  BOOST_TEST(train::TrainConfig::from_json(nlohmann::json::object()).to_json() ==
             train::TrainConfig().to_json());  // a key not given keeps its default
  nlohmann::json unknown = j;
  unknown["learning_rate"] = 0.1;
  BOOST_CHECK_EXCEPTION(train::TrainConfig::from_json(unknown), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()) ==
                                 "unknown configuration key 'learning_rate'";
                        });
  nlohmann::json wrong = j;
  wrong["lr"] = "fast";
  BOOST_CHECK_EXCEPTION(train::TrainConfig::from_json(wrong), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()) ==
                                 "configuration key 'lr' is \"fast\", not a number";
                        });
  // A part's name need not be registered where a run file is read (a user's optimizer or kind of
  // table, read by the report), but it must be a name; running it needs it registered.
  wrong = j;
  wrong["optimizer"] = "adagrad";
  BOOST_CHECK_THROW(train::TrainConfig::from_json(wrong).validate(), std::invalid_argument);
  for (const char* key : {"optimizer", "embedding"}) {
    wrong = j;
    wrong[key] = "x' ; system 'touch /tmp/x";
    BOOST_CHECK_EXCEPTION(train::TrainConfig::from_json(wrong), std::invalid_argument,
                          [key](const std::invalid_argument& e) {
                            return std::string(e.what()).find(std::string("configuration key '") +
                                                              key + "': 'x' ; system") !=
                                   std::string::npos;
                          });
  }
  // The resume check's keys come from the same table.
  const auto must = train::resume_keys();
  BOOST_TEST((std::ranges::find(must, std::string_view("d_model")) != must.end()));
  BOOST_TEST((std::ranges::find(must, std::string_view("lr")) == must.end()));
}

BOOST_AUTO_TEST_CASE(config_differences_name_each_differing_setting) {
  train::TrainConfig a = tiny("gpt"), b = a;
  BOOST_TEST(train::config_differences(a.to_json(), b.to_json(), "there", "here").empty());
  b.lr = 2 * a.lr;
  b.batch = a.batch + 1;
  const std::string all = train::config_differences(a.to_json(), b.to_json(), "there", "here");
  BOOST_TEST(all.find("\n  batch: " + std::to_string(a.batch) + " there, " +
                      std::to_string(b.batch) + " here") != std::string::npos);
  BOOST_TEST(all.find("\n  lr: ") != std::string::npos);
  BOOST_TEST(std::count(all.begin(), all.end(), '\n') == 2);
  // Only the keys asked for.
  const char* batch_only[] = {"batch"};
  BOOST_TEST(train::config_differences(a.to_json(), b.to_json(), "x", "y", batch_only) ==
             "\n  batch: " + std::to_string(a.batch) + " x, " + std::to_string(b.batch) + " y");
  // A key one side lacks reads as its default (it was added after that file was written)...
  nlohmann::json old = a.to_json();
  old.erase("batch");
  BOOST_REQUIRE(a.batch != train::TrainConfig().batch);
  BOOST_TEST(train::config_differences(old, a.to_json(), "x", "y", batch_only) ==
             "\n  batch: " + std::to_string(train::TrainConfig().batch) + " x, " +
                 std::to_string(a.batch) + " y");
  // ... or "none" where it has no default (model options are recorded when there are some).
  train::TrainConfig with_options = a;
  with_options.model.options["hidden"] = "64";
  const char* options_only[] = {"model_options"};
  BOOST_TEST(
      train::config_differences(a.to_json(), with_options.to_json(), "x", "y", options_only) ==
      "\n  model_options: none x, {\"hidden\":\"64\"} y");
  // A key added later reads as the setting runs had before it existed.
  nlohmann::json before = a.to_json();
  before.erase("table_decay");
  BOOST_TEST(train::config_differences(before, a.to_json(), "x", "y").empty());
  b = a;
  b.table_decay = optim::TableDecay::none;
  BOOST_TEST(train::config_differences(before, b.to_json(), "x", "y") ==
             "\n  table_decay: \"output\" x, \"none\" y");
  // A path of invalid UTF-8 is shown, not thrown as a JSON error.
  nlohmann::json bad = a.to_json();
  bad["vectors"] = "v_\xfe";
  BOOST_TEST(!train::config_differences(a.to_json(), bad, "x", "y").empty());
}

BOOST_AUTO_TEST_CASE(early_stopping_keeps_the_best_epoch) {
  train::TrainConfig c = tiny("nplm");
  c.epochs = 30;
  c.patience = 1;
  c.lr = 3e-2f;
  c.model.dropout = 0.0f;
  const auto r = train::train_language_model(c, toy());
  BOOST_TEST(r.json["stopped_early"].get<bool>());
  double best = INFINITY;
  for (const auto& e : r.json["epochs"]) best = std::min(best, e["valid_loss"].get<double>());
  BOOST_TEST(r.valid_ppl == std::exp(best), boost::test_tools::tolerance(1e-9));
}

// A stop signal in a run's final stretch (its final evaluation) is recorded and says it will
// finish first; a second one ends the process at once. Outside that stretch a repeated SIGTERM
// is absorbed (launchers send it twice), as before.
BOOST_AUTO_TEST_CASE(a_second_signal_in_the_final_evaluation_stops_at_once) {
  const auto child_status = [](bool final_stretch) {
    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child == 0) {
      const train::StopSignalScope scope;
      std::optional<train::FinalStretch> stretch;
      if (final_stretch) stretch.emplace("final stretch: finishing first\n");
      ::raise(SIGTERM);
      ::raise(SIGTERM);
      train::clear_stop_signal();
      ::_exit(train::pending_stop_signal() == 0 ? 7 : 8);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return status;
  };
  const int in_stretch = child_status(true);
  BOOST_TEST(WIFSIGNALED(in_stretch));
  BOOST_TEST((WIFSIGNALED(in_stretch) && WTERMSIG(in_stretch) == SIGTERM));
  const int outside = child_status(false);
  BOOST_TEST(WIFEXITED(outside));
  BOOST_TEST((WIFEXITED(outside) && WEXITSTATUS(outside) == 7));
}

// Every run file names where it comes from: the commit (and whether the tree was dirty), the
// build type, the command line the program recorded at start, the machine's CPU and the
// libraries' builds.
BOOST_AUTO_TEST_CASE(a_run_names_its_commit_and_command_line) {
  std::string words[] = {"train_lm", "--d-model", "16", "--results", "a file.json"};
  char* argv[] = {words[0].data(), words[1].data(), words[2].data(),
                  words[3].data(), words[4].data(), nullptr};
  base::record_command_line(argv);
  const train::RunResult r = train::train_language_model(tiny("gpt"), toy());
  base::record_command_line(nullptr);
  const nlohmann::json& p = r.json.at("provenance");
  BOOST_TEST(p.at("command") ==
             nlohmann::json({"train_lm", "--d-model", "16", "--results", "a file.json"}));
  const std::string commit = p.at("commit");
  BOOST_TEST(commit + (p.at("dirty").get<bool>() ? "-dirty" : "") == std::string(base::commit()));
  BOOST_TEST(p.at("build_type").get<std::string>() == base::build_type());
  BOOST_TEST(p.at("openblas").get<std::string>().starts_with("OpenBLAS "));
  BOOST_TEST(p.at("onednn").get<std::string>().find('.') != std::string::npos);
  BOOST_TEST(p.at("cpu").get<std::string>() == base::cpu_model());
  BOOST_TEST(base::command_line().empty());  // recording nothing forgets the earlier line
}

// A model registered by name trains through the same Trainer, and its name reaches the
// results; an unknown name is refused naming the registered ones.
BOOST_AUTO_TEST_CASE(registered_models_train_by_name) {
  size_t built = 0;
  train::register_model("test-gpt-wide-norm", [&built](const train::ModelSpec& spec) {
    ++built;
    nn::GPTConfig g = train::gpt_config(spec);
    g.parts.norm = [](const nn::BlockContext& ctx) {
      return std::make_shared<nn::LayerNorm>(ctx.d_model, 1e-2f);
    };
    return std::make_unique<nn::GPT>(g, spec.pretrained);
  });
  BOOST_TEST(train::has_model("test-gpt-wide-norm"));
  // A name the results files and REPORT.md repeat is a plain name (docs/errors.md).
  const auto factory = [](const train::ModelSpec&) -> std::unique_ptr<nn::LanguageModel> {
    return nullptr;
  };
  for (const char* bad : {"", "my gpt", "gpt,2", "gpt'x", "-gpt", "gpt|x", "gpt\n"})
    BOOST_CHECK_THROW(train::register_model(bad, factory), std::invalid_argument);
  BOOST_TEST(!train::has_model("my gpt"));
  // --model-option MODEL:KEY=VALUE reaches that model alone, KEY=VALUE every model.
  const std::map<std::string, std::string> options = {{"a", "1"}, {"m:b", "2"}, {"n:c", "3"}};
  BOOST_TEST((train::options_for(options, "m") ==
              std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
  BOOST_TEST(
      (train::options_for(options, "gpt") == std::map<std::string, std::string>{{"a", "1"}}));
  BOOST_CHECK_NO_THROW(train::check_model_options({{"m:b", "2"}}, {"gpt", "m"}));
  BOOST_CHECK_THROW(train::check_model_options({{"m:b", "2"}}, {"gpt"}), std::invalid_argument);
  BOOST_CHECK_THROW(train::check_model_options({{"b", "2"}}, {"gpt", "m"}), std::invalid_argument);
  train::TrainConfig c = tiny("test-gpt-wide-norm");
  const auto r = train::train_language_model(c, toy());
  BOOST_TEST(built == 1u);
  BOOST_TEST(r.json["config"]["model"].get<std::string>() == "test-gpt-wide-norm");
  BOOST_TEST(std::isfinite(r.test_ppl));
  const auto l = losses(r.json);
  BOOST_TEST(l.back() < l.front());
  c.model.name = "no-such-model";
  try {
    c.validate();
    BOOST_FAIL("an unknown model was accepted");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("registered: gpt, nplm, lstm, gru, test-gpt-wide-norm") !=
                   std::string::npos,
               e.what());
  }
}

// A model's registry entry carries what is known about it before it is built: a user's memory
// estimate refuses a size that cannot fit before its factory allocates anything.
BOOST_AUTO_TEST_CASE(a_registered_models_memory_estimate_refuses_before_building) {
  size_t built = 0;
  train::register_model(
      "test-huge",
      train::ModelEntry{
          .make =
              [&built](const train::ModelSpec& spec) {
                ++built;
                return std::make_unique<nn::GPT>(train::gpt_config(spec), spec.pretrained);
              },
          .memory = [](const train::TrainConfig&, size_t vocab) -> train::MemoryEstimate {
            return {1e18 * static_cast<double>(vocab), 0};
          }});
  train::TrainConfig c = tiny("test-huge");
  BOOST_TEST(train::training_memory(c, 10).total() == 1e19);
  BOOST_CHECK_EXCEPTION(train::train_language_model(c, toy()), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()).starts_with("training would need at least");
                        });
  BOOST_TEST(built == 0u);
  // The built-in entries: the recurrent models tie through their hidden width and do not read
  // the GPT's attention flags; a model registered with a factory alone has no estimate.
  BOOST_TEST(train::model_entry("lstm").ties_through_hidden);
  BOOST_TEST((train::model_entry("gru").unread_flags ==
              std::vector<std::string>{"--heads", "--positions"}));
  BOOST_TEST(!train::model_entry("gpt").ties_through_hidden);
  BOOST_TEST(train::training_memory(tiny("gpt"), 10).total() > 0);
  train::register_model("test-factory-only", [](const train::ModelSpec& spec) {
    return std::make_unique<nn::GPT>(train::gpt_config(spec), spec.pretrained);
  });
  BOOST_TEST(train::training_memory(tiny("test-factory-only"), 10).total() == 0);
}

using testing::g_passed_on;
using testing::RecordedSigterm;

// A SIGTERM is caught only while a training loop can act on it, and never lost: one that
// arrives after the loop's last check reaches the handler that was in place before.
BOOST_AUTO_TEST_CASE(stop_signals_are_caught_only_inside_a_scope_and_never_lost) {
  const RecordedSigterm recorded;
  {
    const train::StopSignalScope outer;
    {
      const train::StopSignalScope inner;  // nested: installs nothing, restores nothing
      ::raise(SIGTERM);
      BOOST_TEST(train::pending_stop_signal() == SIGTERM);
    }
    BOOST_TEST(train::pending_stop_signal() == SIGTERM);
    BOOST_TEST(g_passed_on.load() == 0);
  }
  BOOST_TEST(g_passed_on.load() == SIGTERM);  // unhandled at the end: raised again
  BOOST_TEST(train::pending_stop_signal() == 0);
  g_passed_on = 0;
  {
    const train::StopSignalScope scope;
    ::raise(SIGTERM);
    train::clear_stop_signal();  // the loop handled it
  }
  BOOST_TEST(g_passed_on.load() == 0);
  ::raise(SIGTERM);  // outside a scope: straight to the handler in place
  BOOST_TEST(g_passed_on.load() == SIGTERM);
  g_passed_on = 0;
  // An error that ends the loop while a signal is pending is reported first: the signal is
  // not raised during the unwinding (by default it would end the process before the error is
  // printed), and stays pending for the next loop.
  try {
    const train::StopSignalScope scope;
    ::raise(SIGTERM);
    throw std::runtime_error("diverged");
  } catch (const std::runtime_error&) {
    BOOST_TEST(g_passed_on.load() == 0);
    BOOST_TEST(train::pending_stop_signal() == SIGTERM);
  }
  train::clear_stop_signal();
}

// A signal during training stops the Trainer after the step, with the checkpoint and partial
// results written, whatever handler the program had before.
BOOST_AUTO_TEST_CASE(a_signal_during_training_stops_after_the_step_with_everything_saved) {
  const testing::TempFolder folder;
  const RecordedSigterm recorded;
  train::TrainConfig c = tiny("gpt");
  c.epochs = 5;
  c.checkpoint = folder.file("signal.ckpt");
  c.results = folder.file("signal.json");
  train::TrainHooks hooks;
  hooks.after_epoch = [](size_t epoch, nn::LanguageModel&, nlohmann::json&) {
    if (epoch == 0) ::raise(SIGTERM);  // after the first epoch (epochs count from 0)
  };
  train::Trainer trainer(c, toy(), hooks);
  int stopped_by = 0;
  try {
    trainer.run();
  } catch (const train::Interrupted& e) {
    stopped_by = e.signal;
  }
  BOOST_TEST(stopped_by == SIGTERM);
  BOOST_TEST(g_passed_on.load() == 0);  // handled by the Trainer, not passed on
  std::ifstream in(c.results);
  const auto results = nlohmann::json::parse(in);
  BOOST_TEST(results["interrupted"] == "SIGTERM");
  BOOST_TEST(results["epochs"].size() == 1u);  // stopped after the first step of epoch 2
  BOOST_TEST(fs::exists(c.checkpoint));
}

// A signal during the final evaluation (here from after_training, which runs inside it) lets
// the evaluation finish: the results are complete, and the run stops saying so instead of
// dying silently when the signal is raised again after the loop.
BOOST_AUTO_TEST_CASE(a_signal_during_the_final_evaluation_ends_a_complete_run_with_a_message) {
  const testing::TempFolder folder;
  const RecordedSigterm recorded;
  train::TrainConfig c = tiny("gpt");
  c.checkpoint = folder.file("final.ckpt");
  c.results = folder.file("final.json");
  train::TrainHooks hooks;
  hooks.after_training = [](nn::LanguageModel&, nlohmann::json&) { ::raise(SIGTERM); };
  std::string message;
  try {
    train::Trainer(c, toy(), hooks).run();
  } catch (const train::Interrupted& e) {
    BOOST_TEST(e.signal == SIGTERM);
    message = e.what();
  }
  BOOST_TEST(message.find("SIGTERM during the final evaluation, which finished: the run is "
                          "complete; results in " +
                          c.results) == 0u,
             message);
  BOOST_TEST(g_passed_on.load() == 0);
  std::ifstream in(c.results);
  const auto results = nlohmann::json::parse(in);
  BOOST_TEST(!results.contains("interrupted"));
  BOOST_TEST(results.at("test_ppl").get<double>() > 1);
}

// A user's hooks keep their own state across an interruption: it rides in the checkpoint, so
// the resumed run's final analysis (after_training) sees every step, as an uninterrupted one.
BOOST_AUTO_TEST_CASE(hook_state_survives_a_stop_and_resume) {
  const testing::TempFolder folder;
  const RecordedSigterm recorded;
  train::TrainConfig c = tiny("nplm");
  c.epochs = 3;
  c.checkpoint = folder.file("hooks.ckpt");
  struct Counting {
    long steps = 0;
    long stop_at = -1;  // raise SIGTERM after this step
    train::TrainHooks hooks() {
      train::TrainHooks h;
      h.after_backward = [this](long step, nn::LanguageModel&) {
        ++steps;
        if (step == stop_at) ::raise(SIGTERM);
      };
      h.after_training = [this](nn::LanguageModel&, nlohmann::json& results) {
        results["steps_seen"] = steps;
      };
      h.save_state = [this] { return nlohmann::json{{"steps", steps}}; };
      h.load_state = [this](const nlohmann::json& j) { steps = j.at("steps").get<long>(); };
      return h;
    }
  };
  Counting whole;
  const auto uninterrupted = train::Trainer(c, toy(), whole.hooks()).run();
  Counting first;
  first.stop_at = 7;
  BOOST_CHECK_THROW(train::Trainer(c, toy(), first.hooks()).run(), train::Interrupted);
  Counting second;  // a new process: counts from the checkpoint's state
  c.resume = c.checkpoint;
  const auto resumed = train::Trainer(c, toy(), second.hooks()).run();
  BOOST_TEST(uninterrupted.json["steps_seen"].get<long>() ==
             uninterrupted.json["steps"].get<long>());
  BOOST_TEST(resumed.json["steps_seen"] == uninterrupted.json["steps_seen"]);
  BOOST_TEST(resumed.test_ppl == uninterrupted.test_ppl);
  // Hooks that need a state refuse a checkpoint saved without one.
  c.resume.clear();
  c.epochs = 1;
  train::Trainer(c, toy()).run();  // no hooks: the last checkpoint has no hook state
  c.resume = c.checkpoint;
  c.epochs = 3;
  Counting third;
  BOOST_CHECK_EXCEPTION(
      train::Trainer(c, toy(), third.hooks()), std::runtime_error, [](const std::runtime_error& e) {
        return std::string(e.what()).find("no state for this run's hooks") != std::string::npos;
      });
  // And a checkpoint holding hook state is refused by a run without those hooks.
  c.resume.clear();
  c.epochs = 1;
  Counting fourth;
  train::Trainer(c, toy(), fourth.hooks()).run();
  c.resume = c.checkpoint;
  c.epochs = 3;
  BOOST_CHECK_EXCEPTION(
      train::Trainer(c, toy()), std::runtime_error, [](const std::runtime_error& e) {
        return std::string(e.what()).find("holds state of training hooks") != std::string::npos;
      });
}

namespace {
// A small optimizer of a user's: sign descent with momentum (Lion's update with beta1 = beta2),
// with one kind of state and one option.
class SignMomentum : public optim::Optimizer {
 public:
  SignMomentum(std::vector<optim::ParamGroup> groups, float lr, float beta)
      : Optimizer(std::move(groups), lr), beta_(beta) {}
  void step() override {
    NoGrad no_grad;
    ++steps_;
    for (auto& group : groups_)
      for (auto& p : group.params) {
        if (!p.tensor.has_grad()) continue;
        const Array g = p.tensor.dense_grad();
        float* m = slot("velocity", p).data();
        float* w = p.tensor.data();
        for (size_t i = 0; i < p.tensor.numel(); ++i) {
          m[i] = beta_ * m[i] + (1 - beta_) * g.data()[i];
          w[i] -= lr_ * (m[i] > 0 ? 1.0f : m[i] < 0 ? -1.0f : 0.0f);
        }
      }
  }
  const char* name() const override { return "test-sign"; }
  std::vector<std::string> state_kinds() const override { return {"velocity"}; }

 private:
  float beta_;
};
}  // namespace

// A user's optimizer, by name: trained, checkpointed, resumed to the uninterrupted run's
// numbers; its options checked; another optimizer's checkpoint, or state of a kind it does not
// keep, refused.
BOOST_AUTO_TEST_CASE(registered_optimizers_train_checkpoint_and_resume_by_name) {
  const testing::TempFolder folder;
  train::register_optimizer(
      "test-sign",
      [](const train::OptimizerSpec& s) {
        return std::make_unique<SignMomentum>(train::decay_groups(s), s.config.lr,
                                              train::optimizer_option(s, "beta", 0.9f));
      },
      "sign descent with momentum");
  BOOST_TEST(train::has_optimizer("test-sign"));
  BOOST_TEST(train::optimizer_help().find("test-sign (sign descent with momentum)") !=
             std::string::npos);
  train::TrainConfig c = tiny("gpt");
  c.optimizer = "test-sign";
  c.lr = 3e-4f;
  c.optimizer_options = {{"beta", "0.8"}};
  const auto whole = train::train_language_model(c, toy());
  BOOST_TEST(whole.json["config"]["optimizer"].get<std::string>() == "test-sign");
  BOOST_TEST(whole.json["config"]["optimizer_options"]["beta"].get<std::string>() == "0.8");
  const auto l = losses(whole.json);
  BOOST_TEST(l.back() < l.front());
  // Another beta gives another run: the option reaches the optimizer.
  train::TrainConfig other_beta = c;
  other_beta.optimizer_options = {{"beta", "0.5"}};
  BOOST_TEST(train::train_language_model(other_beta, toy()).test_ppl != whole.test_ppl);

  train::TrainConfig killed = c;
  killed.checkpoint = folder.file("sign.ckpt");
  killed.checkpoint_every = 5;
  train::TrainHooks crash_at_5;
  crash_at_5.after_backward = [](long step, nn::LanguageModel&) {
    if (step == 5) throw std::runtime_error("simulated crash");
  };
  BOOST_CHECK_THROW(train::train_language_model(killed, toy(), crash_at_5), std::runtime_error);
  const TensorFile saved = load_safetensors(killed.checkpoint);
  BOOST_TEST(std::ranges::any_of(
      saved.tensors, [](const auto& kv) { return kv.first.rfind("optim.velocity.", 0) == 0; }));
  train::TrainConfig resumed = c;
  resumed.resume = killed.checkpoint;
  const auto rest = train::train_language_model(resumed, toy());
  BOOST_TEST(losses(rest.json) == losses(whole.json), boost::test_tools::per_element());
  BOOST_TEST(rest.test_ppl == whole.test_ppl);

  const auto refused = [](train::TrainConfig config, const std::string& message) {
    try {
      train::train_language_model(config, toy());
      BOOST_ERROR("accepted; wanted: " << message);
    } catch (const std::exception& e) {
      BOOST_TEST(std::string(e.what()).find(message) != std::string::npos, e.what());
    }
  };
  // A misspelt option, an option to a built-in optimizer, an unknown optimizer.
  train::TrainConfig misspelt = c;
  misspelt.optimizer_options = {{"betta", "0.8"}};
  refused(misspelt, "test-sign has no option 'betta' (it reads beta)");
  train::TrainConfig built_in = c;
  built_in.optimizer = "adamw";
  refused(built_in, "the built-in optimizer 'adamw' takes no options");
  train::TrainConfig unknown = c;
  unknown.optimizer = "lion2";
  unknown.optimizer_options.clear();
  refused(unknown, "unknown optimizer 'lion2' (registered: adamw, adam, sgd, lazy-adam");
  // Resuming this checkpoint under adamw: the configuration says which optimizer saved it.
  train::TrainConfig as_adamw = resumed;
  as_adamw.optimizer = "adamw";
  as_adamw.optimizer_options.clear();
  refused(as_adamw, "optimizer");
  // State of a kind test-sign does not keep (in a checkpoint of the first format, whose tensors
  // carry no checksums): refused, named.
  TensorFile tampered = saved;
  tampered.metadata["format"] = "tapegrad-checkpoint-1";
  tampered.metadata.erase("checksums");
  const auto velocity = std::ranges::find_if(
      tampered.tensors, [](const auto& kv) { return kv.first.rfind("optim.velocity.", 0) == 0; });
  const std::string param = velocity->first.substr(std::string("optim.velocity.").size());
  tampered.tensors["optim.exp_avg_sq." + param] = velocity->second;
  const std::string tampered_path = folder.file("tampered.ckpt");
  save_safetensors(tampered_path, tampered);
  train::TrainConfig from_tampered = c;
  from_tampered.resume = tampered_path;
  refused(from_tampered,
          "is state 'exp_avg_sq', which test-sign does not keep (it keeps velocity)");
}

BOOST_AUTO_TEST_SUITE_END()
