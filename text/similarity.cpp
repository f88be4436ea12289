#include "text/similarity.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <xtensor-blas/xblas.hpp>
#include <xtensor/xadapt.hpp>

namespace tg::text {

namespace {
// Row-major views of raw buffers, for xtensor-blas's products (no copies).
auto matrix_view(const float* data, size_t rows, size_t cols) {
  return xt::adapt(const_cast<float*>(data), rows * cols, xt::no_ownership(),
                   std::array<size_t, 2>{rows, cols});
}
auto vector_view(const float* data, size_t n) {
  return xt::adapt(const_cast<float*>(data), n, xt::no_ownership(), std::array<size_t, 1>{n});
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int lookup(const std::vector<std::pair<std::string, int>>& table, const std::string& key) {
  auto it = std::lower_bound(table.begin(), table.end(), std::make_pair(key, -1));
  return it != table.end() && it->first == key ? it->second : -1;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean_rank =
        (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;  // ties share
    for (size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}
}  // namespace

VectorIndex::VectorIndex(std::vector<std::string> words, const Tensor& matrix)
    : words_(std::move(words)), dim_(matrix.dim() == 2 ? matrix.size(1) : 0) {
  if (matrix.dim() != 2 || matrix.size(0) != words_.size())
    throw std::invalid_argument("VectorIndex: " + std::to_string(words_.size()) +
                                " words but matrix " + to_string(matrix.shape()));
  unit_.assign(matrix.data(), matrix.data() + matrix.numel());
  for (size_t r = 0; r < words_.size(); ++r) {
    float* row = unit_.data() + r * dim_;
    double norm = 0.0;
    for (size_t j = 0; j < dim_; ++j) norm += static_cast<double>(row[j]) * row[j];
    const float inv = norm > 0.0 ? static_cast<float>(1.0 / std::sqrt(norm)) : 0.0f;
    for (size_t j = 0; j < dim_; ++j) row[j] *= inv;
    exact_.emplace_back(words_[r], static_cast<int>(r));
    lower_.emplace_back(lower(words_[r]), static_cast<int>(r));
  }
  std::sort(exact_.begin(), exact_.end());
  // Stable on rows so that each lower-cased key keeps its first (most frequent) row.
  std::stable_sort(lower_.begin(), lower_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  lower_.erase(std::unique(lower_.begin(), lower_.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               lower_.end());
}

int VectorIndex::find(const std::string& word, bool case_insensitive) const {
  return case_insensitive ? lookup(lower_, lower(word)) : lookup(exact_, word);
}

float VectorIndex::cosine(int a, int b) const {
  float result = 0.0f;
  xt::blas::dot(vector_view(row(a), dim_), vector_view(row(b), dim_), result);
  return result;
}

std::vector<std::pair<int, float>> VectorIndex::nearest(const float* query, size_t k,
                                                        const std::vector<int>& exclude) const {
  std::vector<float> scores(words_.size());
  auto result = vector_view(scores.data(), scores.size());
  xt::blas::gemv(matrix_view(unit_.data(), words_.size(), dim_), vector_view(query, dim_), result);
  std::vector<std::pair<int, float>> all;
  for (size_t r = 0; r < scores.size(); ++r)
    if (std::find(exclude.begin(), exclude.end(), static_cast<int>(r)) == exclude.end())
      all.emplace_back(static_cast<int>(r), scores[r]);
  k = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<long>(k), all.end(),
                    [](const auto& a, const auto& b) {
                      return a.second != b.second ? a.second > b.second : a.first < b.first;
                    });
  all.resize(k);
  return all;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return 0.0;
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n,
               my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

std::vector<std::string> word_names_of_subwords(const std::vector<std::string>& spellings) {
  const std::string space = "\u0120";  // "Ġ": how GPT-2's files write the byte ' '
  std::vector<std::string> names;
  names.reserve(spellings.size());
  for (const std::string& s : spellings)
    names.push_back(s.size() > space.size() && s.starts_with(space) ? s.substr(space.size())
                                                                    : "##" + s);
  return names;
}

SimilarityScore evaluate_similarity(const VectorIndex& index, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open word-pair file");
  SimilarityScore score;
  std::vector<double> human, model;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string a, b, value;
    if (!std::getline(fields, a, '\t') || !std::getline(fields, b, '\t') ||
        !std::getline(fields, value, '\t'))
      throw std::runtime_error(path + ":" + std::to_string(line_no) +
                               ": expected 'word1<TAB>word2<TAB>score'");
    double s = 0.0;
    size_t used = 0;
    try {
      s = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size() || !std::isfinite(s))
      throw std::runtime_error(path + ":" + std::to_string(line_no) + ": score '" + value +
                               "' is not a finite number");
    ++score.pairs;
    const int ra = index.find(a), rb = index.find(b);
    if (ra < 0 || rb < 0) continue;
    ++score.used;
    human.push_back(s);
    model.push_back(index.cosine(ra, rb));
  }
  if (score.pairs == 0) throw std::runtime_error(path + ": no word pairs in the file");
  score.spearman = score.measured() ? spearman(human, model) : std::nan("");
  return score;
}

AnalogyScore evaluate_analogies(const VectorIndex& index, const std::string& path,
                                size_t restrict_vocab) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open analogy file");
  const size_t limit = std::min(restrict_vocab, index.size());
  struct Question {
    int a, b, c, d;
  };
  std::vector<Question> questions;
  AnalogyScore score;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == ':') continue;
    std::istringstream fields(line);
    std::string w[4], extra;
    if (!(fields >> w[0] >> w[1] >> w[2] >> w[3]) || (fields >> extra))
      throw std::runtime_error(path + ":" + std::to_string(line_no) + ": expected four words");
    ++score.questions;
    int r[4];
    bool known = true;
    for (int i = 0; i < 4; ++i) {
      r[i] = index.find(w[i]);
      known = known && r[i] >= 0 && static_cast<size_t>(r[i]) < limit;
    }
    if (known) questions.push_back({r[0], r[1], r[2], r[3]});
  }
  score.used = questions.size();
  if (questions.empty()) return score;
  const size_t dim = index.dim();
  size_t correct = 0;
  const size_t batch = 512;
  std::vector<float> query(batch * dim), sims(batch * limit);
  for (size_t start = 0; start < questions.size(); start += batch) {
    const size_t n = std::min(batch, questions.size() - start);
    for (size_t q = 0; q < n; ++q) {
      const Question& x = questions[start + q];
      for (size_t j = 0; j < dim; ++j)
        query[q * dim + j] = index.row(x.b)[j] - index.row(x.a)[j] + index.row(x.c)[j];
    }
    // sims[q, r] = query[q] . row[r] for the first `limit` rows.
    auto result = matrix_view(sims.data(), n, limit);
    xt::blas::gemm(matrix_view(query.data(), n, dim), matrix_view(index.row(0), limit, dim), result,
                   false, true);
    for (size_t q = 0; q < n; ++q) {
      const Question& x = questions[start + q];
      int best = -1;
      float best_score = -INFINITY;
      for (size_t r = 0; r < limit; ++r) {
        const int row = static_cast<int>(r);
        if (row == x.a || row == x.b || row == x.c) continue;
        if (sims[q * limit + r] > best_score) best_score = sims[q * limit + r], best = row;
      }
      if (best == x.d) ++correct;
    }
  }
  score.accuracy = static_cast<double>(correct) / static_cast<double>(questions.size());
  return score;
}

}  // namespace tg::text
