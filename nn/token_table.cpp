#include "nn/token_table.hpp"

#include "base/registry.hpp"
#include "nn/embedding.hpp"

namespace tg::nn {

namespace {

std::shared_ptr<TokenTable> random_rows(const TableSpec& s, bool frozen) {
  auto e = std::make_shared<Embedding>(
      s.vocab, s.d_model, *s.init,
      EmbeddingOptions{.init_std = s.init_std, .sparse_grad = s.sparse_grad});
  if (frozen) e->freeze();
  return e;
}

std::shared_ptr<TokenTable> loaded_rows(const TableSpec& s, bool frozen) {
  return Embedding::from_pretrained(
      s.pretrained, frozen, EmbeddingOptions{.init_std = s.init_std, .sparse_grad = s.sparse_grad});
}

// A function-local registry, so that registering from another translation unit's static
// initialiser cannot run before it exists.
base::Registry<TableKind>& registry() {
  static base::Registry<TableKind> kinds(
      "kind of token table",
      {{"learned",
        "random rows trained end to end (GPT-style)",
        {.make = [](const TableSpec& s) { return random_rows(s, false); }}},
       {"frozen-random",
        "random rows never trained (the control)",
        {.make = [](const TableSpec& s) { return random_rows(s, true); }}},
       {"frozen-pretrained",
        "word2vec vectors, never trained",
        {.make = [](const TableSpec& s) { return loaded_rows(s, true); }, .pretrained = true}},
       {"finetune-pretrained",
        "word2vec vectors, then trained end to end",
        {.make = [](const TableSpec& s) { return loaded_rows(s, false); }, .pretrained = true}}});
  return kinds;
}

}  // namespace

void register_table_kind(const std::string& name, TableKind kind, const std::string& description) {
  if (!kind.make)
    throw std::invalid_argument("register_table_kind: no factory (make) for '" + name + "'");
  registry().add(name, std::move(kind), description);
}

bool has_table_kind(const std::string& name) {
  return registry().find(name) != nullptr;
}

const TableKind& table_kind(const std::string& name, const std::string& flag) {
  return registry().at(name, flag).factory;
}

std::vector<std::string> table_kind_names() {
  return registry().names();
}

std::string table_kind_help() {
  return registry().help();
}

std::string unknown_table_kind_message(const std::string& name) {
  return registry().unknown_message(name);
}

size_t vector_width(const std::string& kind, size_t d_model) {
  const TableKind& k = table_kind(kind);
  return k.vector_width ? k.vector_width(d_model) : d_model;
}

std::shared_ptr<TokenTable> make_token_table(const std::string& kind, const TableSpec& spec) {
  const TableKind& k = table_kind(kind);
  if (k.pretrained) {
    if (!spec.pretrained.defined())
      throw std::invalid_argument("the token table '" + kind + "' needs pretrained vectors");
    const size_t width = vector_width(kind, spec.d_model);
    if (spec.pretrained.shape() != Shape{spec.vocab, width})
      throw std::invalid_argument("pretrained vectors have shape " +
                                  to_string(spec.pretrained.shape()) + " but the table '" + kind +
                                  "' needs [" + std::to_string(spec.vocab) + ", " +
                                  std::to_string(width) + "] (vocabulary x vector width)");
  }
  if (!spec.init) throw std::invalid_argument("make_token_table: no initialisation generator");
  auto table = k.make(spec);
  if (!table) throw std::runtime_error("the token table '" + kind + "': its factory built nothing");
  if (table->weight().dim() != 2 || table->weight().size(0) != spec.vocab)
    throw std::runtime_error("the token table '" + kind + "' has rows of shape " +
                             to_string(table->weight().shape()) + ", not [" +
                             std::to_string(spec.vocab) + ", width]");
  return table;
}

}  // namespace tg::nn
