// LSTM and GRU layers: PyTorch parity from a given state (outputs, final state, every
// gradient), PyTorch's initialisation, state carried across calls, finite differences, errors.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>

#include "autograd/gradcheck.hpp"
#include "autograd/op_cases.hpp"
#include "nn/model_cases.hpp"
#include "nn/nn.hpp"

using namespace tg;
using namespace tg::testing;

namespace {

constexpr size_t kWidth = 3, kHidden = 5;

std::shared_ptr<nn::RecurrentLayer> make_layer(const std::string& cell, size_t input, size_t hidden,
                                               uint64_t seed = 7) {
  Generator gen(seed);
  if (cell == "lstm") return std::make_shared<nn::LSTM>(input, hidden, gen);
  return std::make_shared<nn::GRU>(input, hidden, gen);
}

// A golden [1, B, H] state as the layer takes it: [B, H], a leaf that wants its gradient.
Tensor state_from(const Tensor& golden) {
  Tensor t =
      Tensor::from_vector({golden.size(1), golden.size(2)},
                          std::vector<float>(golden.data(), golden.data() + golden.numel()), true);
  return t;
}

Array flat(const Tensor& t) {
  return Tensor::from_vector({t.numel()}, std::vector<float>(t.data(), t.data() + t.numel()))
      .array();
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.numel() * sizeof(float)) == 0;
}

const std::vector<std::string> kCells = {"lstm", "gru"};

}  // namespace

BOOST_AUTO_TEST_SUITE(nn_recurrent)

BOOST_DATA_TEST_CASE(layer_matches_pytorch_from_a_given_state, boost::unit_test::data::make(kCells),
                     cell) {
  const TensorFile& g = golden_models();
  const std::string name = cell + "_layer";
  auto layer = make_layer(cell, kWidth, kHidden);
  for (const auto& [pname, p] : layer->named_parameters()) {
    const Tensor& src = g.tensor(name + "/in/" + pname);
    BOOST_REQUIRE(src.shape() == p.shape());
    Tensor dst = p;
    std::copy(src.data(), src.data() + src.numel(), dst.data());
  }
  Tensor x = g.tensor(name + "/in/x").clone().set_requires_grad(true);
  nn::RecurrentState start{state_from(g.tensor(name + "/in/h0")), Tensor()};
  if (cell == "lstm") start.c = state_from(g.tensor(name + "/in/c0"));
  const auto [out, last] = layer->forward(x, start);
  check_close(name + " outputs", out.array(), g.tensor(name + "/out").array(), 1e-6, 1e-5);
  check_close(name + " final h", flat(last.h), flat(g.tensor(name + "/final/h")), 1e-6, 1e-5);
  Tensor loss = sum(out * g.tensor(name + "/upstream/out")) +
                sum(last.h * reshape(g.tensor(name + "/upstream/h"), {2, -1}));
  if (cell == "lstm") {
    check_close(name + " final c", flat(last.c), flat(g.tensor(name + "/final/c")), 1e-6, 1e-5);
    loss = loss + sum(last.c * reshape(g.tensor(name + "/upstream/c"), {2, -1}));
  } else {
    BOOST_TEST(!last.c.defined());
  }
  backward(loss);
  check_close(name + " grad x", x.grad(), g.tensor(name + "/grad/x").array(), 1e-5, 1e-4);
  check_close(name + " grad h0", flat(Tensor(start.h.grad())), flat(g.tensor(name + "/grad/h0")),
              1e-5, 1e-4);
  if (cell == "lstm")
    check_close(name + " grad c0", flat(Tensor(start.c.grad())), flat(g.tensor(name + "/grad/c0")),
                1e-5, 1e-4);
  for (const auto& [pname, p] : layer->named_parameters())
    check_close(name + " grad " + pname, p.grad(), g.tensor(name + "/grad/" + pname).array(), 1e-5,
                1e-4);
}

// torch.nn.LSTM / GRU: every parameter uniform in +-1/sqrt(hidden), so its spread is
// bound / sqrt(3); four (three) gate blocks in each matrix.
BOOST_DATA_TEST_CASE(pytorch_initialisation, boost::unit_test::data::make(kCells), cell) {
  const size_t input = 48, hidden = 64, gates = cell == "lstm" ? 4 : 3;
  auto layer = make_layer(cell, input, hidden);
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
  const std::vector<std::pair<std::string, Shape>> expected = {
      {"weight_ih", {gates * hidden, input}},
      {"weight_hh", {gates * hidden, hidden}},
      {"bias_ih", {gates * hidden}},
      {"bias_hh", {gates * hidden}}};
  const auto params = layer->named_parameters();
  BOOST_REQUIRE_EQUAL(params.size(), expected.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& [pname, p] = params[i];
    BOOST_TEST(pname == expected[i].first);
    BOOST_TEST(p.shape() == expected[i].second, pname << " " << to_string(p.shape()));
    double sum_sq = 0.0, largest = 0.0;
    for (size_t j = 0; j < p.numel(); ++j) {
      sum_sq += static_cast<double>(p.data()[j]) * p.data()[j];
      largest = std::max(largest, std::fabs(static_cast<double>(p.data()[j])));
    }
    BOOST_TEST(largest <= bound, pname << ": |w| up to " << largest << " > " << bound);
    if (p.numel() >= 10000) {  // the matrices: the spread is measurable
      const double sd = std::sqrt(sum_sq / static_cast<double>(p.numel()));
      BOOST_TEST(std::fabs(sd / (bound / std::sqrt(3.0)) - 1.0) < 0.03, pname << ": sd " << sd);
    }
  }
}

