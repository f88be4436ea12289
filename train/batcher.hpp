// Training windows over the training split, each of warmup + T inputs and T targets; every
// epoch draws a new offset in [0, T) (and, shuffled, a new order) from the generator it is
// given, so an epoch is fixed by the generator's state at its start (which is what a
// checkpoint stores).
//   shuffled: chunk k starts at train.begin + offset + k * T; batches take chunks in a random
//     order: independent windows, what a model without state needs.
//   streams: the split is cut into `batch` equal streams and row r of batch k is window k of
//     stream r, so that a model that carries its state from one step to the next
//     (LanguageModel::carries_state) reads each stream in order: truncated backpropagation
//     through time, as in PyTorch's word_language_model.
#pragma once

#include <utility>
#include <vector>

#include "autograd/autograd.hpp"
#include "text/lm_data.hpp"

namespace tg::train {

enum class BatchOrder { shuffled, streams };

class Batcher {
 public:
  // `warmup`: the model's extra left context; `predictions`: T; `batch`: windows per step.
  // Throws when the training split is too short for one window (streams: two per stream).
  Batcher(const text::LMData& data, size_t warmup, size_t predictions, size_t batch,
          BatchOrder order = BatchOrder::shuffled);

  size_t steps_per_epoch() const { return (chunks_ + batch_ - 1) / batch_; }
  size_t chunks() const { return chunks_; }
  size_t predictions() const { return t_; }

  void start_epoch(Generator& gen);
  // Batch `index` of the current epoch: inputs [rows, warmup + T], targets [rows, T].
  std::pair<Ids, Ids> batch(size_t index) const;

 private:
  const text::LMData& data_;
  BatchOrder kind_;
  size_t warmup_, t_, batch_, chunks_ = 0, offset_ = 0;
  size_t stream_ = 0;  // streams: the tokens of each row's stream
  std::vector<size_t> chunk_order_;
};

}  // namespace tg::train
