// Kinds of token table: how a language model turns a token id into its first vector, the
// variable of the embedding study. Every built-in model (gpt, nplm, lstm, gru) builds its
// table by kind name (--embedding, and the study's --modes), so a kind a user registers works
// in all of them:
//
//   nn::register_table_kind("factorized-16", {
//       .make = [](const nn::TableSpec& s) { return std::make_shared<Factorized>(s, 16); },
//       .can_tie = false});
//
// The built-in kinds: learned (random, trained end to end: GPT-style), frozen-random (the
// control: random, never trained), frozen-pretrained and finetune-pretrained (word2vec
// vectors loaded, then kept or trained).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/module.hpp"

namespace tg::nn {

using tg::to_string;

// A token table: ids of any shape -> ids.shape + [d_model].
class TokenTable : public Module {
 public:
  virtual Tensor forward(const Ids& ids) const = 0;
  // [vocab, width]: one row per token, the rows a lookup reads (before any projection). What
  // the probes, the word-similarity tests and --export-vectors read, and what a tied output
  // projection multiplies by (kinds that can tie have width == d_model).
  virtual const Tensor& weight() const = 0;
  size_t vocab() const { return weight().size(0); }
};

// What a kind's factory gets.
struct TableSpec {
  size_t vocab = 0, d_model = 0;
  // The loaded vectors, [vocab, vector_width] (kinds with `pretrained`); undefined otherwise.
  Tensor pretrained;
  bool sparse_grad = true;    // the model allows a row-sparse gradient (an untied table)
  Generator* init = nullptr;  // the model's initialisation stream, drawn in registration order
  float init_std = 1.0f;      // the model's scale for random rows: N(0, init_std^2)
};

struct TableKind {
  std::function<std::shared_ptr<TokenTable>(const TableSpec&)> make = nullptr;
  bool pretrained = false;  // loads word2vec vectors: needs --vectors (the study trains them)
  bool can_tie = true;      // weight() is [vocab, d_model]: a tied output may be it
  // The width of the vectors it loads, from d_model (null: d_model); the study trains its
  // word2vec at this width.
  std::function<size_t(size_t d_model)> vector_width = nullptr;
};

// Registers (or replaces) a kind under `name` (a plain name, base/enum_names.hpp).
void register_table_kind(const std::string& name, TableKind kind,
                         const std::string& description = "");
bool has_table_kind(const std::string& name);
// Throws std::invalid_argument "<flag>: unknown kind of token table 'x' (registered: ...)".
const TableKind& table_kind(const std::string& name, const std::string& flag = "--embedding");
std::vector<std::string> table_kind_names();  // built-in first, then in registration order
std::string table_kind_help();
std::string unknown_table_kind_message(const std::string& name);
size_t vector_width(const std::string& kind, size_t d_model);
// Whether the kind loads vectors (TableKind::pretrained); throws for an unknown kind.
inline bool is_pretrained(const std::string& kind) {
  return table_kind(kind).pretrained;
}

// The table of kind `kind` for a model; checks the loaded vectors' shape against
// [vocab, vector_width].
std::shared_ptr<TokenTable> make_token_table(const std::string& kind, const TableSpec& spec);

}  // namespace tg::nn
