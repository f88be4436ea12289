#include "train/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "distributed/distributed.hpp"

namespace tg::train {

namespace {

// The evaluation batches of `range`: `rows` windows of `len` targets each, whose first targets
// are at `starts`. Every target in the range is predicted once, from real preceding context.
struct EvalBatch {
  std::vector<size_t> starts;
  size_t len = 0;
};

// The first target of `range` that has a model's whole warm-up context before it.
size_t first_target(const nn::LanguageModel& model, const text::Range& range) {
  return std::max(range.begin, model.warmup() + 1);
}

std::vector<EvalBatch> plan_batches(const nn::LanguageModel& model, const text::Range& range,
                                    size_t batch_rows) {
  const size_t t = std::min<size_t>(model.max_predictions(), 256);
  // About 2,048 predictions per forward pass: the logits of one batch are rows x t x V floats.
  batch_rows = std::max<size_t>(1, std::min(batch_rows, 2048 / t));
  std::vector<EvalBatch> batches(1);
  size_t p = first_target(model, range);
  for (; p + t <= range.end; p += t) {
    if (batches.back().starts.size() == batch_rows) batches.emplace_back();
    batches.back().starts.push_back(p), batches.back().len = t;
  }
  if (p < range.end) batches.push_back({{p}, range.end - p});
  if (batches.front().starts.empty()) batches.erase(batches.begin());
  return batches;
}

// For a model that carries its state (a recurrent one): the targets of `range` as `rows`
// contiguous streams, batch k holding each stream's k-th window, so that with the state carried
// from batch to batch every target is predicted after all of its stream's text before it (as
// it trains). The few targets left over after rows equal streams (fewer than `rows`) form a last
// one-row batch, read from a fresh state.
std::vector<EvalBatch> plan_stream_batches(const nn::LanguageModel& model, const text::Range& range,
                                           size_t batch_rows) {
  const size_t t = std::min<size_t>(model.max_predictions(), 256);
  const size_t first = first_target(model, range);
  const size_t n = range.end > first ? range.end - first : 0;
  // About 2,048 predictions per forward pass, as plan_batches.
  const size_t rows = std::max<size_t>(1, std::min({batch_rows, 2048 / t, n / t}));
  const size_t length = n / rows;  // each stream's targets
  std::vector<EvalBatch> batches;
  for (size_t k = 0; k * t < length; ++k) {
    EvalBatch b;
    b.len = std::min(t, length - k * t);
    for (size_t r = 0; r < rows; ++r) b.starts.push_back(first + r * length + k * t);
    batches.push_back(std::move(b));
  }
  if (rows * length < n) batches.push_back({{first + rows * length}, n - rows * length});
  return batches;
}

std::pair<Ids, Ids> batch_ids(const nn::LanguageModel& model, const text::LMData& data,
                              const EvalBatch& batch) {
  const size_t w = model.warmup(), len = batch.len, rows = batch.starts.size();
  std::vector<int32_t> inputs, targets;
  for (size_t s : batch.starts) {
    inputs.insert(inputs.end(), data.stream.begin() + static_cast<long>(s - 1 - w),
                  data.stream.begin() + static_cast<long>(s - 1 + len));
    targets.insert(targets.end(), data.stream.begin() + static_cast<long>(s),
                   data.stream.begin() + static_cast<long>(s + len));
  }
  return {Ids({rows, w + len}, std::move(inputs)), Ids({rows, len}, std::move(targets))};
}

// Runs fn(batch, counts) under NoGrad in evaluation mode, over the batches `plan` made. Under
// MPI each rank takes every size()-th batch, and counts is true for all. A model that carries
// its state reads the stream plan in order on every rank from a fresh state (its batches
// depend on each other), and only rank 0's count (counts is false elsewhere); the state it
// trained with is put back afterwards.
template <class F>
void for_each_batch(nn::LanguageModel& model, const text::Range& range, size_t batch_rows, F&& fn) {
  NoGrad no_grad;
  const bool was_training = model.training();
  model.eval();
  if (model.carries_state()) {
    const std::vector<Tensor> trained_state = model.carried_state();
    model.reset_state();
    model.carry_in_evaluation(true);
    const std::vector<EvalBatch> batches = plan_stream_batches(model, range, batch_rows);
    for (size_t b = 0; b < batches.size(); ++b) {
      if (b + 1 == batches.size() && b > 0 &&
          batches[b].starts.size() != batches[b - 1].starts.size())
        model.reset_state();  // the left-over targets: a stream of their own
      fn(batches[b], distributed::is_main());
    }
    model.carry_in_evaluation(false);
    model.set_carried_state(trained_state);
  } else {
    const std::vector<EvalBatch> batches = plan_batches(model, range, batch_rows);
    for (size_t b = static_cast<size_t>(distributed::rank()); b < batches.size();
         b += static_cast<size_t>(distributed::size()))
      fn(batches[b], true);
  }
  model.train(was_training);
}

}  // namespace

double evaluate_nll(nn::LanguageModel& model, const text::LMData& data, const text::Range& range,
                    size_t batch_rows) {
  double sums[2] = {0.0, 0.0};  // total loss, predictions
  for_each_batch(model, range, batch_rows, [&](const EvalBatch& batch, bool counts) {
    auto [inputs, targets] = batch_ids(model, data, batch);
    const double n = static_cast<double>(batch.starts.size() * batch.len);
    const double loss = static_cast<double>(model.loss(inputs, targets).item());
    if (!counts) return;
    sums[0] += loss * n;
    sums[1] += n;
  });
  distributed::sum(sums, 2);
  if (sums[1] == 0) throw std::invalid_argument("evaluation range has no predictable tokens");
  return sums[0] / sums[1];
}

std::vector<double> token_nll(nn::LanguageModel& model, const text::LMData& data,
                              const text::Range& range, size_t batch_rows) {
  const size_t first = first_target(model, range);
  if (first >= range.end) throw std::invalid_argument("evaluation range has no predictable tokens");
  std::vector<double> nll(range.end - first, 0.0);
  for_each_batch(model, range, batch_rows, [&](const EvalBatch& batch, bool counts) {
    auto [inputs, targets] = batch_ids(model, data, batch);
    const Tensor logits = model.logits(inputs);  // [rows, len, V]
    if (!counts) return;
    const size_t v = logits.size(-1);
    const float* z = logits.data();
    for (size_t r = 0; r < batch.starts.size(); ++r)
      for (size_t i = 0; i < batch.len; ++i) {
        const float* row = z + (r * batch.len + i) * v;
        const float top = *std::max_element(row, row + v);
        double sum = 0.0;
        for (size_t j = 0; j < v; ++j) sum += std::exp(static_cast<double>(row[j] - top));
        const int32_t target = targets.values[r * batch.len + i];
        nll[batch.starts[r] + i - first] = std::log(sum) + top - row[target];
      }
  });
  distributed::sum(nll.data(), nll.size());  // each rank filled its own batches' slots
  return nll;
}

std::string sample_text(nn::LanguageModel& model, const text::Vocabulary& vocab,
                        const std::string& prompt, size_t count, float temperature, size_t top_k,
                        uint64_t seed) {
  if (!(temperature > 0.0f)) throw std::invalid_argument("--temperature must be positive");
  NoGrad no_grad;
  model.eval();
  std::vector<int32_t> ids = vocab.encode_text(prompt);
  const size_t need = model.warmup() + 1;
  while (ids.size() < need)
    ids.insert(ids.begin(), vocab.id("."));  // pad short prompts with sentence ends
  Generator gen(seed);
  std::string out = prompt;
  const size_t window = model.warmup() + std::min<size_t>(model.max_predictions(), 64);
  for (size_t i = 0; i < count; ++i) {
    const size_t len = std::min(ids.size(), window);
    std::vector<int32_t> input(ids.end() - static_cast<long>(len), ids.end());
    const Tensor logits = model.logits(Ids({1, len}, input));
    const size_t v = logits.size(-1), last = logits.numel() / v - 1;
    std::vector<std::pair<float, int32_t>> scored(v);
    for (size_t j = 0; j < v; ++j)
      scored[j] = {logits.data()[last * v + j], static_cast<int32_t>(j)};
    std::sort(scored.begin(), scored.end(), std::greater<>());
    if (top_k > 0 && top_k < v) scored.resize(top_k);
    // Weights exp((logit - max) / T) in double: at any positive T, however small, the most
    // likely word weighs 1 and the rest underflow towards 0 (greedy), never inf or NaN.
    std::vector<double> weight(scored.size());
    double z = 0.0;
    for (size_t j = 0; j < scored.size(); ++j)
      z += weight[j] =
          std::exp((static_cast<double>(scored[j].first) - scored[0].first) / temperature);
    double u = gen.uniform_double() * z;
    int32_t next = scored[0].second;
    for (size_t j = 0; j < scored.size(); ++j)
      if ((u -= weight[j]) <= 0) {
        next = scored[j].second;
        break;
      }
    ids.push_back(next);
    vocab.append(out, next);
  }
  return out;
}

}  // namespace tg::train
