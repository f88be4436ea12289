// Micro-benchmarks (Google Benchmark). Each reports time per iteration; the sgemm ones also
// GFLOP/s, which is the machine's limit every end-to-end figure is compared with.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include "apps/startup.hpp"
#include "autograd/autograd.hpp"
#include "autograd/precision.hpp"
#include "nn/nn.hpp"
#include "optim/optimizer.hpp"

using namespace tg;

namespace {
void set_threads(benchmark::State& state, int index) {
  tg::set_num_threads(static_cast<int>(state.range(index)));
}
}  // namespace

// The limit: large square sgemm. Args: n, threads.
static void BM_sgemm_peak(benchmark::State& state) {
  set_threads(state, 1);
  const int n = static_cast<int>(state.range(0));
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * n * n * n * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_sgemm_peak)
    ->Args({2048, 1})
    ->Args({2048, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// linear forward+backward at model shapes: rows x in -> out. Args: rows, in, out, threads.
static void BM_linear_fwd_bwd(benchmark::State& state) {
  set_threads(state, 3);
  Generator gen(1);
  Tensor x = randn({static_cast<size_t>(state.range(0)), static_cast<size_t>(state.range(1))}, gen,
                   1.0f, true);
  Tensor w = randn({static_cast<size_t>(state.range(2)), static_cast<size_t>(state.range(1))}, gen,
                   0.02f, true);
  for (auto _ : state) {
    Tensor y = linear(x, w);
    backward(y, y);
    x.zero_grad(), w.zero_grad();
  }
  const double flops = 6.0 * static_cast<double>(state.range(0) * state.range(1) * state.range(2));
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_linear_fwd_bwd)
    ->Args({2048, 128, 384, 1})
    ->Args({2048, 128, 17905, 1})
    ->Args({2048, 128, 17905, 2})
    ->Args({2048, 256, 17905, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Causal self-attention forward+backward. Args: batch, time, d_model, heads.
static void BM_attention_fwd_bwd(benchmark::State& state) {
  tg::set_num_threads(1);
  Generator init(1);
  auto drop = std::make_shared<Generator>(2);
  nn::CausalSelfAttention attn(static_cast<size_t>(state.range(2)),
                               static_cast<size_t>(state.range(3)), 0.0f, drop, init);
  Tensor x = randn({static_cast<size_t>(state.range(0)), static_cast<size_t>(state.range(1)),
                    static_cast<size_t>(state.range(2))},
                   init, 1.0f, true);
  for (auto _ : state) {
    Tensor y = attn.forward(x);
    backward(y, y);
    attn.zero_grad(), x.zero_grad();
  }
}
BENCHMARK(BM_attention_fwd_bwd)
    ->Args({32, 64, 128, 4})
    ->Args({16, 128, 256, 4})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

static void BM_layer_norm_fwd_bwd(benchmark::State& state) {
  Generator gen(1);
  Tensor x = randn({2048, static_cast<size_t>(state.range(0))}, gen, 1.0f, true);
  Tensor w = Tensor::full({static_cast<size_t>(state.range(0))}, 1.0f, true),
         b = Tensor::zeros({static_cast<size_t>(state.range(0))}, true);
  for (auto _ : state) {
    Tensor y = layer_norm(x, w, b);
    backward(y, y);
    x.zero_grad(), w.zero_grad(), b.zero_grad();
  }
}
BENCHMARK(BM_layer_norm_fwd_bwd)->Arg(128)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Cross-entropy over a 17,905-word vocabulary: the fused op vs log_softmax + a one-hot product.
static void BM_cross_entropy(benchmark::State& state) {
  const bool fused = state.range(0) == 1;
  const size_t rows = 2048, vocab = 17905;
  Generator gen(1);
  Tensor logits = randn({rows, vocab}, gen, 1.0f, true);
  std::vector<int32_t> t(rows);
  for (auto& v : t) v = static_cast<int32_t>(gen.below(vocab));
  const Ids targets({rows}, t);
  Tensor onehot = Tensor::zeros({rows, vocab});
  for (size_t r = 0; r < rows; ++r)
    onehot.data()[r * vocab + static_cast<size_t>(t[r])] = -1.0f / rows;
  for (auto _ : state) {
    Tensor loss = fused ? cross_entropy(logits, targets) : sum(log_softmax(logits, -1) * onehot);
    backward(loss);
    logits.zero_grad();
  }
  state.SetLabel(fused ? "fused" : "log_softmax + one-hot");
}
BENCHMARK(BM_cross_entropy)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

// An output layer and its loss, forward+backward, rows of `width` over `vocab` tokens (no
// bias): linear_cross_entropy (chunked, no logits tensor), or linear then cross_entropy.
static void run_output_layer(benchmark::State& state, size_t rows, size_t width, size_t vocab,
                             bool fused) {
  Generator gen(1);
  Tensor x = randn({rows, width}, gen, 1.0f, true), w = randn({vocab, width}, gen, 0.02f, true);
  std::vector<int32_t> t(rows);
  for (auto& v : t) v = static_cast<int32_t>(gen.below(vocab));
  const Ids targets({rows}, t);
  for (auto _ : state) {
    Tensor loss = fused ? linear_cross_entropy(x, w, Tensor(), targets)
                        : cross_entropy(linear(x, w), targets);
    backward(loss);
    x.zero_grad(), w.zero_grad();
  }
  const double flops = 6.0 * static_cast<double>(rows * width * vocab);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

// 2,048 rows of width 128 over 17,905 words, fused or not. Args: fused, threads.
static void BM_output_layer(benchmark::State& state) {
  const bool fused = state.range(0) == 1;
  set_threads(state, 1);
  run_output_layer(state, 2048, 128, 17905, fused);
  state.SetLabel(fused ? "linear_cross_entropy" : "linear + cross_entropy");
}
BENCHMARK(BM_output_layer)
    ->Args({1, 1})
    ->Args({0, 1})
    ->Args({1, 2})
    ->Args({0, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// GPT-2 small's output layer, fused: 1,024 rows of width 768 over 50,257 tokens (tied: no
// bias). Args: precision (0 fp32, 1 bf16), threads. bf16 rows are skipped, with a message, on
// a CPU without native bf16.
static void BM_output_layer_gpt2(benchmark::State& state) {
  const Precision mode = state.range(0) == 1 ? Precision::bf16 : Precision::fp32;
  if (mode == Precision::bf16 && !cpu_has_native_bf16()) {
    state.SkipWithError("this CPU has no native bf16");
    return;
  }
  const PrecisionScope scope(mode);
  set_threads(state, 1);
  run_output_layer(state, 1024, 768, 50257, true);
  state.SetLabel(base::name_of(kPrecisionNames, mode));
}
BENCHMARK(BM_output_layer_gpt2)
    ->Args({0, 2})
    ->Args({1, 1})
    ->Args({1, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Embedding lookup + backward of a 17,905 x 128 table, sparse rows vs a dense scatter.
static void BM_embedding_fwd_bwd(benchmark::State& state) {
  const bool sparse = state.range(0) == 1;
  Generator gen(1);
  Tensor table = randn({17905, 128}, gen, 0.02f, true);
  std::vector<int32_t> ids(2048);
  for (auto& v : ids) v = static_cast<int32_t>(gen.below(17905));
  const Ids batch({32, 64}, ids);
  for (auto _ : state) {
    Tensor y = embedding(table, batch, sparse);
    backward(y, y);
    table.zero_grad();
  }
  state.SetLabel(sparse ? "sparse rows" : "dense");
}
BENCHMARK(BM_embedding_fwd_bwd)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One optimizer step on a 17,905 x 128 table whose gradient touches 2,048 ids.
static void BM_optimizer_step(benchmark::State& state) {
  const bool lazy = state.range(0) == 1;
  Generator gen(1);
  Tensor table = randn({17905, 128}, gen, 0.02f, true);
  std::vector<int32_t> ids(2048);
  for (auto& v : ids) v = static_cast<int32_t>(gen.below(17905));
  backward(sum(embedding(table, Ids({2048}, ids), true)));
  std::unique_ptr<optim::Optimizer> opt;
  std::vector<optim::ParamGroup> groups = {{{{"table", table}}, 0.0f}};
  if (lazy)
    opt = std::make_unique<optim::LazyAdam>(groups, optim::AdamOptions{});
  else
    opt = std::make_unique<optim::Adam>(groups, optim::AdamOptions{}, true);
  for (auto _ : state) opt->step();
  state.SetLabel(lazy ? "lazy Adam (touched rows)" : "AdamW (dense)");
}
BENCHMARK(BM_optimizer_step)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The tape's own cost: a chain of element-wise ops on 4-element tensors, forward + backward.
static void BM_tape_overhead(benchmark::State& state) {
  Tensor x = Tensor::full({4}, 0.5f, true);
  for (auto _ : state) {
    Tensor y = x;
    for (int i = 0; i < 100; ++i) y = y * 1.01f + 0.1f;
    backward(sum(y));
    x.zero_grad();
  }
  state.counters["ns/op"] =
      benchmark::Counter(201.0 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_tape_overhead)->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  tg::apps::start_program(argv);  // the same OpenBLAS kernel the programs run
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
