// Embedding: token id -> one row of a [vocab, dim] table. Forward is a row gather; backward
// adds into the looked-up rows only. With sparse gradients (the default) the weight's
// gradient is just those rows (SparseGrad), which a lazy optimizer can update alone.
#pragma once

#include "nn/module.hpp"
#include "nn/token_table.hpp"

namespace tg::nn {

struct EmbeddingOptions {
  float init_std = 1.0f;    // N(0, init_std^2) initial rows, PyTorch's default
  bool sparse_grad = true;  // keep the gradient as touched rows (see SparseGrad)
};

class Embedding : public TokenTable {
 public:
  Embedding(size_t vocab, size_t dim, Generator& gen, EmbeddingOptions options = {});
  // Uses `matrix` ([vocab, dim]) as the table, like torch.nn.Embedding.from_pretrained;
  // frozen tables get no gradient and never change.
  static std::shared_ptr<Embedding> from_pretrained(const Tensor& matrix, bool freeze,
                                                    EmbeddingOptions options = {});

  // ids of any shape -> ids.shape + [dim]. Ids outside [0, vocab) throw, naming the id.
  Tensor forward(const Ids& ids) const override;

  const Tensor& weight() const override { return weight_; }
  size_t dim() const { return weight_.size(1); }
  bool sparse_grad() const { return options_.sparse_grad; }

 private:
  Embedding(const Tensor& matrix, EmbeddingOptions options);
  Tensor weight_;
  EmbeddingOptions options_;
};

}  // namespace tg::nn
