// Module bookkeeping, embedding semantics (sparse rows, frozen, from_pretrained), errors.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <set>

#include "nn/nn.hpp"
#include "optim/optimizer.hpp"

using namespace tg;
using namespace tg::nn;

namespace {
GPTConfig tiny_gpt(bool tied) {
  return GPTConfig{.vocab = 20,
                   .context = 8,
                   .d_model = 16,
                   .layers = 2,
                   .heads = 2,
                   .tied = tied,
                   .seed = 3,
                   .parts = {}};
}
Ids batch(size_t b, size_t t, uint64_t seed, size_t vocab, size_t max_id) {
  Generator gen(seed);
  std::vector<int32_t> v(b * t);
  for (auto& x : v) x = static_cast<int32_t>(gen.below(std::min(vocab, max_id)));
  return Ids({b, t}, v);
}
bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.numel() * sizeof(float)) == 0;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(nn_modules)

BOOST_AUTO_TEST_CASE(hierarchical_names_and_counts) {
  GPT untied(tiny_gpt(false)), tied(tiny_gpt(true));
  const auto names = untied.named_parameters();
  BOOST_TEST(names.front().first == "wte.weight");
  BOOST_TEST(untied.parameter("blocks.1.attn.qkv.weight").shape() == (Shape{48, 16}));
  BOOST_TEST(untied.parameter("lm_head.weight").shape() == (Shape{20, 16}));
  BOOST_CHECK_THROW(tied.parameter("lm_head.weight"), std::out_of_range);
  // Tying removes exactly one [vocab, d_model] matrix.
  BOOST_TEST(untied.num_parameters() - tied.num_parameters() == 20u * 16u);
  // 2 layers x (4C^2 + 8C^2 + ...) written out: embeddings + blocks + final norm + head.
  const size_t c = 16, per_block = 2 * c + (3 * c * c + 3 * c) + (c * c + c) + 2 * c +
                                   (4 * c * c + 4 * c) + (4 * c * c + c);
  BOOST_TEST(untied.num_parameters() == 20 * c + 8 * c + 2 * per_block + 2 * c + 20 * c);
}

BOOST_AUTO_TEST_CASE(freeze_unfreeze_and_train_eval) {
  GPT model(tiny_gpt(false));
  const size_t all = model.num_trainable_parameters();
  model.set_requires_grad("blocks.0", false);
  BOOST_TEST(!model.parameter("blocks.0.mlp.fc.weight").requires_grad());
  BOOST_TEST(model.parameter("blocks.1.mlp.fc.weight").requires_grad());
  BOOST_TEST(model.num_trainable_parameters() < all);
  model.freeze();
  BOOST_TEST(model.num_trainable_parameters() == 0u);
  model.unfreeze();
  BOOST_TEST(model.num_trainable_parameters() == all);
  BOOST_CHECK_THROW(model.set_requires_grad("no.such", false), std::out_of_range);
  model.eval();
  BOOST_TEST(!model.training());
  model.train();
  BOOST_TEST(model.training());
}

// One optimizer step with lazy Adam: exactly the rows of the tokens in the batch change.
BOOST_AUTO_TEST_CASE(only_rows_in_the_batch_change) {
  GPT model(tiny_gpt(false));
  const Tensor before = model.input_embedding().weight().clone();
  const Ids ids = batch(2, 8, 1, 20, 10);  // ids < 10 only
  optim::LazyAdam opt(optim::single_group(model), {.lr = 1e-2f});
  backward(model.loss(ids, batch(2, 8, 2, 20, 20)));
  BOOST_REQUIRE(model.input_embedding().weight().sparse_grad() != nullptr);
  BOOST_TEST(!model.input_embedding().weight().has_dense_grad());
  opt.step();
  const Tensor& after = model.input_embedding().weight();
  std::set<int32_t> used(ids.values.begin(), ids.values.end());
  for (int32_t row = 0; row < 20; ++row) {
    const bool changed =
        std::memcmp(before.data() + row * 16, after.data() + row * 16, 16 * sizeof(float)) != 0;
    BOOST_TEST(changed == (used.count(row) > 0), "row " << row);
  }
}

BOOST_AUTO_TEST_CASE(frozen_embedding_never_changes) {
  Generator gen(4);
  const Tensor vectors = randn({20, 16}, gen, 0.3f);
  GPTConfig c = tiny_gpt(false);
  c.embedding = "frozen-pretrained";
  GPT model(c, vectors);
  BOOST_TEST(!model.input_embedding().weight().requires_grad());
  BOOST_TEST(model.num_trainable_parameters() == model.num_parameters() - 20 * 16);
  optim::Adam opt(optim::decay_groups(model, 0.1f, optim::TableDecay::all), {.lr = 1e-2f}, true);
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    backward(model.loss(batch(2, 8, step, 20, 20), batch(2, 8, step + 9, 20, 20)));
    BOOST_TEST(!model.input_embedding().weight().has_grad());
    opt.step();
  }
  BOOST_TEST(same_bits(model.input_embedding().weight(), vectors));
}

