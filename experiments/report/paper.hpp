// Bengio, Ducharme, Vincent and Jauvin (2003), "A Neural Probabilistic Language Model", JMLR 3,
// Table 1: the Brown corpus figures the report sets its runs beside. Every number of the paper
// the report prints comes from here.
#pragma once

#include <algorithm>
#include <optional>
#include <string_view>

#include "text/ngram.hpp"

namespace tg::experiments::report {

// An MLP row: n words of context, h hidden units, m features, direct connections from the
// features to the output; test perplexity alone and mixed with the interpolated trigram.
struct PaperMlp {
  const char* name;
  int n, hidden, features;
  bool direct;
  double test, mixture_test;
};
inline constexpr PaperMlp kPaperMlps[] = {{"mlp1", 5, 50, 60, true, 268, 257},
                                          {"mlp5", 5, 50, 30, true, 279, 259},
                                          {"mlp7", 3, 50, 30, true, 293, 270},
                                          {"mlp9", 5, 100, 30, false, 276, 252}};

// The paper's n-gram rows as build/bin/ngram's smoothings: back-off Kneser-Ney, and deleted
// interpolation (our jelinek-mercer).
struct PaperNgram {
  text::NgramSmoothing smoothing;
  size_t order;
  double test;
};
inline constexpr PaperNgram kPaperNgrams[] = {{text::NgramSmoothing::kneser_ney, 3, 323},
                                              {text::NgramSmoothing::kneser_ney, 4, 321},
                                              {text::NgramSmoothing::kneser_ney, 5, 321},
                                              {text::NgramSmoothing::jelinek_mercer, 3, 336}};
// Their best n-gram: class-based back-off.
inline constexpr double kPaperBestNgram = 312;

// The paper's best model: an MLP mixed with the trigram.
inline constexpr double kPaperBest =
    std::ranges::min(kPaperMlps, {}, &PaperMlp::mixture_test).mixture_test;

// The paper's test perplexity for an n-gram, if it reports one.
constexpr std::optional<double> paper_ngram_test(text::NgramSmoothing smoothing, size_t order) {
  for (const PaperNgram& p : kPaperNgrams)
    if (p.smoothing == smoothing && p.order == order) return p.test;
  return std::nullopt;
}

}  // namespace tg::experiments::report
