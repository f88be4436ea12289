#include "text/word2vec.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace tg::text {

namespace {

// The inner loops are inlined into update functions compiled for AVX-512, AVX2 and baseline
// x86-64, one picked at load time (target_clones), so the binary stays portable and a call per
// 128-float row does not go through the dispatch. `omp simd` (with -fopenmp-simd, no OpenMP
// runtime) lets the compiler vectorise the reduction, which strict IEEE order would otherwise
// forbid.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TG_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TG_MULTIVERSION
#endif
// Inlined into each clone, so compiled for its instructions (a call would reach a baseline copy).
#define TG_INLINE [[gnu::always_inline]] inline

TG_INLINE float dot(const float* a, const float* b, size_t n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

TG_INLINE void axpy(float alpha, const float* x, float* y, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

TG_INLINE float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

// One negative-sampling update of `input_row` against `rows` output rows (the first the
// positive): each output row moves along the input row and the input row, once all are done,
// along their sum (accumulated in `scratch`). The two updates of an output row's pass share its
// loads; each element sees the same operations in the same order as in two separate passes.
// With the loss (-log s(u_pos . v) - sum log s(-u_neg . v), before the update) only when asked:
// its logarithms cost as much as the products.
template <bool kLoss>
TG_INLINE float negative_sampling_step(float* input_row, float* const* output_rows,
                                       const int* labels, size_t rows, size_t dim, float alpha,
                                       float* scratch) {
  std::fill(scratch, scratch + dim, 0.0f);
  float loss = 0.0f;
  for (size_t r = 0; r < rows; ++r) {
    float* out = output_rows[r];
    const float p = sigmoid(dot(input_row, out, dim));
    if constexpr (kLoss) loss -= labels[r] ? std::log(p) : std::log1p(-p);
    const float g = (static_cast<float>(labels[r]) - p) * alpha;
#pragma omp simd
    for (size_t i = 0; i < dim; ++i) {
      scratch[i] += g * out[i];
      out[i] += g * input_row[i];
    }
  }
  axpy(1.0f, scratch, input_row, dim);
  return loss;
}

TG_MULTIVERSION void skip_gram_step(float* input_row, float* const* output_rows, const int* labels,
                                    size_t rows, size_t dim, float alpha, float* scratch) {
  negative_sampling_step<false>(input_row, output_rows, labels, rows, dim, alpha, scratch);
}

// CBOW: the mean of the context rows predicts the center word; each context row then moves by
// the update the mean received.
TG_MULTIVERSION void cbow_step(float* const* context_rows, size_t context,
                               float* const* output_rows, const int* labels, size_t rows,
                               size_t dim, float alpha, float* mean, float* update) {
  std::fill(mean, mean + dim, 0.0f);
  for (size_t c = 0; c < context; ++c) axpy(1.0f, context_rows[c], mean, dim);
  for (size_t i = 0; i < dim; ++i) mean[i] /= static_cast<float>(context);
  std::fill(update, update + dim, 0.0f);
  for (size_t r = 0; r < rows; ++r) {
    const float g =
        (static_cast<float>(labels[r]) - sigmoid(dot(mean, output_rows[r], dim))) * alpha;
    axpy(g, output_rows[r], update, dim);
    axpy(g, mean, output_rows[r], dim);
  }
  for (size_t c = 0; c < context; ++c) axpy(1.0f, update, context_rows[c], dim);
}

// Asks for a row's cache lines ahead of its use.
void prefetch_row(const float* row, size_t dim) {
  for (size_t i = 0; i < dim; i += 64 / sizeof(float)) __builtin_prefetch(row + i);
}

constexpr size_t kSentence = 1000;  // the original's MAX_SENTENCE_LENGTH
// Output rows of the most frequent words each thread keeps private on several threads.
constexpr size_t kHotRows = 1024;

// A thread's private copy of a table's first `rows` rows: row() points into the copy for those
// and into the shared table for the rest; publish() adds the copy's change since the last
// publish to the shared rows (racing other threads like any Hogwild update) and reloads them.
class PrivateRows {
 public:
  PrivateRows(float* table, size_t rows, size_t dim)
      : table_(table), rows_(rows), dim_(dim), copy_(rows * dim), start_(rows * dim) {}
  float* row(size_t word) {
    return word < rows_ ? copy_.data() + word * dim_ : table_ + word * dim_;
  }
  void publish() {
    for (size_t i = 0; i < copy_.size(); ++i) {
      const float merged = table_[i] + (copy_[i] - start_[i]);
      table_[i] = copy_[i] = start_[i] = merged;
    }
  }

 private:
  float* table_;
  size_t rows_, dim_;
  std::vector<float> copy_, start_;  // the private rows, and what they held at the last publish
};

// The original's linear congruential generator: cheap, and per thread.
struct Lcg {
  uint64_t state;
  uint64_t next() { return state = state * 25214903917ull + 11; }
  float uniform() { return static_cast<float>((next() >> 16) & 0xFFFF) / 65536.0f; }
};

}  // namespace

UnigramSampler::UnigramSampler(const std::vector<size_t>& counts, double power) {
  const size_t n = counts.size();
  if (n == 0) throw std::invalid_argument("UnigramSampler: empty vocabulary");
  probability_.resize(n);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i)
    total += probability_[i] = std::pow(static_cast<double>(counts[i]), power);
  for (auto& p : probability_) p /= total;
  // Vose's alias method.
  threshold_.assign(n, 1.0f);
  alias_.resize(n);
  std::iota(alias_.begin(), alias_.end(), 0u);
  std::vector<double> scaled(n);
  std::vector<uint32_t> small, large;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = probability_[i] * static_cast<double>(n);
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back(), l = large.back();
    small.pop_back();
    threshold_[s] = static_cast<float>(scaled[s]);
    alias_[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
}

uint32_t UnigramSampler::draw(uint64_t random) const {
  // Mix first: the low bits of an LCG have short periods.
  random ^= random >> 33;
  random *= 0xFF51AFD7ED558CCDull;
  random ^= random >> 33;
  const uint32_t column = static_cast<uint32_t>(((random >> 32) * threshold_.size()) >> 32);
  const float coin = static_cast<float>(random & 0xFFFFFF) / 16777216.0f;
  return coin < threshold_[column] ? column : alias_[column];
}

double keep_probability(size_t count, size_t total, double sample) {
  if (sample <= 0.0) return 1.0;
  const double threshold = sample * static_cast<double>(total);
  const double c = static_cast<double>(count);
  return (std::sqrt(c / threshold) + 1.0) * threshold / c;
}

TG_MULTIVERSION float sgns_update(float* input_row, float* const* output_rows, const int* labels,
                                  size_t rows, size_t dim, float alpha, float* scratch) {
  return negative_sampling_step<true>(input_row, output_rows, labels, rows, dim, alpha, scratch);
}

Word2VecResult train_word2vec(const Tokens& tokens, const Word2VecOptions& o,
                              const std::function<void(const Word2VecProgress&)>& progress) {
  if (o.size == 0 || o.window == 0 || o.iter == 0 || o.threads == 0)
    throw std::invalid_argument("word2vec: size, window, iter and threads must be positive");
  const float start_alpha = o.alpha > 0.0f ? o.alpha : (o.cbow ? 0.05f : 0.025f);

  // Vocabulary: most frequent first, ties by word (deterministic).
  std::unordered_map<std::string, size_t> freq;
  for (const auto& t : tokens) ++freq[t];
  std::vector<std::pair<std::string, size_t>> kept;
  for (const auto& [w, c] : freq)
    if (c >= o.min_count) kept.emplace_back(w, c);
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (kept.empty())
    throw std::invalid_argument(
        "word2vec: no word occurs at least min_count=" + std::to_string(o.min_count) +
        " times in the " + std::to_string(tokens.size()) + "-token corpus");
  Word2VecResult result;
  std::unordered_map<std::string, int32_t> index;
  for (const auto& [w, c] : kept) {
    index.emplace(w, static_cast<int32_t>(result.words.size()));
    result.words.push_back(w);
    result.counts.push_back(c);
  }
  std::vector<int32_t> corpus;  // in-vocabulary words only, as the original reads them
  corpus.reserve(tokens.size());
  for (const auto& t : tokens)
    if (auto it = index.find(t); it != index.end()) corpus.push_back(it->second);
  result.corpus_words = corpus.size();

  const size_t vocab = result.words.size(), dim = o.size;
  result.input = Tensor::empty({vocab, dim});
  result.output = Tensor::zeros({vocab, dim});
  {
    Lcg init{o.seed};
    for (size_t i = 0; i < vocab * dim; ++i)
      result.input.data()[i] = (init.uniform() - 0.5f) / static_cast<float>(dim);
  }
  const UnigramSampler sampler(result.counts);
  std::vector<float> keep(vocab);
  for (size_t w = 0; w < vocab; ++w)
    keep[w] = static_cast<float>(keep_probability(result.counts[w], corpus.size(), o.sample));

  float* syn0 = result.input.data();
  float* syn1 = result.output.data();
  const double total_words = static_cast<double>(o.iter) * static_cast<double>(corpus.size());
  std::atomic<long> words_done{0};
  const auto start = std::chrono::steady_clock::now();
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  auto worker = [&](size_t thread) {
    Lcg rng{o.seed + thread * 0x9E3779B97F4A7C15ull};
    std::vector<float> neu1(dim), neu1e(dim);
    std::vector<float*> rows(o.negative + 1), context;
    // Skip-gram: each pair of the window's input row, target rows and their number.
    std::vector<float*> pair_rows(2 * o.window * (o.negative + 1)), pair_inputs(2 * o.window);
    std::vector<size_t> pair_targets(2 * o.window);
    std::vector<int> labels(o.negative + 1, 0);
    labels[0] = 1;
    std::vector<int32_t> sentence;
    // With several threads, every thread keeps writing the output rows of the most frequent
    // words (the usual negatives), and each write moves the row's cache lines between cores. So
    // each thread updates private copies of those rows and adds its change to the shared table
    // after every sentence: the other threads' updates reach it one sentence late (Hogwild's
    // staleness, bounded). One thread uses the shared rows directly. (Private input rows were
    // measured too: slower, their words are sub-sampled and rarely shared.)
    PrivateRows hot_output(syn1, o.threads > 1 ? std::min(vocab, kHotRows) : 0, dim);
    const size_t begin = corpus.size() * thread / o.threads,
                 end = corpus.size() * (thread + 1) / o.threads;
    auto last_report = std::chrono::steady_clock::now();
    for (size_t epoch = 0; epoch < o.iter; ++epoch) {
      size_t pos = begin;
      while (pos < end) {
        // Read a sentence of up to kSentence words, dropping frequent words at random.
        const size_t sentence_start = pos, read_end = std::min(end, pos + kSentence);
        sentence.clear();
        for (; pos < read_end; ++pos) {
          const int32_t w = corpus[pos];
          if (keep[w] < 1.0f && keep[w] < rng.uniform()) continue;
          sentence.push_back(w);
        }
        words_done.fetch_add(static_cast<long>(read_end - sentence_start),
                             std::memory_order_relaxed);
        hot_output.publish();
        const double fraction =
            static_cast<double>(words_done.load(std::memory_order_relaxed)) / (total_words + 1.0);
        const float alpha =
            std::max(start_alpha * 1e-4f, start_alpha * static_cast<float>(1.0 - fraction));

        for (size_t i = 0; i < sentence.size(); ++i) {
          const size_t shrink = rng.next() % o.window;  // dynamic window: 1..window
          const size_t lo = i >= o.window - shrink ? i - (o.window - shrink) : 0;
          const size_t hi = std::min(sentence.size() - 1, i + o.window - shrink);
          const int32_t center = sentence[i];
          // The positive row, then the negatives; a negative that draws the positive word is
          // skipped, as in the original. Returns the number of rows.
          auto fill_targets = [&](int32_t positive, float** out) {
            out[0] = hot_output.row(static_cast<size_t>(positive));
            size_t n = 1;
            for (size_t k = 0; k < o.negative; ++k) {
              const uint32_t neg = sampler.draw(rng.next());
              if (static_cast<int32_t>(neg) == positive) continue;
              out[n++] = hot_output.row(neg);
            }
            return n;
          };
          if (o.cbow) {
            context.clear();
            for (size_t j = lo; j <= hi; ++j)
              if (j != i) context.push_back(syn0 + static_cast<size_t>(sentence[j]) * dim);
            if (context.empty()) continue;
            const size_t targets = fill_targets(center, rows.data());
            cbow_step(context.data(), context.size(), rows.data(), labels.data(), targets, dim,
                      alpha, neu1.data(), neu1e.data());
          } else {
            // As the original: each context word's vector predicts the center word. Every
            // pair's rows are drawn first (the same draws in the same order) and fetched while
            // the first pairs compute: the rows are random, and the tables outgrow the caches.
            size_t pairs = 0;
            for (size_t j = lo; j <= hi; ++j) {
              if (j == i) continue;
              float** targets = pair_rows.data() + pairs * (o.negative + 1);
              pair_inputs[pairs] = syn0 + static_cast<size_t>(sentence[j]) * dim;
              pair_targets[pairs] = fill_targets(center, targets);
              prefetch_row(pair_inputs[pairs], dim);
              for (size_t r = pairs == 0 ? 0 : 1; r < pair_targets[pairs]; ++r)
                prefetch_row(targets[r], dim);
              ++pairs;
            }
            for (size_t p = 0; p < pairs; ++p)
              skip_gram_step(pair_inputs[p], pair_rows.data() + p * (o.negative + 1), labels.data(),
                             pair_targets[p], dim, alpha, neu1e.data());
          }
        }
        if (thread == 0 && progress) {
          const auto now = std::chrono::steady_clock::now();
          if (now - last_report > std::chrono::milliseconds(100)) {
            last_report = now;
            const double elapsed = seconds_since_start();
            progress({fraction, alpha,
                      static_cast<double>(words_done.load()) / std::max(elapsed, 1e-9), elapsed});
          }
        }
      }
    }
    hot_output.publish();
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < o.threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& t : pool) t.join();
  result.seconds = seconds_since_start();
  result.words_per_s = total_words / std::max(result.seconds, 1e-9);
  if (progress) progress({1.0, start_alpha * 1e-4f, result.words_per_s, result.seconds});
  return result;
}

}  // namespace tg::text
