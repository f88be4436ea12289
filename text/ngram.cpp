#include "text/ngram.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace tg::text {

namespace {

// Up to 6 ids of 21 bits in one 128-bit key; each order has its own maps, so the length is
// implied.
using Key = unsigned __int128;
constexpr size_t kIdBits = 21, kMaxOrder = 6;

struct KeyHash {
  size_t operator()(Key k) const {
    const uint64_t lo = static_cast<uint64_t>(k), hi = static_cast<uint64_t>(k >> 64);
    return static_cast<size_t>((lo ^ (hi * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull >> 7);
  }
};
using CountMap = std::unordered_map<Key, uint32_t, KeyHash>;

Key pack(const int32_t* ids, size_t n) {
  Key k = 0;
  for (size_t i = 0; i < n; ++i) k = (k << kIdBits) | static_cast<uint32_t>(ids[i]);
  return k;
}

void check_arguments(const std::vector<int32_t>& stream, Range range, size_t vocab, size_t order) {
  if (order < 1 || order > kMaxOrder)
    throw std::invalid_argument("n-gram order " + std::to_string(order) + " is outside [1, " +
                                std::to_string(kMaxOrder) + "]");
  if (vocab == 0 || vocab >= (size_t{1} << kIdBits))
    throw std::invalid_argument("n-gram models need a vocabulary of 1 to 2^21 words, got " +
                                std::to_string(vocab));
  if (range.end > stream.size() || range.begin >= range.end)
    throw std::invalid_argument("n-gram training range is empty or outside the stream");
  for (size_t i = range.begin; i < range.end; ++i)
    if (stream[i] < 0 || static_cast<size_t>(stream[i]) >= vocab)
      throw std::out_of_range("token id " + std::to_string(stream[i]) + " at position " +
                              std::to_string(i) + " is outside the vocabulary of " +
                              std::to_string(vocab));
}

// Raw counts of every k-gram that ends inside `range` and starts inside it.
CountMap count_ngrams(const std::vector<int32_t>& stream, Range range, size_t k) {
  CountMap counts;
  for (size_t i = range.begin + k - 1; i < range.end; ++i) ++counts[pack(&stream[i + 1 - k], k)];
  return counts;
}

// Totals and counts of counts of the words following one context.
struct ContextStats {
  double total = 0;
  uint32_t n1 = 0, n2 = 0, n3 = 0;  // words seen once, twice, three or more times after it
};

class KneserNey : public NgramModel {
 public:
  KneserNey(const std::vector<int32_t>& stream, Range range, size_t vocab, size_t order)
      : order_(order), vocab_(vocab), levels_(order + 1) {
    // Top order: raw counts. Below: continuation counts, the number of distinct words seen
    // before each k-gram (the distinct (k+1)-grams ending with it).
    levels_[order].counts = count_ngrams(stream, range, order);
    for (size_t k = order - 1; k >= 1; --k) {
      CountMap& lower = levels_[k].counts;
      for (const auto& [key, count] : levels_[k + 1].counts)
        ++lower[key & ((Key{1} << (kIdBits * k)) - 1)];
    }
    for (size_t k = 1; k <= order; ++k) finish_level(k);
  }

  double prob(const int32_t* context, size_t context_size, int32_t word) const override {
    double p = 1.0 / static_cast<double>(vocab_);
    const size_t usable = std::min(context_size, order_ - 1);
    for (size_t k = 1; k <= usable + 1; ++k) {
      const Level& level = levels_[k];
      const int32_t* history = context + context_size - (k - 1);
      const ContextStats* stats = &level.root;
      if (k > 1) {
        auto it = level.contexts.find(pack(history, k - 1));
        if (it == level.contexts.end()) continue;  // unseen context: the lower order alone
        stats = &it->second;
      }
      const Key key =
          (k > 1 ? (pack(history, k - 1) << kIdBits) : Key{0}) | static_cast<uint32_t>(word);
      auto found = level.counts.find(key);
      const double c = found == level.counts.end() ? 0.0 : found->second;
      const double gamma =
          (level.d[1] * stats->n1 + level.d[2] * stats->n2 + level.d[3] * stats->n3) / stats->total;
      p = std::max(c - level.discount(c), 0.0) / stats->total + gamma * p;
    }
    return p;
  }
  size_t order() const override { return order_; }
  size_t vocab() const override { return vocab_; }

 private:
  struct Level {
    CountMap counts;  // k-gram -> count (raw at the top order, continuation below)
    std::unordered_map<Key, ContextStats, KeyHash> contexts;  // (k-1)-gram -> its followers
    ContextStats root;                                        // the empty context, k = 1
    std::array<double, 4> d{0, 0, 0, 0};                      // D1, D2, D3+ (d[0] unused)
    double discount(double c) const {
      return c <= 0 ? 0.0 : d[std::min<size_t>(static_cast<size_t>(c), 3)];
    }
  };

  void finish_level(size_t k) {
    Level& level = levels_[k];
    // Chen & Goodman's estimates from the counts of counts n1..n4, each discount kept within
    // [0, j] so that no count goes negative (tiny corpora can lack some counts of counts).
    double n[5] = {0, 0, 0, 0, 0};
    for (const auto& [key, c] : level.counts)
      if (c <= 4) ++n[c];
    const double y = n[1] > 0 ? n[1] / (n[1] + 2 * n[2]) : 0.0;
    for (int j = 1; j <= 3; ++j) {
      const double estimate = n[j] > 0 ? j - (j + 1) * y * n[j + 1] / n[j] : 0.5;
      level.d[static_cast<size_t>(j)] = std::clamp(estimate, 0.0, static_cast<double>(j));
    }
    const Key context_mask = (Key{1} << (kIdBits * (k - 1))) - 1;
    for (const auto& [key, c] : level.counts) {
      ContextStats& s = k == 1 ? level.root : level.contexts[(key >> kIdBits) & context_mask];
      s.total += c;
      (c == 1 ? s.n1 : c == 2 ? s.n2 : s.n3) += 1;
    }
  }

  size_t order_, vocab_;
  std::vector<Level> levels_;  // index k = 1..order
};

class JelinekMercer : public NgramModel {
 public:
  JelinekMercer(const std::vector<int32_t>& stream, Range train, Range held_out, size_t vocab,
                size_t order)
      : order_(order),
        vocab_(vocab),
        counts_(order + 1),
        totals_(order + 1),
        lambda_(kBuckets, std::vector<double>(order + 1, 1.0 / static_cast<double>(order + 1))) {
    for (size_t k = 1; k <= order; ++k) {
      counts_[k] = count_ngrams(stream, train, k);
      const Key mask = (Key{1} << (kIdBits * (k - 1))) - 1;
      for (const auto& [key, c] : counts_[k]) totals_[k][(key >> kIdBits) & mask] += c;
    }
    fit_weights(stream, held_out);
  }

  double prob(const int32_t* context, size_t context_size, int32_t word) const override {
    size_t bucket = 0;
    const std::vector<double> p = components(context, context_size, word, &bucket);
    double mixed = 0.0;
    for (size_t k = 0; k <= order_; ++k) mixed += lambda_[bucket][k] * p[k];
    return mixed;
  }
  size_t order() const override { return order_; }
  size_t vocab() const override { return vocab_; }

 private:
  // p[0] uniform, p[k] the k-gram maximum-likelihood estimate, or p[k-1] when the context
  // was never seen (so that each component sums to 1 and the mixture does too).
  // `bucket`: the weights to use, by how often the longest context was seen.
  std::vector<double> components(const int32_t* context, size_t context_size, int32_t word,
                                 size_t* bucket) const {
    std::vector<double> p(order_ + 1);
    p[0] = 1.0 / static_cast<double>(vocab_);
    *bucket = 0;
    for (size_t k = 1; k <= order_; ++k) {
      p[k] = p[k - 1];
      if (k - 1 > context_size) continue;
      const int32_t* history = context + context_size - (k - 1);
      const Key h = k > 1 ? pack(history, k - 1) : Key{0};
      auto total = totals_[k].find(h);
      if (total == totals_[k].end()) continue;
      if (k == order_)
        *bucket = std::min<size_t>(kBuckets - 1, 1 + static_cast<size_t>(std::log2(total->second)));
      auto found = counts_[k].find((h << kIdBits) | static_cast<uint32_t>(word));
      p[k] = (found == counts_[k].end() ? 0.0 : found->second) / total->second;
    }
    return p;
  }

  // EM for the mixture weights on held-out text (those that maximise its likelihood), one set
  // per bucket of the longest context's count, as deleted interpolation does: a context seen
  // often can trust its own estimate more.
  void fit_weights(const std::vector<int32_t>& stream, Range held_out) {
    std::vector<std::vector<double>> p;
    std::vector<size_t> buckets;
    for (size_t i = held_out.begin; i < held_out.end; ++i) {
      const size_t context = std::min(i, order_ - 1);
      size_t bucket = 0;
      p.push_back(components(stream.data() + i - context, context, stream[i], &bucket));
      buckets.push_back(bucket);
    }
    for (int iteration = 0; iteration < 50; ++iteration) {
      std::vector<std::vector<double>> expected(kBuckets, std::vector<double>(order_ + 1, 0.0));
      std::vector<double> tokens(kBuckets, 0.0);
      for (size_t t = 0; t < p.size(); ++t) {
        const auto& lambda = lambda_[buckets[t]];
        double mixed = 0.0;
        for (size_t k = 0; k <= order_; ++k) mixed += lambda[k] * p[t][k];
        for (size_t k = 0; k <= order_; ++k) expected[buckets[t]][k] += lambda[k] * p[t][k] / mixed;
        tokens[buckets[t]] += 1.0;
      }
      for (size_t b = 0; b < kBuckets; ++b)
        if (tokens[b] > 0)
          for (size_t k = 0; k <= order_; ++k) lambda_[b][k] = expected[b][k] / tokens[b];
    }
  }

  static constexpr size_t kBuckets = 16;

  size_t order_, vocab_;
  std::vector<CountMap> counts_;
  std::vector<std::unordered_map<Key, double, KeyHash>> totals_;  // context -> its count
  std::vector<std::vector<double>> lambda_;                       // [bucket][k]
};

}  // namespace

std::unique_ptr<NgramModel> train_kneser_ney(const std::vector<int32_t>& stream, Range range,
                                             size_t vocab, size_t order) {
  check_arguments(stream, range, vocab, order);
  if (order < 2)
    throw std::invalid_argument("Kneser-Ney needs order 2 or more, got " + std::to_string(order));
  return std::make_unique<KneserNey>(stream, range, vocab, order);
}

std::unique_ptr<NgramModel> train_jelinek_mercer(const std::vector<int32_t>& stream, Range train,
                                                 Range held_out, size_t vocab, size_t order) {
  check_arguments(stream, train, vocab, order);
  if (held_out.end > stream.size() || held_out.begin >= held_out.end)
    throw std::invalid_argument("deleted interpolation needs a non-empty held-out range");
  return std::make_unique<JelinekMercer>(stream, train, held_out, vocab, order);
}

std::vector<double> ngram_token_nll(const NgramModel& model, const std::vector<int32_t>& stream,
                                    Range range) {
  if (range.end > stream.size() || range.begin >= range.end)
    throw std::invalid_argument("evaluation range is empty or outside the stream");
  std::vector<double> nll(range.size());
  for (size_t i = range.begin; i < range.end; ++i) {
    const size_t context = std::min(i, model.order() - 1);
    nll[i - range.begin] = -std::log(model.prob(stream.data() + i - context, context, stream[i]));
  }
  return nll;
}

double ngram_nll(const NgramModel& model, const std::vector<int32_t>& stream, Range range) {
  const std::vector<double> nll = ngram_token_nll(model, stream, range);
  return std::accumulate(nll.begin(), nll.end(), 0.0) / static_cast<double>(nll.size());
}

double mixture_nll(const std::vector<double>& nll_a, const std::vector<double>& nll_b,
                   double weight_a) {
  if (nll_a.size() != nll_b.size() || nll_a.empty())
    throw std::invalid_argument("a mixture needs both models' losses on the same tokens");
  double sum = 0.0;
  for (size_t i = 0; i < nll_a.size(); ++i)
    sum -= std::log(weight_a * std::exp(-nll_a[i]) + (1.0 - weight_a) * std::exp(-nll_b[i]));
  return sum / static_cast<double>(nll_a.size());
}

double fit_mixture_weight(const std::vector<double>& nll_a, const std::vector<double>& nll_b) {
  if (nll_a.size() != nll_b.size() || nll_a.empty())
    throw std::invalid_argument("a mixture needs both models' losses on the same tokens");
  // EM: the new weight is the mean posterior of model a. The log-likelihood is concave in the
  // weight, so this climbs to the global optimum.
  double w = 0.5;
  for (int iteration = 0; iteration < 1000; ++iteration) {
    double posterior = 0.0;
    for (size_t i = 0; i < nll_a.size(); ++i) {
      const double a = w * std::exp(-nll_a[i]), b = (1.0 - w) * std::exp(-nll_b[i]);
      posterior += a / (a + b);
    }
    const double next = posterior / static_cast<double>(nll_a.size());
    const bool done = std::abs(next - w) < 1e-10;
    w = next;
    if (done) break;
  }
  return w;
}

std::optional<UnkSpelling> spell_unknown_words(const Tokens& train, const Tokens& valid,
                                               const Tokens& test, const Vocabulary& vocab,
                                               size_t order) {
  const int32_t unk = vocab.unk();
  if (unk < 0) throw std::invalid_argument("a BPE's vocabulary has no <unk> words to spell");
  constexpr int32_t kEndOfWord = 256;  // after a word's bytes 0..255
  std::vector<int32_t> stream;
  const auto spell = [&](const Tokens& words, SpellingCost& cost) {
    for (const std::string& word : words)
      if (vocab.id(word) == unk) {
        for (const unsigned char byte : word) stream.push_back(byte);
        stream.push_back(kEndOfWord);
        ++cost.unk;
        cost.bytes += word.size();
      }
  };
  UnkSpelling s;
  s.order = order;
  SpellingCost counted;
  spell(train, counted);
  s.train_unk = counted.unk;
  if (stream.empty()) return std::nullopt;
  const Range counted_on{0, stream.size()};
  spell(valid, s.valid);
  const size_t valid_end = stream.size();
  spell(test, s.test);
  const auto model = train_kneser_ney(stream, counted_on, kEndOfWord + 1, order);
  const auto nll_sum = [&](Range range) {
    if (range.begin == range.end) return 0.0;
    const std::vector<double> nll = ngram_token_nll(*model, stream, range);
    return std::accumulate(nll.begin(), nll.end(), 0.0);
  };
  s.valid.nll_sum = nll_sum({counted_on.end, valid_end});
  s.test.nll_sum = nll_sum({valid_end, stream.size()});
  return s;
}

}  // namespace tg::text
