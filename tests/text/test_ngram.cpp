// The n-gram baselines: Kneser-Ney probabilities computed by hand on a toy stream, backing
// off for unseen contexts, distributions that sum to 1 over the vocabulary for random
// contexts at every order, and deleted interpolation's EM.
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "autograd/random.hpp"
#include "text/ngram.hpp"

using namespace tg;
using namespace tg::text;

namespace {
double total_probability(const NgramModel& m, const std::vector<int32_t>& context) {
  double sum = 0.0;
  for (size_t w = 0; w < m.vocab(); ++w)
    sum += m.prob(context.data(), context.size(), static_cast<int32_t>(w));
  return sum;
}

// A Zipf-like stream with second-order structure: half the time the next word is fixed by
// the two before it.
std::vector<int32_t> random_stream(size_t n, size_t vocab, uint64_t seed) {
  Generator gen(seed);
  std::vector<int32_t> s(n);
  for (size_t i = 0; i < n; ++i) {
    const double u = gen.uniform_double();
    const int32_t zipf = static_cast<int32_t>(std::pow(static_cast<double>(vocab), u)) - 1;
    const int32_t rule =
        i >= 2 ? (s[i - 2] * 7 + s[i - 1] * 3 + 1) % static_cast<int32_t>(vocab) : 0;
    s[i] = gen.below(2) == 0 ? rule : zipf;
  }
  return s;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(text_ngram)

// Stream 1 2 1 2 1 3, vocabulary {0, 1, 2, 3}, bigrams.
//   Top order (raw counts): (1,2):2, (2,1):2, (1,3):1; counts of counts n1=1, n2=2, n3=n4=0;
//   Y = n1/(n1+2 n2) = 0.2; D1 = 1 - 2Y n2/n1 = 0.2; D2 = 2 - 3Y n3/n2 = 2; D3+ (no n3): 0.5.
//   Unigrams (continuation counts): 1, 2, 3 each once; n1 = 3, n2 = 0: D1 = 1, so P1 = 1/4
//   for every word (all mass to the uniform distribution).
//   Context 1: followers 2 (c=2) and 3 (c=1): total 3; gamma = (D1*1 + D2*1)/3 = 2.2/3.
//   P(2|1) = max(2 - 2, 0)/3 + 2.2/3 * 1/4 = 0.18333...; P(3|1) = 0.8/3 + 0.18333... = 0.45.
BOOST_AUTO_TEST_CASE(kneser_ney_by_hand) {
  const std::vector<int32_t> s = {1, 2, 1, 2, 1, 3};
  const auto m = train_kneser_ney(s, {0, s.size()}, 4, 2);
  const int32_t one = 1;
  BOOST_TEST(m->prob(&one, 1, 2) == 2.2 / 12, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(m->prob(&one, 1, 3) == 0.8 / 3 + 2.2 / 12, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(m->prob(&one, 1, 0) == 2.2 / 12, boost::test_tools::tolerance(1e-12));
  // Context 3 was never followed by anything: the unigram distribution alone.
  const int32_t three = 3;
  BOOST_TEST(m->prob(&three, 1, 0) == 0.25, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(m->prob(nullptr, 0, 2) == 0.25, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(distributions_sum_to_one_for_random_contexts) {
  const size_t vocab = 60;
  const auto s = random_stream(6000, vocab, 11);
  Generator gen(5);
  for (size_t order = 2; order <= 5; ++order) {
    const auto kn = train_kneser_ney(s, {0, 5000}, vocab, order);
    const auto jm = train_jelinek_mercer(s, {0, 5000}, {5000, 6000}, vocab, order);
    for (int trial = 0; trial < 20; ++trial) {
      // Half the contexts from the stream (seen), half random (mostly unseen).
      std::vector<int32_t> context(order - 1);
      const size_t at = static_cast<size_t>(gen.below(5000 - order));
      for (size_t j = 0; j < context.size(); ++j)
        context[j] = trial % 2 ? s[at + j] : static_cast<int32_t>(gen.below(vocab));
      BOOST_TEST(std::abs(total_probability(*kn, context) - 1.0) < 1e-6, "KN order " << order);
      BOOST_TEST(std::abs(total_probability(*jm, context) - 1.0) < 1e-6, "JM order " << order);
    }
    // Shorter contexts at the start of a stream too.
    BOOST_TEST(std::abs(total_probability(*kn, {}) - 1.0) < 1e-6);
  }
}

BOOST_AUTO_TEST_CASE(trigrams_find_second_order_structure) {
  const size_t vocab = 30;
  const auto s = random_stream(60000, vocab, 3);
  const Range train{0, 50000}, test{50000, 60000};
  const double bigram = ngram_nll(*train_kneser_ney(s, train, vocab, 2), s, test);
  const double trigram = ngram_nll(*train_kneser_ney(s, train, vocab, 3), s, test);
  const double jm =
      ngram_nll(*train_jelinek_mercer(s, {0, 40000}, {40000, 50000}, vocab, 3), s, test);
  BOOST_TEST_MESSAGE("nats per token: KN bigram " << bigram << ", KN trigram " << trigram
                                                  << ", JM trigram " << jm);
  BOOST_TEST(trigram < bigram - 0.3);
  BOOST_TEST(jm < bigram - 0.3);
}

BOOST_AUTO_TEST_CASE(bad_arguments) {
  const std::vector<int32_t> s = {1, 2, 5};
  BOOST_CHECK_THROW(train_kneser_ney(s, {0, 3}, 4, 2), std::out_of_range);  // id 5 >= vocab 4
  BOOST_CHECK_THROW(train_kneser_ney(s, {0, 3}, 8, 1), std::invalid_argument);
  BOOST_CHECK_THROW(train_kneser_ney(s, {0, 3}, 8, 9), std::invalid_argument);
  BOOST_CHECK_THROW(train_jelinek_mercer(s, {0, 3}, {3, 3}, 8, 3), std::invalid_argument);
}

// Two tokens: model a gives them 0.8 and 0.1, model b 0.2 and 0.4. The likelihood's
// derivative 0.6 / (0.2 + 0.6 w) - 0.3 / (0.4 - 0.3 w) vanishes at w = 1/2, where the
// mixture gives 0.5 and 0.25.
BOOST_AUTO_TEST_CASE(mixture_weight_by_hand) {
  const std::vector<double> a = {-std::log(0.8), -std::log(0.1)};
  const std::vector<double> b = {-std::log(0.2), -std::log(0.4)};
  const double w = fit_mixture_weight(a, b);
  BOOST_TEST(w == 0.5, boost::test_tools::tolerance(1e-7));
  BOOST_TEST(mixture_nll(a, b, w) == -(std::log(0.5) + std::log(0.25)) / 2,
             boost::test_tools::tolerance(1e-12));
  // The ends are the models themselves.
  BOOST_TEST(mixture_nll(a, b, 1.0) == (a[0] + a[1]) / 2, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(mixture_nll(a, b, 0.0) == (b[0] + b[1]) / 2, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(fitted_mixture_weight_is_the_minimum) {
  Generator gen(11);
  std::vector<double> a(500), b(500);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = -std::log(0.01 + 0.98 * gen.uniform_double()),
    b[i] = -std::log(0.01 + 0.98 * gen.uniform_double());
  const double w = fit_mixture_weight(a, b), best = mixture_nll(a, b, w);
  BOOST_TEST(w > 0.0);
  BOOST_TEST(w < 1.0);
  for (double other : {0.0, 1.0, w - 0.01, w + 0.01, 0.5})
    BOOST_TEST(best <= mixture_nll(a, b, other) + 1e-12, "w " << w << " vs " << other);
  // A model that is better on every token takes all the weight.
  std::vector<double> worse = a;
  for (double& v : worse) v += 1.0;
  BOOST_TEST(fit_mixture_weight(a, worse) > 0.999);
  BOOST_CHECK_THROW(fit_mixture_weight(a, {1.0}), std::invalid_argument);
  BOOST_CHECK_THROW(mixture_nll({}, {}, 0.5), std::invalid_argument);
}

// Spelling out <unk>: the speller is counted on the training split's <unk> words only, each
// occurrence as its bytes and an end-of-word symbol (256); a split's cost is the sum of -log p
// of its <unk> words' symbols, each predicted from the stream before it. Checked against a
// Kneser-Ney model counted on that stream built by hand.
BOOST_AUTO_TEST_CASE(unknown_words_are_spelled_by_a_byte_model_of_the_training_unk) {
  const Vocabulary vocab = Vocabulary::build({"the", "the", "cat", "cat"}, 2);  // the, cat
  const Tokens train = {"the", "cat", "zap", "the", "zip", "cat", "zap"};
  const Tokens valid = {"the", "zap"}, test = {"cat", "zoo", "the", "zip"};
  const auto s = spell_unknown_words(train, valid, test, vocab, 3);
  BOOST_TEST_REQUIRE(s.has_value());
  BOOST_TEST(s->order == 3u);
  BOOST_TEST(s->train_unk == 3u);
  BOOST_TEST(s->valid.unk == 1u);
  BOOST_TEST(s->valid.bytes == 3u);
  BOOST_TEST(s->test.unk == 2u);
  BOOST_TEST(s->test.bytes == 6u);
  std::vector<int32_t> stream;
  for (const char* word : {"zap", "zip", "zap", "zap", "zoo", "zip"}) {
    for (const char* c = word; *c; ++c) stream.push_back(static_cast<unsigned char>(*c));
    stream.push_back(256);
  }
  const auto model = train_kneser_ney(stream, {0, 12}, 257, 3);
  const auto sum = [&](Range r) {
    double total = 0;
    for (double v : ngram_token_nll(*model, stream, r)) total += v;
    return total;
  };
  BOOST_TEST(s->valid.nll_sum == sum({12, 16}), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s->test.nll_sum == sum({16, 24}), boost::test_tools::tolerance(1e-12));
  // A spelling the speller was counted on costs less than an unseen one of the same length.
  const auto zoo = spell_unknown_words(train, {"zoo"}, {}, vocab, 3);
  const auto zap = spell_unknown_words(train, {"zap"}, {}, vocab, 3);
  BOOST_TEST(zap->valid.nll_sum < zoo->valid.nll_sum);
  BOOST_TEST(zoo->test.unk == 0u);
  BOOST_TEST(zoo->test.nll_sum == 0.0);
  // No training word is <unk>: nothing to count a speller on.
  BOOST_TEST(!spell_unknown_words({"the", "cat"}, valid, test, vocab, 3).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