BOOST_AUTO_TEST_CASE(frozen_random_is_frozen_and_finetune_trains) {
  GPTConfig c = tiny_gpt(false);
  c.embedding = "frozen-random";
  BOOST_TEST(!GPT(c).input_embedding().weight().requires_grad());
  Generator gen(4);
  c.embedding = "finetune-pretrained";
  const Tensor vectors = randn({20, 16}, gen, 0.3f);
  GPT model(c, vectors);
  BOOST_TEST(model.input_embedding().weight().requires_grad());
  BOOST_TEST(same_bits(model.input_embedding().weight(), vectors));
  BOOST_TEST(model.input_embedding().weight().impl() != vectors.impl());  // copied, not aliased
}

BOOST_AUTO_TEST_CASE(bad_configurations_are_clear_errors) {
  GPTConfig c = tiny_gpt(false);
  c.embedding = "frozen-pretrained";
  Generator gen(1);
  try {
    GPT model(c, randn({20, 12}, gen));
    BOOST_FAIL("accepted vectors of the wrong dimension");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("[20, 12]") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("[20, 16]") != std::string::npos, e.what());
  }
  BOOST_CHECK_THROW(GPT{c}, std::invalid_argument);  // pretrained mode without vectors
  c = tiny_gpt(false);
  c.heads = 3;
  BOOST_CHECK_THROW(GPT{c}, std::invalid_argument);
  NPLMConfig n;
  n.vocab = 10;
  n.tied = true;
  n.d_model = 8;
  n.hidden = 6;
  BOOST_CHECK_THROW(NPLM{n}, std::invalid_argument);
  c = tiny_gpt(false);
  c.embedding = "pretrained";  // not a registered kind
  try {
    GPT model(c);
    BOOST_FAIL("accepted an unknown kind of token table");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("unknown kind of token table 'pretrained' (registered: "
                                          "learned, frozen-random, frozen-pretrained, "
                                          "finetune-pretrained") != std::string::npos,
               e.what());
  }

  GPT model(tiny_gpt(false));
  try {
    model.logits(Ids({1, 2}, {3, 20}));
    BOOST_FAIL("accepted an id outside the vocabulary");
  } catch (const std::out_of_range& e) {
    BOOST_TEST(std::string(e.what()).find("id 20") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("[0, 20)") != std::string::npos, e.what());
  }
  BOOST_CHECK_THROW(model.logits(Ids({1, 9}, std::vector<int32_t>(9, 0))), std::invalid_argument);
  tape().clear();
}

BOOST_AUTO_TEST_CASE(dropout_only_in_training_and_seeded) {
  GPTConfig c = tiny_gpt(false);
  c.dropout = 0.2f;
  GPT a(c), b(c);
  const Ids ids = batch(2, 8, 5, 20, 20);
  NoGrad no_grad;
  const Tensor ta = a.logits(ids), tb = b.logits(ids);
  BOOST_TEST(same_bits(ta, tb));  // same seed, same masks
  const Tensor again = a.logits(ids);
  BOOST_TEST(!same_bits(ta, again));  // a new mask
  a.eval();
  const Tensor e1 = a.logits(ids), e2 = a.logits(ids);
  BOOST_TEST(same_bits(e1, e2));
}

// A user's feed-forward: a Layer with one plain and one residual projection and a bias.
struct TwoLayer : Layer {
  std::shared_ptr<Linear> up, down;
  explicit TwoLayer(const BlockContext& ctx) {
    up = register_module("up", std::make_shared<Linear>(ctx.d_model, 3 * ctx.d_model, ctx.init));
    down = register_module(
        "down", std::make_shared<Linear>(3 * ctx.d_model, ctx.d_model, ctx.init,
                                         LinearOptions{.role = ParamRole::residual_weight}));
  }
  Tensor forward(const Tensor& x) const override { return down->forward(relu(up->forward(x))); }
};

double std_of(const Tensor& t) {
  double s = 0.0;
  for (size_t i = 0; i < t.numel(); ++i) s += double(t.data()[i]) * t.data()[i];
  return std::sqrt(s / double(t.numel()));
}

