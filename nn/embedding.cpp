#include "nn/embedding.hpp"

namespace tg::nn {

Embedding::Embedding(size_t vocab, size_t dim, Generator& gen, EmbeddingOptions options)
    : Embedding(randn({vocab, dim}, gen, options.init_std, true), options) {}

Embedding::Embedding(const Tensor& matrix, EmbeddingOptions options) : options_(options) {
  if (matrix.dim() != 2 || matrix.size(0) == 0 || matrix.size(1) == 0)
    throw std::invalid_argument(
        "Embedding: the table must be a non-empty [vocab, dim] matrix, got " +
        to_string(matrix.shape()));
  weight_ = register_parameter("weight", matrix, ParamRole::embedding);
}

std::shared_ptr<Embedding> Embedding::from_pretrained(const Tensor& matrix, bool freeze,
                                                      EmbeddingOptions options) {
  auto e = std::shared_ptr<Embedding>(new Embedding(matrix.clone(), options));
  e->weight_.set_requires_grad(!freeze);
  return e;
}

Tensor Embedding::forward(const Ids& ids) const {
  return embedding(weight_, ids, options_.sparse_grad);
}

}  // namespace tg::nn
