// build/bin/bench_train: times training steps of a GPT or NPLM on Brown batches (forward,
// cross-entropy, backward, clipping, AdamW), and optionally dumps its initial parameters and
// batches so that benchmarks/torch_train.py can run the identical computation in PyTorch.
// Prints one JSON object: per-step seconds and losses, the median step time and tokens/s.
// Under mpirun each rank takes its rows of every batch (data parallelism, as train_lm does) and
// the JSON also gives the share of step time spent blocked in gradient communication.
#include <cblas.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>

#include "apps/cli.hpp"
#include "apps/flags.hpp"
#include "apps/startup.hpp"
#include "apps/validators.hpp"
#include "autograd/blas.hpp"
#include "autograd/precision.hpp"
#include "nn/gpt.hpp"
#include "optim/optimizer.hpp"
#include "train/signals.hpp"
#include "train/trainer.hpp"

using namespace tg;

namespace {

// Model FLOPs per trained token (PaLM's accounting, Chowdhery et al. 2022, appendix B): 6 per
// weight of every matrix product (2 forward, 4 backward), the output projection included and
// the lookup tables not (a tied table is the output projection, so it counts once), plus a
// GPT's attention products, 6 x 2 x layers x context x d_model (scores and their weighted sum,
// counted over the whole context as PaLM does, not the causal half). docs/performance.md.
double model_flops_per_token(const nn::LanguageModel& model, const train::TrainConfig& c) {
  double weights = 0;
  for (const auto& p : model.parameters_with_roles())
    if (p.tensor.dim() >= 2 && p.role != nn::ParamRole::embedding)
      weights += static_cast<double>(p.tensor.numel());
  if (model.tied()) weights += static_cast<double>(model.output_matrix().numel());
  double attention = 0;
  if (dynamic_cast<const nn::GPT*>(&model))
    attention = 12.0 * static_cast<double>(c.model.layers * c.model.context * c.model.d_model);
  return 6.0 * weights + attention;
}

// The machine's product rate at the run's thread count: the median of 3 timed 2048^3 products
// (after one untimed) through OpenBLAS's sgemm (fp32), or oneDNN's bf16 matmul on operands
// rounded beforehand (bf16): the ceiling a model's products could reach here.
double reference_gemm_tflops(Precision precision) {
  constexpr size_t n = 2048;
  std::vector<float> a(n * n), b(n * n), out(n * n);
  Generator gen(7);
  for (float& x : a) x = gen.normal();
  for (float& x : b) x = gen.normal();
  const PrecisionScope scope(precision);
  std::vector<uint16_t> a16, b16;
  const detail::Operand pa = detail::pack_operand(a.data(), n, n, n, a16);
  const detail::Operand pb = detail::pack_operand(b.data(), n, n, n, b16);
  std::vector<double> seconds;
  for (int run = 0; run < 4; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    detail::gemm(false, false, n, n, n, 1.0f, pa, pb, 0.0f, out.data(), n);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (run > 0) seconds.push_back(s);
  }
  std::sort(seconds.begin(), seconds.end());
  return 2.0 * n * n * n / seconds[1] / 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  apps::start_program(argv);
  CLI::App app{"bench_train: training-step throughput on Brown"};
  apps::add_version_flag(app);
  train::TrainConfig c;
  c.model.dropout = 0.0f;  // both sides deterministic and comparable
  size_t steps = 20, warmup_steps = 3;
  std::string dump;
  app.add_option("--model", c.model.name)->capture_default_str();
  for (auto [flag, value] : {std::pair{"--d-model", &c.model.d_model},
                             {"--layers", &c.model.layers},
                             {"--heads", &c.model.heads},
                             {"--context", &c.model.context},
                             {"--ngram", &c.model.ngram},
                             {"--hidden", &c.model.hidden},
                             {"--batch", &c.batch},
                             {"--threads", &c.threads}})
    app.add_option(flag, *value)->capture_default_str()->check(apps::positive());
  app.add_flag("--tied", c.model.tied);
  apps::add_enum_option(app, "--precision", c.precision, kPrecisionNames,
                        "matrix products; auto: bf16 where the CPU has it");
  app.add_option("--lr", c.lr)->capture_default_str()->check(apps::positive(false));
  app.add_option("--steps", steps, "timed steps")
      ->capture_default_str()
      ->check(apps::number_in(1, 1e9, false, true));
  app.add_option("--warmup-steps", warmup_steps, "untimed steps first")
      ->capture_default_str()
      ->check(apps::number_in(0, 1e9, false, true));
  app.add_flag("--no-comm-overlap{false}", c.comm_overlap, "MPI: reduce gradients after backward");
  app.add_option("--bucket-mb", c.bucket_mb, "MPI: gradient bucket size in MiB")
      ->capture_default_str()
      ->check(apps::positive(false));
  apps::add_data_flags(app, c.data);
  app.add_option("--dump", dump, "write initial parameters and the batches here (safetensors)");
  CLI11_PARSE(app, argc, argv);
  return apps::guarded_main("bench_train", [&] {
    set_num_threads(static_cast<int>(c.threads));
    c.precision = resolve_precision(c.precision);  // bf16 without native bf16: refused here
    set_precision(c.precision);
    const text::LMData data = train::load_data(c.data);
    auto model = train::build_model(c, data);
    const size_t t = c.model.context, w = model->warmup(), total = warmup_steps + steps;
    // Random windows of the training split, the same for every run with this seed: drawn
    // step by step (memory independent of --steps), or all first when they are dumped.
    Generator gen(c.seed);
    const auto draw_batch = [&] {
      std::vector<int32_t> in(c.batch * (w + t)), tg(c.batch * t);
      for (size_t r = 0; r < c.batch; ++r) {
        const size_t start = data.train.begin + gen.below(data.train.size() - (w + t + 1));
        std::copy_n(data.stream.begin() + static_cast<long>(start), w + t,
                    in.begin() + static_cast<long>(r * (w + t)));
        std::copy_n(data.stream.begin() + static_cast<long>(start + w + 1), t,
                    tg.begin() + static_cast<long>(r * t));
      }
      return std::pair{Ids(Shape{c.batch, w + t}, std::move(in)),
                       Ids(Shape{c.batch, t}, std::move(tg))};
    };
    std::vector<std::pair<Ids, Ids>> dumped;
    if (!dump.empty()) {
      TensorFile f;
      for (const auto& [name, p] : model->named_parameters()) f.tensors["param/" + name] = p;
      for (size_t s = 0; s < total; ++s) {
        dumped.push_back(draw_batch());
        f.ids["inputs/" + std::to_string(s)] = dumped.back().first;
        f.ids["targets/" + std::to_string(s)] = dumped.back().second;
      }
      f.metadata["config"] = c.to_json().dump();
      save_safetensors(dump, f);
    }
    optim::Adam opt(optim::decay_groups(*model, c.weight_decay), {.lr = c.lr}, true);
    const std::unique_ptr<distributed::GradientSync> sync = train::make_gradient_sync(c, *model);
    std::vector<double> seconds, losses;
    double timed_comm = 0.0, timed_stop_check = 0.0, timed_clip = 0.0, timed_optimizer = 0.0;
    auto& gemm = detail::gemm_counter;
    // As in Trainer::run: a signal stops the loop after its step, agreed over the ranks (one
    // tiny allreduce per step under mpirun, timed on its own).
    const train::StopSignalScope stop_on_signal;
    std::fprintf(stderr, "bench_train: timing %zu steps after %zu untimed\n", steps, warmup_steps);
    for (size_t s = 0; s < total; ++s) {
      gemm.on = s >= warmup_steps;  // the products of the timed steps
      const auto [inputs, targets] = dump.empty() ? draw_batch() : dumped[s];
      const auto t0 = std::chrono::steady_clock::now();
      const double comm0 = sync ? sync->stats().comm_seconds : 0.0;
      opt.zero_grad();
      losses.push_back(train::forward_backward(*model, inputs, targets, sync.get()));
      const auto clip0 = std::chrono::steady_clock::now();
      optim::clip_grad_norm(model->trainable_parameters(), 1.0f);
      const auto step0 = std::chrono::steady_clock::now();
      opt.step();
      const auto t1 = std::chrono::steady_clock::now();
      if (const int signal = train::agreed_stop_signal()) {
        train::clear_stop_signal();
        throw train::Interrupted(signal, train::signal_name(signal) + ": stopped after step " +
                                             std::to_string(s + 1) + " of " +
                                             std::to_string(total) + "; nothing measured");
      }
      const auto t2 = std::chrono::steady_clock::now();
      if (s >= warmup_steps) {
        seconds.push_back(std::chrono::duration<double>(t2 - t0).count());
        timed_comm += sync ? sync->stats().comm_seconds - comm0 : 0.0;
        timed_stop_check += std::chrono::duration<double>(t2 - t1).count();
        timed_clip += std::chrono::duration<double>(step0 - clip0).count();
        timed_optimizer += std::chrono::duration<double>(t1 - step0).count();
      }
    }
    gemm.on = false;  // the products of the timed steps only, not the reference product below
    const double timed_total = std::accumulate(seconds.begin(), seconds.end(), 0.0);
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    // Model FLOPs utilisation: the model's FLOPs at the measured rate over the machine's
    // product rate, measured here, now, at the same threads (fp32 always; bf16 where it runs).
    const double tokens_per_s = static_cast<double>(c.batch * t) / median;
    const double flops_per_token = model_flops_per_token(*model, c);
    const double model_tflops = flops_per_token * tokens_per_s / 1e12;
    nlohmann::json peak = {{"shape", "2048^3"},
                           {"fp32_tflops", reference_gemm_tflops(Precision::fp32)}};
    if (c.precision == Precision::bf16)
      peak["bf16_tflops"] = reference_gemm_tflops(Precision::bf16);
    const double run_peak = c.precision == Precision::bf16 ? peak["bf16_tflops"].get<double>()
                                                           : peak["fp32_tflops"].get<double>();
    const nlohmann::json out = {
        {"side", "tapegrad"},
        {"config", c.to_json()},
        {"vocab", data.vocab.size()},
        {"params", model->num_parameters()},
        {"tokens_per_step", c.batch * t},
        {"step_seconds", seconds},
        {"losses", losses},
        {"median_step_s", median},
        {"tokens_per_s", tokens_per_s},
        {"model_flops_per_token", flops_per_token},
        {"model_tflops", model_tflops},
        // Under mpirun every rank measures at once, each its share of the machine; the
        // machine's rate is taken as rank 0's times the ranks.
        {"reference_gemm", peak},
        {"mfu", model_tflops / (run_peak * distributed::size())},
        {"ranks", distributed::size()},
        {"comm_overlap", c.comm_overlap},
        {"threading", threading_backend()},
        {"blas_kernel", blas_kernel()},
        {"comm_fraction", timed_comm / timed_total},
        // The per-step stop check (a 1-value allreduce under mpirun, a load otherwise),
        // including any wait for the slower rank that it absorbs.
        {"stop_check_fraction", timed_stop_check / timed_total},
        {"clip_fraction", timed_clip / timed_total},            // gradient clipping
        {"optimizer_fraction", timed_optimizer / timed_total},  // AdamW's step
        // sgemm over the timed steps, summed over calling threads (blas.hpp): the share of a
        // step at one thread, and sgemm's own FLOP/s on this model's shapes.
        {"gemm_seconds", static_cast<double>(gemm.nanoseconds) * 1e-9},
        {"gemm_flops", static_cast<double>(gemm.flops)},
        {"gemm_calls", gemm.calls.load()}};
    std::printf("%s\n", out.dump().c_str());
    return 0;
  });
}
