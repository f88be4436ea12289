#include "text/lm_data.hpp"

#include <cstdio>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "base/hash.hpp"

namespace tg::text {

Tokens LMData::train_tokens() const {
  Tokens out;
  out.reserve(train.size());
  for (size_t i = train.begin; i < train.end; ++i) out.push_back(vocab.word(stream[i]));
  return out;
}

LMData load_lm_data(const LMDataOptions& o) {
  if (!(o.train_fraction > 0.0 && o.train_fraction <= 1.0))
    throw std::invalid_argument("--train-fraction " + std::to_string(o.train_fraction) +
                                " is not in (0, 1]");
  Tokens tokens;
  Splits splits;
  std::string source;
  if (!o.corpus_file.empty()) {
    tokens = read_plain_file(o.corpus_file);
    if (tokens.empty()) throw std::invalid_argument(o.corpus_file + ": the corpus is empty");
    splits = fraction_splits(tokens, o.split);
    source = o.corpus_file + " (split " + o.split + ")";
  } else if (o.corpus == "brown") {
    tokens = read_brown(brown_dir_or_fetch());
    splits = bengio_splits(tokens);
    source = "Brown (Bengio et al. 2003 protocol: 800,000 train, 200,000 valid, rest test)";
  } else {
    throw std::invalid_argument("--corpus must be 'brown' (or use --corpus-file FILE), got '" +
                                o.corpus + "'");
  }
  LMData data;
  data.vocab =
      Vocabulary::build(o.vocab_counts == VocabCounts::all ? tokens : splits.train, o.min_count);
  if (data.vocab.size() < 2)
    throw std::invalid_argument(
        "--min-count " + std::to_string(o.min_count) +
        " leaves no word in the vocabulary but <unk> (no word occurs that often): lower it");
  data.stream = data.vocab.encode(tokens);
  data.train_full = splits.train.size();
  const size_t cut = static_cast<size_t>(
      std::llround(static_cast<double>(splits.train.size()) * o.train_fraction));
  data.train = {0, std::max<size_t>(cut, 2)};
  data.valid = {splits.train.size(), splits.train.size() + splits.valid.size()};
  data.test = {data.valid.end, tokens.size()};
  std::ostringstream d;
  d << source << ": " << tokens.size() << " tokens, train " << data.train.size();
  if (o.train_fraction < 1.0)
    d << " (" << o.train_fraction * 100 << "% of " << data.train_full << ")";
  d << ", valid " << data.valid.size() << ", test " << data.test.size() << "; vocabulary "
    << data.vocab.size() << " (frequency >= " << o.min_count << " on "
    << base::name_of(kVocabCountsNames, o.vocab_counts) << " tokens, the rest -> <unk>)";
  data.description = d.str();
  return data;
}

std::vector<size_t> train_counts(const LMData& data) {
  std::vector<size_t> count(data.vocab.size(), 0);
  for (size_t i = data.train.begin; i < data.train.end; ++i)
    ++count[static_cast<size_t>(data.stream[i])];
  return count;
}

const char* frequency_band(int32_t id, size_t train_count) {
  if (id == 0) return "<unk>";
  if (train_count == 0) return "unseen";
  if (train_count < 10) return "rare (1-9)";
  if (train_count < 100) return "middle (10-99)";
  return "frequent (100+)";
}

std::string fingerprint(const LMData& data) {
  // Every value as 8 bytes, a word's bytes included, each word ended by 0xFFFFFFFF.
  base::Fnv1a h;
  for (int32_t id : data.stream) h.add_little_endian(static_cast<uint32_t>(id), 8);
  for (size_t v : {data.train.begin, data.train.end, data.valid.begin, data.valid.end,
                   data.test.begin, data.test.end})
    h.add_little_endian(v, 8);
  for (const auto& w : data.vocab.words()) {
    for (unsigned char ch : w) h.add_little_endian(ch, 8);
    h.add_little_endian(0xFFFFFFFFull, 8);
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h.value()));
  return buf;
}

}  // namespace tg::text
