// Training windows over the training split. Chunk k of an epoch starts at
// train.begin + offset + k * T and spans warmup + T inputs and T targets; each epoch draws a
// new offset in [0, T) and a new chunk order from the generator it is given, so an epoch is
// fixed by the generator's state at its start (which is what a checkpoint stores).
#pragma once

#include <utility>
#include <vector>

#include "autograd/autograd.hpp"
#include "text/lm_data.hpp"

namespace tg::train {

class Batcher {
 public:
  // `warmup`: the model's extra left context; `predictions`: T; `batch`: windows per step.
  // Throws when the training split is too short for one window.
  Batcher(const text::LMData& data, size_t warmup, size_t predictions, size_t batch);

  size_t steps_per_epoch() const { return (chunks_ + batch_ - 1) / batch_; }
  size_t chunks() const { return chunks_; }
  size_t predictions() const { return t_; }

  void start_epoch(Generator& gen);
  // Batch `index` of the current epoch: inputs [rows, warmup + T], targets [rows, T].
  std::pair<Ids, Ids> batch(size_t index) const;

 private:
  const text::LMData& data_;
  size_t warmup_, t_, batch_, chunks_ = 0, offset_ = 0;
  std::vector<size_t> order_;
};

}  // namespace tg::train
