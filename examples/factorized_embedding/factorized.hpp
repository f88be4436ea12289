// A kind of token table written outside the library and studied by the library's programs
// (docs/extending.md walks through this file): ALBERT's factorized embedding (Lan et al.
// 2020). Each token has a row of e numbers, e much smaller than d_model, and one e x d_model
// matrix maps every row up to the model's width:
//   table(id) = P^T E[id]          E: [vocab, e]   P: [e, d_model]
// vocab x e + e x d_model parameters instead of vocab x d_model. Its rows are not
// [vocab, d_model], so it cannot be tied to the output.
#pragma once

#include <memory>
#include <string>

#include "nn/embedding.hpp"
#include "nn/linear.hpp"
#include "nn/token_table.hpp"

// BEGIN DOC EXAMPLE
namespace factorized {

using namespace tg;

class FactorizedTable : public nn::TokenTable {
 public:
  // Random rows (N(0, init_std^2), the model's scale), or `spec.pretrained` ([vocab, e]).
  FactorizedTable(const nn::TableSpec& spec, size_t e) {
    const nn::EmbeddingOptions options{spec.init_std, spec.sparse_grad};
    rows_ = register_module(
        "rows", spec.pretrained.defined()
                    ? nn::Embedding::from_pretrained(spec.pretrained, /*freeze=*/false, options)
                    : std::make_shared<nn::Embedding>(spec.vocab, e, *spec.init, options));
    // A matrix (ParamRole::weight): a GPT gives it GPT-2's N(0, 0.02), AdamW decays it.
    up_ = register_module("up", std::make_shared<nn::Linear>(e, spec.d_model, *spec.init,
                                                             nn::LinearOptions{.bias = false}));
  }
  Tensor forward(const Ids& ids) const override { return up_->forward(rows_->forward(ids)); }
  const Tensor& weight() const override { return rows_->weight(); }  // what probes read

 private:
  std::shared_ptr<nn::Embedding> rows_;
  std::shared_ptr<nn::Linear> up_;
};

// Two kinds, named by their width so that a run file says which it was: "factorized-e16"
// (random rows) and "finetune-factorized-e16" (word2vec rows of width 16, trained on).
inline void register_factorized(size_t e) {
  const std::string width = "e" + std::to_string(e);
  nn::register_table_kind(
      "factorized-" + width,
      {.make = [e](const nn::TableSpec& s) { return std::make_shared<FactorizedTable>(s, e); },
       .can_tie = false},
      "ALBERT's vocab x " + std::to_string(e) + " rows, then one " + std::to_string(e) +
          " x d_model matrix");
  nn::register_table_kind(
      "finetune-factorized-" + width,
      {.make = [e](const nn::TableSpec& s) { return std::make_shared<FactorizedTable>(s, e); },
       .pretrained = true,
       .can_tie = false,
       .vector_width = [e](size_t /*d_model*/) { return e; }},
      "the same, its rows word2vec vectors of width " + std::to_string(e));
}

}  // namespace factorized
// END DOC EXAMPLE
