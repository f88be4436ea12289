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

std::shared_ptr<Embedding> make_token_embedding(size_t vocab, size_t dim, EmbeddingMode mode,
                                                const Tensor& pretrained, bool sparse,
                                                Generator& init, float init_std) {
  const EmbeddingOptions options{init_std, sparse};
  if (is_pretrained(mode)) {
    if (!pretrained.defined())
      throw std::invalid_argument("embedding mode " + to_string(mode) +
                                  " needs pretrained vectors");
    if (pretrained.shape() != Shape{vocab, dim})
      throw std::invalid_argument("pretrained vectors have shape " + to_string(pretrained.shape()) +
                                  " but the model needs [" + std::to_string(vocab) + ", " +
                                  std::to_string(dim) + "] (vocabulary x d_model)");
    return Embedding::from_pretrained(pretrained, is_frozen(mode), options);
  }
  auto e = std::make_shared<Embedding>(vocab, dim, init, options);
  if (is_frozen(mode)) e->freeze();
  return e;
}

}  // namespace tg::nn
