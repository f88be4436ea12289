// word2vec: sampling distributions, the update's gradient against autograd, a planted-pair
// training run, determinism, and the evaluation metrics.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "autograd/autograd.hpp"
#include "text/similarity.hpp"
#include "text/word2vec.hpp"

using namespace tg;
using namespace tg::text;

BOOST_AUTO_TEST_SUITE(text_word2vec)

BOOST_AUTO_TEST_CASE(negative_sampling_follows_unigram_to_the_075) {
  const std::vector<size_t> counts = {1000, 100, 10, 1};
  const UnigramSampler sampler(counts);
  double z = 0;
  for (size_t c : counts) z += std::pow(c, 0.75);
  Generator gen(3);
  std::vector<size_t> hits(4, 0);
  const size_t draws = 400000;
  for (size_t i = 0; i < draws; ++i) ++hits[sampler.draw(gen.next_u64())];
  for (size_t w = 0; w < 4; ++w) {
    const double want = std::pow(counts[w], 0.75) / z;
    BOOST_TEST(sampler.probability(static_cast<uint32_t>(w)) == want,
               boost::test_tools::tolerance(1e-9));
    const double got = static_cast<double>(hits[w]) / draws;
    BOOST_TEST(std::fabs(got - want) < 4 * std::sqrt(want * (1 - want) / draws) + 1e-4,
               "word " << w << ": " << got << " vs " << want);
  }
}