// A sequence run in two calls, the state of the first passed to the second, gives the outputs
// of one call, bit for bit; the detached state stops the second call's backward pass.
BOOST_DATA_TEST_CASE(state_carries_across_calls_and_detaches, boost::unit_test::data::make(kCells),
                     cell) {
  auto layer = make_layer(cell, kWidth, kHidden);
  Generator gen(11);
  const Tensor whole = randn({2, 8, kWidth}, gen);
  const auto [all, all_last] = layer->forward(whole);
  Tensor first = narrow(whole, 1, 0, 5).set_requires_grad(true);
  const auto [a, a_last] = layer->forward(first);
  const auto [b, b_last] = layer->forward(narrow(whole, 1, 5, 3), a_last.detached());
  BOOST_TEST(same_bits(concat({a, b}, 1), all));
  BOOST_TEST(same_bits(b_last.h, all_last.h));
  backward(sum(b));
  BOOST_TEST(!first.has_grad(), "the detached state let the gradient into the first window");
  BOOST_TEST(layer->parameter("weight_hh").has_grad());
}

BOOST_DATA_TEST_CASE(layer_gradient_matches_finite_differences,
                     boost::unit_test::data::make(kCells), cell) {
  auto layer = make_layer(cell, kWidth, kHidden);
  Generator gen(5);
  const Tensor x = randn({2, 4, kWidth}, gen, 1.0f, true);
  const Tensor h0 = randn({2, kHidden}, gen, 0.5f, true);
  const Tensor c0 = randn({2, kHidden}, gen, 0.5f, true);
  std::vector<Tensor> inputs = {x, h0, c0};
  for (const Tensor& p : layer->parameters()) inputs.push_back(p);
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        const auto [out, last] = layer->forward(in[0], {in[1], cell == "lstm" ? in[2] : Tensor()});
        return sum(out * out) + sum(last.h);
      },
      inputs);
  BOOST_TEST(r.ok, cell << ": " << r.report);
}

// With carry_state, loss() in training mode goes on from the state the previous call ended in:
// the second window's loss is not that of a fresh start, and after reset_state() it is again,
// bit for bit. Evaluation never carries; the state round-trips through carried_state().
BOOST_AUTO_TEST_CASE(rnnlm_carries_its_state_between_training_calls) {
  nn::RNNLMConfig config{.vocab = 12, .d_model = 6, .hidden = 5, .layers = 2};
  config.carry_state = true;
  nn::RNNLM carried(config);
  config.carry_state = false;
  nn::RNNLM fresh(config);
  const Ids first({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Ids second({2, 4}, {9, 10, 11, 1, 2, 3, 4, 5});
  const Ids targets({2, 4}, {2, 3, 4, 5, 6, 7, 8, 9});
  const float fresh_loss = fresh.loss(second, targets).item();
  BOOST_TEST(carried.carried_state().empty());
  (void)carried.loss(first, targets);
  BOOST_TEST(carried.carried_state().size() == 4u);  // h and c of two layers
  const std::vector<Tensor> saved = carried.carried_state();
  const float continued = carried.loss(second, targets).item();
  BOOST_TEST(continued != fresh_loss);
  carried.set_carried_state(saved);
  BOOST_TEST(carried.loss(second, targets).item() == continued);
  carried.reset_state();
  BOOST_TEST(carried.loss(second, targets).item() == fresh_loss);
  carried.eval();
  BOOST_TEST(carried.loss(second, targets).item() == fresh.loss(second, targets).item());
  // A state of another width is refused, naming the shape.
  BOOST_CHECK_THROW(carried.set_carried_state({Tensor::zeros({2, 7}), Tensor::zeros({2, 7}),
                                               Tensor::zeros({2, 7}), Tensor::zeros({2, 7})}),
                    std::invalid_argument);
  // So is a cell state whose shape is not its hidden state's.
  std::vector<Tensor> bad_cell = saved;
  bad_cell[1] = Tensor::zeros({saved[1].size(0) + 1, saved[1].size(1)});
  BOOST_CHECK_THROW(carried.set_carried_state(bad_cell), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(bad_shapes_are_clear_errors) {
  auto lstm = make_layer("lstm", kWidth, kHidden);
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string width = message([&] { lstm->forward(Tensor::zeros({2, 4, 7})); });
  BOOST_TEST(width.find("LSTM: input must be [batch, time, 3], got [2, 4, 7]") != std::string::npos,
             width);
  const std::string state = message([&] {
    lstm->forward(Tensor::zeros({2, 4, kWidth}), {Tensor::zeros({3, kHidden}), Tensor()});
  });
  BOOST_TEST(state.find("LSTM: state h must be [2, 5], got [3, 5]") != std::string::npos, state);
  const std::string tied =
      message([] { nn::RNNLM m({.vocab = 10, .d_model = 6, .hidden = 5, .tied = true}); });
  BOOST_TEST(tied.find("hidden (5) must equal d_model (6)") != std::string::npos, tied);
  Generator gen(1);
  BOOST_CHECK_THROW(nn::GRU(0, 4, gen), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
