#include "text/lm_data.hpp"

#include <cstdio>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "base/hash.hpp"
#include "text/bpe.hpp"

namespace tg::text {

Tokens LMData::train_tokens() const {
  Tokens out;
  out.reserve(train.size());
  for (size_t i = train.begin; i < train.end; ++i) out.push_back(vocab.spelling(stream[i]));
  return out;
}

CorpusSplits read_corpus(const LMDataOptions& o) {
  CorpusSplits c;
  if (!o.corpus_file.empty()) {
    c.words = read_plain_file(o.corpus_file);
    if (c.words.empty()) throw std::invalid_argument(o.corpus_file + ": the corpus is empty");
    c.splits = fraction_splits(c.words, o.split);
    c.source = o.corpus_file + " (split " + o.split + ")";
  } else if (o.corpus == "brown") {
    c.words = read_brown(brown_dir_or_fetch());
    c.splits = bengio_splits(c.words);
    c.source = "Brown (Bengio et al. 2003 protocol: 800,000 train, 200,000 valid, rest test)";
  } else {
    throw std::invalid_argument("--corpus must be 'brown' (or use --corpus-file FILE), got '" +
                                o.corpus + "'");
  }
  return c;
}

namespace {
void check_train_fraction(const LMDataOptions& o) {
  if (!(o.train_fraction > 0.0 && o.train_fraction <= 1.0))
    throw std::invalid_argument("--train-fraction " + std::to_string(o.train_fraction) +
                                " is not in (0, 1]");
}
}  // namespace

LMData load_lm_data(const LMDataOptions& o) {
  check_train_fraction(o);  // before the corpus is read, or fetched
  return load_lm_data(o, read_corpus(o));
}

LMData load_lm_data(const LMDataOptions& o, const CorpusSplits& corpus) {
  check_train_fraction(o);
  const auto& [tokens, splits, source] = corpus;
  // The splits' lengths in the stream's tokens (words, unless a BPE encodes them).
  struct {
    size_t train, valid, test;
  } splits_in_tokens{};
  LMData data;
  data.tokenizer = o.tokenizer;
  if (o.tokenizer == "word") {
    data.vocab =
        Vocabulary::build(o.vocab_counts == VocabCounts::all ? tokens : splits.train, o.min_count);
    if (data.vocab.size() < 2)
      throw std::invalid_argument(
          "--min-count " + std::to_string(o.min_count) +
          " leaves no word in the vocabulary but <unk> (no word occurs that often): lower it");
    data.stream = data.vocab.encode(tokens);
  } else {
    // Each split's words joined by spaces; a split after the first starts with the space that
    // separates it from the one before, so the stream is the whole text's encoding (pieces
    // never cross a space between words).
    auto bpe = std::make_shared<const BytePairEncoding>(load_bpe(o.tokenizer));
    const std::vector<int32_t> train_ids = bpe->encode(words_as_text(splits.train));
    const std::vector<int32_t> valid_ids = bpe->encode(" " + words_as_text(splits.valid));
    const std::vector<int32_t> test_ids = bpe->encode(" " + words_as_text(splits.test));
    data.stream = train_ids;
    data.stream.insert(data.stream.end(), valid_ids.begin(), valid_ids.end());
    data.stream.insert(data.stream.end(), test_ids.begin(), test_ids.end());
    data.vocab =
        Vocabulary::from_bpe(bpe, o.vocab_counts == VocabCounts::all ? data.stream : train_ids);
    splits_in_tokens = {train_ids.size(), valid_ids.size(), test_ids.size()};
  }
  data.valid_words = splits.valid.size();
  data.test_words = splits.test.size();
  if (o.tokenizer == "word")
    splits_in_tokens = {splits.train.size(), splits.valid.size(), splits.test.size()};
  data.train_full = splits_in_tokens.train;
  const size_t cut = static_cast<size_t>(
      std::llround(static_cast<double>(splits_in_tokens.train) * o.train_fraction));
  data.train = {0, std::max<size_t>(cut, 2)};
  data.valid = {splits_in_tokens.train, splits_in_tokens.train + splits_in_tokens.valid};
  data.test = {data.valid.end, data.stream.size()};
  std::ostringstream d;
  d << source << ": " << data.stream.size() << " tokens";
  if (o.tokenizer != "word") d << " (" << tokens.size() << " words)";
  d << ", train " << data.train.size();
  if (o.train_fraction < 1.0)
    d << " (" << o.train_fraction * 100 << "% of " << data.train_full << ")";
  d << ", valid " << data.valid.size() << ", test " << data.test.size() << "; vocabulary "
    << data.vocab.size();
  if (o.tokenizer == "word")
    d << " (frequency >= " << o.min_count << " on "
      << base::name_of(kVocabCountsNames, o.vocab_counts) << " tokens, the rest -> <unk>)";
  else
    d << " (byte-level BPE '" << o.tokenizer << "', hash " << data.vocab.bpe()->hash() << ")";
  data.description = d.str();
  return data;
}

std::vector<size_t> train_counts(const LMData& data) {
  std::vector<size_t> count(data.vocab.size(), 0);
  for (size_t i = data.train.begin; i < data.train.end; ++i)
    ++count[static_cast<size_t>(data.stream[i])];
  return count;
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
