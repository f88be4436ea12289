#include "text/vocab.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <stdexcept>

#include "autograd/io.hpp"
#include "base/files.hpp"
#include "text/bpe.hpp"

namespace tg::text {

void Vocabulary::add(const std::string& word, size_t count) {
  if (!index_.emplace(word, static_cast<int32_t>(words_.size())).second)
    throw std::invalid_argument("vocabulary: word '" + word + "' appears twice");
  words_.push_back(word);
  counts_.push_back(count);
}

Vocabulary Vocabulary::build(const Tokens& counted, size_t min_count) {
  std::unordered_map<std::string, size_t> counts;
  for (const auto& t : counted) ++counts[t];
  std::vector<std::pair<std::string, size_t>> kept;
  size_t unk_count = counts.count(kUnk) ? counts[kUnk] : 0;
  for (const auto& [word, n] : counts) {
    if (word == kUnk) continue;
    if (n >= min_count)
      kept.emplace_back(word, n);
    else
      unk_count += n;
  }
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  Vocabulary v;
  v.add(kUnk, unk_count);
  for (const auto& [word, n] : kept) v.add(word, n);
  return v;
}

Vocabulary Vocabulary::from_bpe(std::shared_ptr<const BytePairEncoding> bpe,
                                const std::vector<int32_t>& counted) {
  Vocabulary v;
  v.words_.reserve(bpe->size());
  for (size_t id = 0; id < bpe->size(); ++id) v.add(bpe->token(static_cast<int32_t>(id)), 0);
  for (int32_t id : counted) ++v.counts_.at(static_cast<size_t>(id));
  v.bpe_ = std::move(bpe);
  return v;
}

std::vector<int32_t> Vocabulary::encode_text(const std::string& text) const {
  if (bpe_) return bpe_->encode(text);
  Tokens words;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return encode(words);
}

void Vocabulary::append(std::string& text, int32_t id) const {
  if (bpe_) {
    text += word(id);
  } else {
    text += ' ';
    text += word(id);
  }
}

int32_t Vocabulary::id(const std::string& word) const {
  auto it = index_.find(word);
  return it == index_.end() ? unk() : it->second;
}

std::string Vocabulary::spelling(int32_t id) const {
  return bpe_ ? gpt2_written(word(id)) : word(id);
}

const std::string& Vocabulary::word(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= words_.size())
    throw std::out_of_range("vocabulary: id " + std::to_string(id) + " is outside [0, " +
                            std::to_string(words_.size()) + ")");
  return words_[static_cast<size_t>(id)];
}

std::vector<int32_t> Vocabulary::encode(const Tokens& tokens) const {
  std::vector<int32_t> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) ids.push_back(id(t));
  return ids;
}

void Vocabulary::save(const std::string& path) const {
  if (bpe_)
    throw std::logic_error(path +
                           ": a BPE vocabulary is saved as its own two files "
                           "(BytePairEncoding::save), not as a word list");
  base::atomic_write(path, [&](std::ostream& out) {
    out << "tapegrad-vocab " << words_.size() << "\n";
    for (size_t i = 0; i < words_.size(); ++i) out << words_[i] << '\t' << counts_[i] << '\n';
  });
}

Vocabulary Vocabulary::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open vocabulary for reading");
  std::string line;
  auto fail = [&](size_t line_no, const std::string& what) -> void {
    throw std::runtime_error(path + ":" + std::to_string(line_no) + ": " + what);
  };
  if (!std::getline(in, line) || line.rfind("tapegrad-vocab ", 0) != 0)
    fail(1, "missing 'tapegrad-vocab <size>' header");
  size_t declared = 0;
  try {
    size_t used = 0;
    declared = std::stoul(line.substr(15), &used);
    if (used != line.size() - 15) throw std::invalid_argument(line);
  } catch (const std::exception&) {
    fail(1, "bad size in header '" + line + "'");
  }
  Vocabulary v;
  size_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    const size_t tab = line.rfind('\t');
    if (tab == std::string::npos || tab == 0) fail(line_no, "expected 'word<TAB>count'");
    size_t count = 0;
    try {
      size_t used = 0;
      const std::string digits = line.substr(tab + 1);
      count = std::stoul(digits, &used);
      if (used != digits.size() || digits[0] == '-') throw std::invalid_argument(digits);
    } catch (const std::exception&) {
      fail(line_no, "bad count '" + line.substr(tab + 1) + "'");
    }
    try {
      v.add(line.substr(0, tab), count);
    } catch (const std::invalid_argument& e) {
      fail(line_no, e.what());
    }
    if (v.size() > declared)
      fail(line_no, "more words than the header's " + std::to_string(declared));
  }
  if (v.size() != declared)
    fail(line_no, "header declares " + std::to_string(declared) + " words but the file has " +
                      std::to_string(v.size()));
  if (v.size() == 0 || v.words_[0] != kUnk) fail(2, "the first word must be " + std::string(kUnk));
  return v;
}

}  // namespace tg::text
