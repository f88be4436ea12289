#include "train/batcher.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tg::train {

Batcher::Batcher(const text::LMData& data, size_t warmup, size_t predictions, size_t batch,
                 BatchOrder order)
    : data_(data), kind_(order), warmup_(warmup), t_(predictions), batch_(batch) {
  const size_t need = warmup + predictions + 1;
  if (data.train.size() < need + predictions)
    throw std::invalid_argument("the training split has " + std::to_string(data.train.size()) +
                                " tokens, too few for windows of " + std::to_string(need) +
                                " tokens (context " + std::to_string(predictions) +
                                "); use a shorter --context");
  if (order == BatchOrder::streams) {
    // Each stream holds offset (< T) + its windows + the warm-up and the last target.
    stream_ = data.train.size() / batch;
    if (stream_ < need + 2 * predictions)
      throw std::invalid_argument(
          "--batch " + std::to_string(batch) + " streams of the " +
          std::to_string(data.train.size()) + "-token training split hold " +
          std::to_string(stream_) + " tokens each, too few for two windows of " +
          std::to_string(predictions) + " (the model carries its state along each stream); use " +
          "a smaller --batch or a shorter --context");
    chunks_ = (stream_ - predictions - warmup - 1) / predictions * batch;
    return;
  }
  chunks_ = (data.train.size() - predictions - need) / predictions + 1;  // for any offset < T
  if (batch > chunks_)
    throw std::invalid_argument("--batch " + std::to_string(batch) + " is more than the " +
                                std::to_string(chunks_) + " windows of " +
                                std::to_string(predictions) +
                                " tokens in the training split: every batch would be the whole "
                                "split, smaller than asked; use --batch " +
                                std::to_string(chunks_) + " or less");
}

void Batcher::start_epoch(Generator& gen) {
  offset_ = static_cast<size_t>(gen.below(t_));
  if (kind_ == BatchOrder::streams) return;  // every stream in order
  chunk_order_.resize(chunks_);
  for (size_t i = 0; i < chunks_; ++i) chunk_order_[i] = i;
  for (size_t i = chunks_; i > 1; --i) std::swap(chunk_order_[i - 1], chunk_order_[gen.below(i)]);
}

std::pair<Ids, Ids> Batcher::batch(size_t index) const {
  const size_t first = index * batch_, rows = std::min(batch_, chunks_ - first), len = warmup_ + t_;
  std::vector<int32_t> inputs(rows * len), targets(rows * t_);
  for (size_t r = 0; r < rows; ++r) {
    const size_t start = kind_ == BatchOrder::streams
                             ? data_.train.begin + r * stream_ + offset_ + index * t_
                             : data_.train.begin + offset_ + chunk_order_[first + r] * t_;
    std::copy_n(data_.stream.begin() + static_cast<long>(start), len,
                inputs.begin() + static_cast<long>(r * len));
    std::copy_n(data_.stream.begin() + static_cast<long>(start + warmup_ + 1), t_,
                targets.begin() + static_cast<long>(r * t_));
  }
  return {Ids({rows, len}, std::move(inputs)), Ids({rows, t_}, std::move(targets))};
}

}  // namespace tg::train