BOOST_AUTO_TEST_CASE(gpt_parts_are_replaceable_and_get_gpt2_initialisation) {
  GPTConfig c = tiny_gpt(false);
  c.d_model = 64;
  c.layers = 4;
  c.heads = 4;
  size_t built = 0;
  c.parts.mlp = [&built](const BlockContext& ctx) {
    BOOST_TEST(ctx.index == built);
    ++built;
    return std::make_shared<TwoLayer>(ctx);
  };
  GPT model(c);
  BOOST_TEST(built == 4u);
  // Selected by role, not by name: the user's "up" is a weight, "down" a residual projection.
  BOOST_TEST(std_of(model.parameter("blocks.0.mlp.up.weight")) == 0.02,
             boost::test_tools::tolerance(0.05));
  BOOST_TEST(std_of(model.parameter("blocks.3.mlp.down.weight")) == 0.02 / std::sqrt(8.0),
             boost::test_tools::tolerance(0.05));
  BOOST_TEST(std_of(model.parameter("blocks.2.mlp.up.bias")) == 0.0);
  BOOST_TEST(std_of(model.parameter("blocks.0.attn.proj.weight")) == 0.02 / std::sqrt(8.0),
             boost::test_tools::tolerance(0.1));
  // Norms keep their layer's values; the whole thing trains.
  BOOST_TEST(model.parameter("blocks.1.ln2.weight").data()[0] == 1.0f);
  const Ids ids = batch(2, 8, 5, c.vocab, c.vocab);
  optim::Adam opt(optim::decay_groups(model, 0.1f), {.lr = 1e-2f}, true);
  float first = 0.0f, last = 0.0f;
  for (int step = 0; step < 20; ++step) {
    opt.zero_grad();
    Tensor loss = model.loss(ids, ids);
    backward(loss);
    opt.step();
    (step == 0 ? first : last) = loss.item();
  }
  BOOST_TEST(last < 0.5f * first);
}

BOOST_AUTO_TEST_CASE(gpt_whole_block_and_norm_replaceable) {
  GPTConfig c = tiny_gpt(true);
  size_t norms = 0;
  c.parts.norm = [&norms](const BlockContext& ctx) {
    ++norms;
    return std::make_shared<LayerNorm>(ctx.d_model, 1e-3f);
  };
  GPT with_norms(c);
  BOOST_TEST(norms == 2 * c.layers + 1);  // ln1 and ln2 of every block, and ln_f
  c.parts.block = [](const BlockContext& ctx) { return std::make_shared<TwoLayer>(ctx); };
  GPT with_blocks(c);
  std::set<std::string> names;
  for (const auto& [n, _] : with_blocks.named_parameters()) names.insert(n);
  BOOST_TEST(names.count("blocks.1.up.weight") == 1u);
  BOOST_TEST(names.count("blocks.1.attn.qkv.weight") == 0u);
}

namespace {
// ALBERT's factorized table from outside the library: V x e rows, then an e x d_model projection.
class Factorized : public TokenTable {
 public:
  Factorized(const TableSpec& s, size_t e) {
    rows_ = register_module("rows", std::make_shared<Embedding>(
                                        s.vocab, e, *s.init, EmbeddingOptions{s.init_std, true}));
    up_ = register_module(
        "up", std::make_shared<Linear>(e, s.d_model, *s.init, LinearOptions{.bias = false}));
  }
  Tensor forward(const Ids& ids) const override { return up_->forward(rows_->forward(ids)); }
  const Tensor& weight() const override { return rows_->weight(); }

 private:
  std::shared_ptr<Embedding> rows_;
  std::shared_ptr<Linear> up_;
};
}  // namespace

// A kind registered from outside builds the table of every built-in model, trains, and refuses
// to tie when it says it cannot.
BOOST_AUTO_TEST_CASE(a_registered_kind_of_table_builds_every_model) {
  register_table_kind(
      "test-factorized-4",
      {.make = [](const TableSpec& s) { return std::make_shared<Factorized>(s, 4); },
       .can_tie = false},
      "V x 4, then 4 x d_model");
  BOOST_TEST(has_table_kind("test-factorized-4"));
  GPTConfig c = tiny_gpt(false);
  c.embedding = "test-factorized-4";
  GPT model(c);
  BOOST_TEST((model.input_embedding().weight().shape() == Shape{20, 4}));
  const auto names = model.named_parameters();
  BOOST_TEST(std::ranges::any_of(names, [](const auto& p) { return p.first == "wte.up.weight"; }));
  BOOST_TEST(model.num_parameters() ==
             GPT(tiny_gpt(false)).num_parameters() - 20 * 16 + 20 * 4 + 4 * 16);
  optim::Adam opt(optim::decay_groups(model, 0.0f), {.lr = 1e-2f}, true);
  const Tensor before = model.input_embedding().weight().clone();
  float first = 0, last = 0;
  for (int step = 0; step < 20; ++step) {
    opt.zero_grad();
    Tensor loss = model.loss(batch(2, 8, 0, 20, 20), batch(2, 8, 9, 20, 20));
    (step == 0 ? first : last) = loss.item();
    backward(loss);
    opt.step();
  }
  BOOST_TEST(last < first);
  BOOST_TEST(!same_bits(model.input_embedding().weight(), before));
  NPLMConfig n;
  n.vocab = 20;
  n.d_model = 8;
  n.embedding = "test-factorized-4";
  BOOST_TEST((NPLM(n).input_embedding().weight().shape() == Shape{20, 4}));
  c.tied = true;
  try {
    GPT tied(c);
    BOOST_FAIL("a factorized table was tied");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(
        std::string(e.what()).find("'test-factorized-4' cannot be tied") != std::string::npos,
        e.what());
  }
}

BOOST_AUTO_TEST_SUITE_END()