BOOST_AUTO_TEST_CASE(subsampling_keep_probability) {
  // The original's formula: (sqrt(c / (s T)) + 1) * (s T) / c, capped at 1 by the caller.
  BOOST_TEST(keep_probability(1000, 1000000, 1e-3) == (std::sqrt(1.0) + 1.0) * 1.0,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(keep_probability(100000, 1000000, 1e-3) < 0.2);
  BOOST_TEST(keep_probability(5, 1000000, 1e-3) > 1.0);  // rare words are always kept
  BOOST_TEST(keep_probability(100000, 1000000, 0.0) == 1.0);
}

// The hand-written update must equal -alpha times the gradient that autograd computes for
// L = -log s(u_pos . v) - sum log s(-u_neg . v).
BOOST_AUTO_TEST_CASE(sgns_update_is_sgd_on_the_autograd_gradient) {
  const size_t dim = 8, rows = 4;
  Generator gen(12);
  Tensor v = randn({1, dim}, gen, 0.5f, true), u = randn({rows, dim}, gen, 0.5f, true);
  const std::vector<int> labels = {1, 0, 0, 0};
  Tensor sign = Tensor::from_vector({1, rows}, {1, -1, -1, -1});
  Tensor loss = -sum(log(sigmoid(matmul(v, transpose(u, 0, 1)) * sign)));
  backward(loss);
  std::vector<float> vin(v.data(), v.data() + dim), uout(u.data(), u.data() + rows * dim),
      scratch(dim);
  std::vector<float*> out_rows;
  for (size_t r = 0; r < rows; ++r) out_rows.push_back(uout.data() + r * dim);
  const float alpha = 0.1f;
  const float hand_loss =
      sgns_update(vin.data(), out_rows.data(), labels.data(), rows, dim, alpha, scratch.data());
  BOOST_TEST(hand_loss == loss.item(), boost::test_tools::tolerance(1e-5f));
  for (size_t j = 0; j < dim; ++j)
    BOOST_TEST(vin[j] - v.data()[j] == -alpha * v.grad().data()[j],
               boost::test_tools::tolerance(1e-4f));
  for (size_t i = 0; i < rows * dim; ++i)
    BOOST_TEST(uout[i] - u.data()[i] == -alpha * u.grad().data()[i],
               boost::test_tools::tolerance(1e-4f));
}

// "alpha" and "beta" appear in exactly the same contexts and nowhere else: after training
// each is the other's nearest neighbour, for both architectures.
BOOST_AUTO_TEST_CASE(planted_pair_become_neighbours_and_runs_are_deterministic) {
  Generator gen(5);
  const std::vector<std::string> fillers = {"a", "b", "c", "d", "e", "f",
                                            "g", "h", "i", "j", "k", "l"};
  Tokens corpus;
  for (int i = 0; i < 6000; ++i) {
    const bool planted = gen.below(4) == 0;
    const std::string left = planted ? "x" : fillers[gen.below(fillers.size())];
    const std::string right = planted ? "y" : fillers[gen.below(fillers.size())];
    corpus.insert(
        corpus.end(),
        {left, planted ? (gen.below(2) ? "alpha" : "beta") : fillers[gen.below(fillers.size())],
         right});
  }
  for (bool cbow : {false, true}) {
    Word2VecOptions o;
    o.size = 16;
    o.window = 1;
    o.iter = 5;
    o.min_count = 1;
    o.sample = 0;
    o.cbow = cbow;
    o.seed = 9;
    const Word2VecResult r = train_word2vec(corpus, o);
    const VectorIndex index(r.words, r.input);
    for (const auto& [w, partner] : {std::pair{"alpha", "beta"}, std::pair{"beta", "alpha"}}) {
      const int row = index.find(w, false);
      const auto nn = index.nearest(index.row(row), 1, {row});
      BOOST_TEST(index.word(nn[0].first) == partner, (cbow ? "cbow " : "skip-gram ")
                                                         << w << " -> " << index.word(nn[0].first));
    }
    const Word2VecResult again = train_word2vec(corpus, o);
    BOOST_TEST(std::memcmp(again.input.data(), r.input.data(), r.input.numel() * sizeof(float)) ==
               0);

    // Two threads: each works on private copies of the frequent words' output rows (here all of
    // them) and publishes them; what it learned must reach the shared tables.
    o.threads = 2;
    const Word2VecResult hogwild = train_word2vec(corpus, o);
    const VectorIndex shared(hogwild.words, hogwild.input);
    const int alpha = shared.find("alpha", false);
    BOOST_TEST(shared.word(shared.nearest(shared.row(alpha), 1, {alpha})[0].first) == "beta");
    for (size_t w = 0; w < hogwild.words.size(); ++w) {
      const float* row = hogwild.output.data() + w * o.size;
      BOOST_TEST(std::any_of(row, row + o.size, [](float x) { return x != 0.0f; }),
                 "output row of '" << hogwild.words[w] << "' never published");
    }
  }
  BOOST_CHECK_THROW(train_word2vec({"a", "b"}, Word2VecOptions{}),
                    std::invalid_argument);  // nothing reaches min_count
}

BOOST_AUTO_TEST_CASE(spearman_with_ties) {
  BOOST_TEST(spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == 1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(spearman({1, 2, 3, 4}, {4, 3, 2, 1}) == -1.0, boost::test_tools::tolerance(1e-12));
  // scipy.stats.spearmanr([1,2,2,3], [1,3,2,4]) = 0.9486832980505138
  BOOST_TEST(spearman({1, 2, 2, 3}, {1, 3, 2, 4}) == 0.9486832980505138,
             boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(similarity_and_analogy_evaluation) {
  // 2-D vectors: king - man + woman = queen exactly.
  const Tensor m = Tensor::from_vector({5, 2}, {1, 1, 1, 0, 0, 1, 2, 1, 2, 0.9f});
  const VectorIndex index({"King", "man", "woman", "queen", "prince"}, m);
  BOOST_TEST(index.find("king") == 0);  // case-insensitive
  BOOST_TEST(index.find("king", false) == -1);
  const std::string dir = std::string(TAPEGRAD_FIXTURES);
  const auto a = evaluate_analogies(index, dir + "/analogy_fixture.txt");
  BOOST_TEST(a.questions == 2u);
  BOOST_TEST(a.used == 1u);  // the second question has an unknown word
  BOOST_TEST(a.accuracy == 1.0);
  const auto s = evaluate_similarity(index, dir + "/wordpairs_fixture.tsv");
  BOOST_TEST(s.pairs == 4u);
  BOOST_TEST(s.used == 3u);
  BOOST_TEST(s.oov_ratio() == 0.25);
  // Three known pairs rank nothing: no score rather than a correlation of +-1 by chance.
  BOOST_TEST(!s.measured());
  BOOST_TEST(std::isnan(s.spearman));
  // All ten pairs of the five words, scored by the vectors' own cosine: measured, and 1.
  const std::vector<std::string> words = {"King", "man", "woman", "queen", "prince"};
  const std::string ten = (std::filesystem::temp_directory_path() / "tg_ten_pairs.tsv").string();
  {
    std::ofstream out(ten);
    for (int a = 0; a < 5; ++a)
      for (int b = a + 1; b < 5; ++b)
        out << words[a] << "\t" << words[b] << "\t" << index.cosine(a, b) << "\n";
  }
  const auto all = evaluate_similarity(index, ten);
  BOOST_TEST(all.used == SimilarityScore::kMinPairs);
  BOOST_TEST(all.measured());
  BOOST_TEST(all.spearman == 1.0, boost::test_tools::tolerance(1e-12));
  std::filesystem::remove(ten);
}

BOOST_AUTO_TEST_SUITE_END()
