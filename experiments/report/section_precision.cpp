#include <algorithm>
#include <sstream>

#include "experiments/report/format.hpp"
#include "experiments/report/sections.hpp"

namespace tg::experiments::report {

namespace {

// bf16 costs "nothing" when it costs less than this share of the perplexity.
constexpr double kMargin = 0.01;

const char* verdict_text(experiments::Equivalence e) {
  switch (e) {
    case experiments::Equivalence::within:
      return "within 1%";
    case experiments::Equivalence::outside:
      return "outside 1%";
    case experiments::Equivalence::not_decided:
      break;
  }
  return "not decided";
}

}  // namespace

std::vector<PrecisionRow> precision_rows(const Study& fp32, const Study& bf16) {
  std::vector<PrecisionRow> rows;
  for (const auto& [key, by_seed] : bf16.files) {
    const auto reference = std::ranges::find(fp32.files, key, &RunFiles::value_type::first);
    if (reference == fp32.files.end()) continue;
    PrecisionRow row;
    row.mode = key.second;
    std::vector<double> shares;
    for (const auto& [seed, run] : by_seed) {
      const auto other = reference->second.find(seed);
      if (other == reference->second.end()) continue;
      const double a = other->second->at("test_ppl").get<double>();
      const double b = run->at("test_ppl").get<double>();
      shares.push_back(b / a - 1);
      row.fp32 += a;
      row.bf16 += b;
    }
    if (shares.empty()) continue;
    row.fp32 /= static_cast<double>(shares.size());
    row.bf16 /= static_cast<double>(shares.size());
    // Two one-sided tests at 5% each: the 90% interval.
    row.change = experiments::t_interval(shares, 0.10);
    row.verdict = experiments::equivalence(row.change, kMargin);
    rows.push_back(row);
  }
  return rows;
}

std::string precision_section(const std::vector<PrecisionRow>& rows) {
  if (rows.empty()) return "";
  std::ostringstream out;
  out << "## 1d. bf16 products against fp32\n\n"
         "`converged/gpt_bf16/`: section 1's GPT trained with `--precision bf16` (every matrix "
         "product with bf16 inputs and fp32 sums; everything else fp32), against the fp32 runs "
         "of the same mode and seed. Per seed, the change in test perplexity; bf16 costs less "
         "than 1% when the 90% t interval of the changes lies wholly within ±1% (two one-sided "
         "tests at 5%), and more when it lies wholly outside.\n\n"
         "| mode | seeds | fp32 test ppl | bf16 test ppl | change (90% interval) | verdict |\n"
         "|---|---:|---:|---:|---|---|\n";
  for (const PrecisionRow& r : rows)
    out << "| " << r.mode << " | " << r.change.n << " | " << fixed(r.fp32, 1) << " | "
        << fixed(r.bf16, 1) << " | " << signed_percent(r.change.mean) << " ("
        << signed_percent(r.change.low) << " to " << signed_percent(r.change.high) << ") | "
        << verdict_text(r.verdict) << " |\n";
  return out.str() + "\n";
}

std::string precision_conclusion(const std::vector<PrecisionRow>& rows) {
  if (rows.empty()) return "";
  std::ostringstream out;
  out << "- **bf16 products** (section 1d), test perplexity against fp32, seed by seed:\n";
  for (const PrecisionRow& r : rows)
    out << "  - " << r.mode << ": " << signed_percent(r.change.mean) << " (90% interval "
        << signed_percent(r.change.low) << " to " << signed_percent(r.change.high) << "; "
        << r.change.n << (r.change.n == 1 ? " seed" : " seeds") << "): " << verdict_text(r.verdict)
        << "\n";
  return out.str();
}

}  // namespace tg::experiments::report
