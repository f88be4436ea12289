#include "text/bpe.hpp"

#include "base/escape.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "base/files.hpp"
#include "base/hash.hpp"
#include "text/corpus.hpp"

namespace tg::text {

namespace {

// GPT-2's pattern (tiktoken's r50k_base) with \s spelled out as Unicode's White_Space property,
// which is what tiktoken's regex engine means by \s (PCRE2's \s leaves out U+0085).
#define TG_WHITE_SPACE \
  "\\t-\\r "           \
  "\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"
constexpr const char* kGpt2Pattern =
    "'(?:[sdmt]|ll|ve|re)"
    "| ?\\p{L}+"
    "| ?\\p{N}+"
    "| ?[^" TG_WHITE_SPACE
    "\\p{L}\\p{N}]+"
    "|[" TG_WHITE_SPACE "]+(?![^" TG_WHITE_SPACE
    "])"
    "|[" TG_WHITE_SPACE "]+";
#undef TG_WHITE_SPACE

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof buf);
  return reinterpret_cast<const char*>(buf);
}

// GPT-2's bytes_to_unicode(): bytes that print stand for themselves, the 68 others for
// U+0100.. in byte order.
struct ByteAlphabet {
  char32_t char_of[256];
  int byte_of[324];
  ByteAlphabet() {
    std::fill(std::begin(byte_of), std::end(byte_of), -1);
    const auto prints = [](int b) {
      return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      char_of[b] = prints(b) ? static_cast<char32_t>(b) : static_cast<char32_t>(next++);
      byte_of[char_of[b]] = b;
    }
  }
};
const ByteAlphabet& alphabet() {
  static const ByteAlphabet a;
  return a;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {  // the alphabet's code points are all below U+0800; kept general for clarity
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// A token as written in the files -> its bytes; false if it is empty or a character stands
// for no byte.
bool bytes_of_written(std::string_view written, std::string& bytes) {
  bytes.clear();
  for (size_t i = 0; i < written.size();) {
    const unsigned char lead = static_cast<unsigned char>(written[i]);
    char32_t c;
    size_t len;
    if (lead < 0x80) {
      c = lead, len = 1;
    } else if ((lead & 0xE0) == 0xC0 && i + 1 < written.size()) {
      c = static_cast<char32_t>(((lead & 0x1F) << 6) | (written[i + 1] & 0x3F)), len = 2;
    } else {
      return false;  // the alphabet needs no code point above U+07FF
    }
    const int b = c < 324 ? alphabet().byte_of[c] : -1;
    if (b < 0) return false;
    bytes += static_cast<char>(b);
    i += len;
  }
  return !bytes.empty();
}

std::string printable(std::string_view s) {
  return base::escape_bytes(s, true);
}

}  // namespace

char32_t gpt2_char_of_byte(unsigned char b) {
  return alphabet().char_of[b];
}
int gpt2_byte_of_char(char32_t c) {
  return c < 324 ? alphabet().byte_of[c] : -1;
}

std::string gpt2_written(std::string_view bytes) {
  std::string out;
  for (unsigned char b : bytes) append_utf8(out, alphabet().char_of[b]);
  return out;
}

// --- pre-tokenisation -------------------------------------------------------------------------

struct Gpt2Splitter::Matcher {
  pcre2_code* code = nullptr;
  ~Matcher() { pcre2_code_free(code); }
};

Gpt2Splitter::Gpt2Splitter() : matcher_(std::make_unique<Matcher>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // MATCH_INVALID_UTF: bytes that are not UTF-8 match nothing (instead of failing the search).
  matcher_->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kGpt2Pattern), PCRE2_ZERO_TERMINATED,
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
  if (!matcher_->code)
    throw std::logic_error("GPT-2's pattern does not compile: " + pcre2_message(error));
  // Without JIT support (a PCRE2 built without it) the interpreter gives the same matches.
  pcre2_jit_compile(matcher_->code, PCRE2_JIT_COMPLETE);
}

Gpt2Splitter::~Gpt2Splitter() = default;

const Gpt2Splitter& gpt2_splitter() {
  static const Gpt2Splitter splitter;
  return splitter;
}

void Gpt2Splitter::for_each_piece(std::string_view text,
                                  const std::function<void(std::string_view)>& piece) const {
  pcre2_match_data* match = pcre2_match_data_create_from_pattern(matcher_->code, nullptr);
  if (!match) throw std::bad_alloc();
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t at = 0;
  try {
    while (at < text.size()) {
      const int rc = pcre2_match(matcher_->code, subject, text.size(), at, 0, match, nullptr);
      size_t begin = text.size(), end = text.size();
      if (rc >= 0) {
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
        begin = ovector[0], end = ovector[1];
      } else if (rc != PCRE2_ERROR_NOMATCH) {
        throw std::runtime_error("pre-tokenising text: " + pcre2_message(rc));
      }
      if (begin > at) piece(text.substr(at, begin - at));  // bytes no class matched
      if (end > begin) piece(text.substr(begin, end - begin));
      // Every alternative matches at least one character: an empty match cannot happen, but
      // would loop forever, so step over it.
      at = end > at ? end : at + 1;
    }
  } catch (...) {
    pcre2_match_data_free(match);
    throw;
  }
  pcre2_match_data_free(match);
}

// --- the vocabulary -----------------------------------------------------------------------------

void BytePairEncoding::index_tokens() {
  ids_.clear();
  ids_.reserve(tokens_.size());
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (!ids_.emplace(tokens_[id], static_cast<int32_t>(id)).second)
      throw std::runtime_error("token " + printable(tokens_[id]) + " appears twice (ids " +
                               std::to_string(ids_.at(tokens_[id])) + " and " + std::to_string(id) +
                               ")");
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = ids_.find(std::string(1, static_cast<char>(b)));
    if (it == ids_.end()) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "the vocabulary has no token for byte 0x%02x", b);
      throw std::runtime_error(buf);
    }
    byte_ids_[b] = it->second;
  }
}

void BytePairEncoding::add_merge(int32_t left, int32_t right, int32_t merged) {
  const int32_t rank = static_cast<int32_t>(merge_pairs_.size());
  if (!merge_ranks_.emplace(pair_key(left, right), Merge{rank, merged}).second)
    throw std::runtime_error("the merge " + printable(tokens_[left]) + " + " +
                             printable(tokens_[right]) + " appears twice");
  merge_pairs_.emplace_back(left, right);
}

BytePairEncoding BytePairEncoding::load(const std::string& encoder_json,
                                        const std::string& vocab_bpe) {
  BytePairEncoding bpe;
  const nlohmann::json vocab = nlohmann::json::parse(read_file(encoder_json), nullptr, false);
  if (vocab.is_discarded() || !vocab.is_object() || vocab.empty())
    throw std::runtime_error(encoder_json + ": not a JSON object of tokens and ids");
  bpe.tokens_.assign(vocab.size(), std::string());
  std::vector<bool> seen(vocab.size(), false);
  std::string bytes;
  for (const auto& [written, id_value] : vocab.items()) {
    if (!id_value.is_number_integer())
      throw std::runtime_error(encoder_json + ": token \"" + written + "\" has no integer id");
    const int64_t id = id_value.get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(vocab.size())) {
      // Ids are 0..n-1 once each: an id past the end means one below it is missing (a deleted
      // token), which is the one to name.
      std::vector<bool> taken(vocab.size(), false);
      for (const auto& [other, v] : vocab.items())
        if (v.is_number_integer() && v.get<int64_t>() >= 0 &&
            v.get<int64_t>() < static_cast<int64_t>(vocab.size()))
          taken[static_cast<size_t>(v.get<int64_t>())] = true;
      const auto missing = std::ranges::find(taken, false);
      throw std::runtime_error(
          encoder_json + ": token \"" + printable(written) + "\" has id " + std::to_string(id) +
          ", outside 0.." + std::to_string(vocab.size() - 1) + " (ids must be dense)" +
          (missing == taken.end() || id < 0
               ? std::string()
               : "; no token has id " + std::to_string(missing - taken.begin())));
    }
    if (seen[id])
      throw std::runtime_error(encoder_json + ": id " + std::to_string(id) +
                               " is given to two tokens");
    if (!bytes_of_written(written, bytes))
      throw std::runtime_error(encoder_json + ": token \"" + written +
                               "\" is empty or not written in GPT-2's byte alphabet");
    seen[id] = true;
    bpe.tokens_[id] = bytes;
  }
  try {
    bpe.index_tokens();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(encoder_json + ": " + e.what());
  }

  std::istringstream merges(read_file(vocab_bpe));
  std::string line, left, right;
  size_t number = 0;
  while (std::getline(merges, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (number == 1 && line.rfind("#version", 0) == 0)) continue;
    const auto where = [&] { return vocab_bpe + ":" + std::to_string(number) + ": "; };
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
      throw std::runtime_error(where() + "expected two tokens separated by one space, got \"" +
                               printable(line) + "\"");
    if (!bytes_of_written(std::string_view(line).substr(0, space), left) ||
        !bytes_of_written(std::string_view(line).substr(space + 1), right))
      throw std::runtime_error(where() + "\"" + printable(line) +
                               "\" is not written in GPT-2's byte alphabet");
    const int32_t l = bpe.find(left), r = bpe.find(right), merged = bpe.find(left + right);
    if (l < 0 || r < 0 || merged < 0)
      throw std::runtime_error(where() + "the merge \"" + printable(line) + "\" needs the token " +
                               printable(l < 0   ? left
                                         : r < 0 ? right
                                                 : left + right) +
                               ", which encoder.json does not have");
    try {
      bpe.add_merge(l, r, merged);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(where() + e.what());
    }
  }
  bpe.check_complete(encoder_json, vocab_bpe);
  return bpe;
}

namespace {
// A token no merge makes and that is not a byte: GPT-2's "<|endoftext|>" and its kind.
bool special_token(std::string_view token) {
  return token.size() > 4 && token.starts_with("<|") && token.ends_with("|>");
}
}  // namespace

void BytePairEncoding::check_complete(const std::string& encoder_json,
                                      const std::string& vocab_bpe) const {
  // Every token but the bytes and the special tokens is what some merge makes: a vocab.bpe cut
  // short (or a merge lost) would otherwise load and encode every text into other tokens.
  std::vector<bool> made(tokens_.size(), false);
  for (const auto& [key, merge] : merge_ranks_) made[static_cast<size_t>(merge.id)] = true;
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (tokens_[id].size() == 1 || made[id] || special_token(tokens_[id])) continue;
    throw std::runtime_error(vocab_bpe + ": no merge makes the token " + printable(tokens_[id]) +
                             " (id " + std::to_string(id) + " of " + encoder_json + "); it has " +
                             std::to_string(merge_pairs_.size()) + " merges where " +
                             std::to_string(tokens_.size()) +
                             " tokens need one each but the bytes and special tokens: a vocab.bpe "
                             "cut short, or not this encoder's");
  }
}

void BytePairEncoding::save(const std::string& encoder_json, const std::string& vocab_bpe) const {
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (size_t id = 0; id < tokens_.size(); ++id) vocab[gpt2_written(tokens_[id])] = id;
  base::atomic_write(encoder_json, [&](std::ostream& out) { out << vocab.dump() << '\n'; });
  base::atomic_write(vocab_bpe, [&](std::ostream& out) {
    out << "#version: 0.2\n";
    for (const auto& [l, r] : merge_pairs_)
      out << gpt2_written(tokens_[l]) << ' ' << gpt2_written(tokens_[r]) << '\n';
  });
}

const std::string& BytePairEncoding::token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size())
    throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary of " +
                            std::to_string(tokens_.size()) + " tokens");
  return tokens_[id];
}

int32_t BytePairEncoding::find(std::string_view bytes) const {
  const auto it = ids_.find(bytes);
  return it == ids_.end() ? -1 : it->second;
}

std::string BytePairEncoding::hash() const {
  base::Fnv1a h;
  h.add_little_endian(tokens_.size(), 8);
  for (const std::string& t : tokens_) {
    h.add_little_endian(t.size(), 4);
    h.add_bytes(t);
  }
  for (const auto& [l, r] : merge_pairs_) {
    h.add_little_endian(static_cast<uint32_t>(l), 4);
    h.add_little_endian(static_cast<uint32_t>(r), 4);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h.value()));
  return buf;
}

// --- encoding -----------------------------------------------------------------------------------

int32_t BytePairEncoding::rank_of(int32_t left, int32_t right, int32_t& merged) const {
  const auto it = merge_ranks_.find(pair_key(left, right));
  if (it == merge_ranks_.end()) return INT32_MAX;
  merged = it->second.id;
  return it->second.rank;
}

// Merges the lowest-ranked adjacent pair (the leftmost of equals) until none is left: tiktoken's
// loop, quadratic in the piece's length, fastest for the short pieces of ordinary text.
void BytePairEncoding::merge_short(std::vector<int32_t>& parts) const {
  std::vector<int32_t> ranks(parts.size()), merged(parts.size());
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    ranks[i] = rank_of(parts[i], parts[i + 1], merged[i]);
  while (parts.size() > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < parts.size(); ++i)
      if (ranks[i] < ranks[best]) best = i;
    if (ranks[best] == INT32_MAX) break;
    parts[best] = merged[best];
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    ranks.erase(ranks.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    merged.erase(merged.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    if (best + 1 < parts.size())
      ranks[best] = rank_of(parts[best], parts[best + 1], merged[best]);
    else
      ranks[best] = INT32_MAX;
    if (best > 0) ranks[best - 1] = rank_of(parts[best - 1], parts[best], merged[best - 1]);
  }
}

// The same merges in the same order for long pieces (a megabyte-long word, a long run of
// spaces) in O(n log n): a heap of (rank, position) over a linked list of parts. Positions keep
// their order in the list, so the heap's smallest entry is the leftmost of the lowest rank.
void BytePairEncoding::merge_long(std::vector<int32_t>& parts) const {
  const size_t n = parts.size();
  constexpr size_t kEnd = SIZE_MAX;
  std::vector<size_t> next(n), prev(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i)
    next[i] = i + 1 < n ? i + 1 : kEnd, prev[i] = i == 0 ? kEnd : i - 1;
  using Entry = std::pair<int32_t, size_t>;  // rank, position of the pair's left part
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  int32_t merged = 0;
  const auto push = [&](size_t i) {
    if (i == kEnd || next[i] == kEnd) return;
    const int32_t rank = rank_of(parts[i], parts[next[i]], merged);
    if (rank != INT32_MAX) heap.emplace(rank, i);
  };
  for (size_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const auto [rank, i] = heap.top();
    heap.pop();
    // Stale entries: a part merged away, or a pair changed since (its rank then differs: each
    // pair has one rank).
    if (!alive[i] || next[i] == kEnd || rank_of(parts[i], parts[next[i]], merged) != rank) continue;
    const size_t j = next[i];
    parts[i] = merged;
    alive[j] = false;
    next[i] = next[j];
    if (next[j] != kEnd) prev[next[j]] = i;
    push(prev[i]);
    push(i);
  }
  size_t out = 0;
  for (size_t i = 0; i != kEnd; i = next[i]) parts[out++] = parts[i];
  parts.resize(out);
}

void BytePairEncoding::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.empty()) return;
  if (piece.size() == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(piece[0])]);
    return;
  }
  // A piece that is a token is that token (tiktoken's rule; merging its bytes could in
  // principle end elsewhere).
  if (const auto it = ids_.find(piece); it != ids_.end()) {
    out.push_back(it->second);
    return;
  }
  std::vector<int32_t> parts(piece.size());
  for (size_t i = 0; i < piece.size(); ++i)
    parts[i] = byte_ids_[static_cast<unsigned char>(piece[i])];
  if (parts.size() <= 64)
    merge_short(parts);
  else
    merge_long(parts);
  out.insert(out.end(), parts.begin(), parts.end());
}

std::vector<int32_t> BytePairEncoding::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 4 + 16);
  // Pieces repeat (words): each distinct short piece is merged once per call.
  std::unordered_map<std::string, std::pair<uint32_t, uint32_t>, BytesHash, std::equal_to<>>
      seen;  // piece -> its ids' span of `cache`
  std::vector<int32_t> cache;
  gpt2_splitter().for_each_piece(text, [&](std::string_view piece) {
    if (piece.size() > 32) return encode_piece(piece, ids);
    if (const auto it = seen.find(piece); it != seen.end()) {
      ids.insert(ids.end(), cache.begin() + it->second.first,
                 cache.begin() + it->second.first + it->second.second);
      return;
    }
    const size_t before = ids.size();
    encode_piece(piece, ids);
    seen.emplace(std::string(piece),
                 std::pair<uint32_t, uint32_t>(static_cast<uint32_t>(cache.size()),
                                               static_cast<uint32_t>(ids.size() - before)));
    cache.insert(cache.end(), ids.begin() + static_cast<std::ptrdiff_t>(before), ids.end());
  });
  return ids;
}

std::vector<int32_t> BytePairEncoding::unreachable_tokens() const {
  std::vector<int32_t> out;
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::vector<int32_t> ids = encode(tokens_[id]);
    if (ids.size() != 1 || ids[0] != static_cast<int32_t>(id))
      out.push_back(static_cast<int32_t>(id));
  }
  return out;
}

std::string BytePairEncoding::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) out += token(id);
  return out;
}

// --- training -----------------------------------------------------------------------------------

BytePairEncoding BytePairEncoding::train(std::string_view text, const BpeTrainOptions& options) {
  const size_t reserved = options.end_of_text.empty() ? 0 : 1;
  if (options.vocab_size < 256 + reserved)
    throw std::invalid_argument("a byte-level vocabulary needs at least " +
                                std::to_string(256 + reserved) + " tokens (256 bytes" +
                                (reserved ? " and the end-of-text token" : "") + "), not " +
                                std::to_string(options.vocab_size));
  if (options.end_of_text.size() == 1)
    throw std::invalid_argument("the end-of-text token '" + printable(options.end_of_text) +
                                "' is one byte, which is a token already: name a longer one "
                                "(GPT-2's is <|endoftext|>), or none");
  BytePairEncoding bpe;
  // The 256 byte tokens in GPT-2's order (its alphabet's characters), so that a trained
  // vocabulary's first ids are GPT-2's.
  std::vector<int> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[b] = b;
  std::sort(bytes.begin(), bytes.end(),
            [](int x, int y) { return alphabet().char_of[x] < alphabet().char_of[y]; });
  for (int b : bytes) bpe.tokens_.emplace_back(1, static_cast<char>(b));
  bpe.index_tokens();

  // Distinct pieces with their counts, in byte order (deterministic whatever the hash map).
  std::unordered_map<std::string, int64_t, BytesHash, std::equal_to<>> counted;
  gpt2_splitter().for_each_piece(text, [&](std::string_view piece) {
    if (const auto it = counted.find(piece); it != counted.end())
      ++it->second;
    else
      counted.emplace(std::string(piece), 1);
  });
  std::vector<std::pair<std::string, int64_t>> pieces(counted.begin(), counted.end());
  counted.clear();
  std::sort(pieces.begin(), pieces.end());
  std::vector<std::vector<int32_t>> words(pieces.size());
  std::vector<int64_t> weight(pieces.size());
  for (size_t w = 0; w < pieces.size(); ++w) {
    for (unsigned char b : pieces[w].first) words[w].push_back(bpe.byte_ids_[b]);
    weight[w] = pieces[w].second;
  }
  pieces.clear();

  std::unordered_map<uint64_t, int64_t> pair_count;
  std::unordered_map<uint64_t, std::vector<uint32_t>> pair_words;  // may repeat a word
  for (size_t w = 0; w < words.size(); ++w)
    for (size_t i = 0; i + 1 < words[w].size(); ++i) {
      const uint64_t key = pair_key(words[w][i], words[w][i + 1]);
      pair_count[key] += weight[w];
      pair_words[key].push_back(static_cast<uint32_t>(w));
    }
  // Most frequent first; ties: the smaller (left, right) ids. Entries go stale when a count
  // changes (a fresh one is pushed): a popped entry counts only if it matches the count now.
  struct Candidate {
    int64_t count;
    uint64_t key;
    bool operator<(const Candidate& o) const {
      return count != o.count ? count < o.count : key > o.key;
    }
  };
  std::priority_queue<Candidate> heap;
  for (const auto& [key, count] : pair_count) heap.push({count, key});

  std::vector<uint32_t> visited(words.size(), 0);  // the merge that last rewrote each word
  uint32_t stamp = 0;
  std::vector<uint64_t> changed;
  const auto add = [&](uint64_t key, int64_t delta, uint32_t w) {
    pair_count[key] += delta;
    changed.push_back(key);
    if (delta > 0) pair_words[key].push_back(w);
  };
  while (bpe.tokens_.size() + reserved < options.vocab_size && !heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    const auto now = pair_count.find(top.key);
    if (now == pair_count.end() || now->second != top.count) continue;  // stale
    if (top.count < static_cast<int64_t>(std::max<size_t>(options.min_pair_count, 1))) break;
    const int32_t a = static_cast<int32_t>(top.key >> 32), b = static_cast<int32_t>(top.key);
    const std::string joined = bpe.tokens_[a] + bpe.tokens_[b];
    int32_t m = bpe.find(joined);
    if (m < 0) {
      m = static_cast<int32_t>(bpe.tokens_.size());
      bpe.tokens_.push_back(joined);
      bpe.ids_.emplace(joined, m);
    }
    bpe.add_merge(a, b, m);
    ++stamp;
    changed.clear();
    const std::vector<uint32_t> holders = std::move(pair_words[top.key]);
    pair_words.erase(top.key);
    for (uint32_t w : holders) {
      if (visited[w] == stamp) continue;
      visited[w] = stamp;
      std::vector<int32_t>& s = words[w];
      const int64_t c = weight[w];
      std::vector<int32_t> out;
      out.reserve(s.size());
      for (size_t i = 0; i < s.size();) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          // The pairs around the merged one change: (prev, a) -> (prev, m), (b, next) -> (m, next).
          if (!out.empty()) {
            add(pair_key(out.back(), a), -c, w);
            add(pair_key(out.back(), m), c, w);
          }
          if (i + 2 < s.size()) {
            add(pair_key(b, s[i + 2]), -c, w);
            add(pair_key(m, s[i + 2]), c, w);
          }
          add(top.key, -c, w);
          out.push_back(m);
          i += 2;
        } else {
          out.push_back(s[i]);
          ++i;
        }
      }
      s = std::move(out);
    }
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    for (uint64_t key : changed) {
      const auto it = pair_count.find(key);
      if (it->second > 0)
        heap.push({it->second, key});
      else
        pair_count.erase(it), pair_words.erase(key);
    }
  }
  if (reserved) {
    // A token the merges made from the text cannot also mark its end: decode could not tell
    // them apart.
    if (bpe.find(options.end_of_text) >= 0)
      throw std::invalid_argument("the end-of-text token '" + printable(options.end_of_text) +
                                  "' is a token the merges made (the text holds it): name one "
                                  "the text does not (GPT-2's is <|endoftext|>), or none");
    bpe.tokens_.push_back(options.end_of_text);
    bpe.ids_.emplace(options.end_of_text, static_cast<int32_t>(bpe.tokens_.size() - 1));
  }
  return bpe;
}

std::string gpt2_dir_or_fetch() {
  const auto complete = [](const std::string& dir) {
    return std::filesystem::exists(std::filesystem::path(dir) / "encoder.json") &&
           std::filesystem::exists(std::filesystem::path(dir) / "vocab.bpe");
  };
  const std::string dir = fetched_folder("gpt2", "fetch_gpt2.sh", complete, "GPT-2's vocabulary",
                                         "; or pass the two files' folder as --tokenizer DIR");
  static constexpr std::pair<const char*, const char*> kHashes[] = {
      {"encoder.json", "2bed11eb712284f6"}, {"vocab.bpe", "2de9df23ced2d9b7"}};
  for (const auto& [file, expected] : kHashes) {
    const std::string path = (std::filesystem::path(dir) / file).string();
    const std::string now = base::fnv1a_file_hex(path);
    if (now != expected)
      throw std::runtime_error(path + ": not GPT-2's file (FNV-1a " + now + ", expected " +
                               expected + "): delete the folder and it is fetched again");
  }
  return dir;
}

namespace {

// The encoder.json and vocab.bpe a folder or an encoder.json names ({} when it names neither).
std::pair<std::filesystem::path, std::filesystem::path> local_bpe_files(const std::string& name) {
  namespace fs = std::filesystem;
  if (fs::is_directory(name))
    return {fs::path(name) / "encoder.json", fs::path(name) / "vocab.bpe"};
  if (fs::is_regular_file(name)) return {name, fs::path(name).parent_path() / "vocab.bpe"};
  return {};
}

}  // namespace

BytePairEncoding load_bpe(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path encoder, vocab;
  if (name == "gpt2") {
    const fs::path dir = gpt2_dir_or_fetch();
    encoder = dir / "encoder.json", vocab = dir / "vocab.bpe";
  } else {
    std::tie(encoder, vocab) = local_bpe_files(name);
  }
  if (encoder.empty())
    throw std::invalid_argument("tokenizer '" + name +
                                "': not gpt2, a folder with encoder.json and vocab.bpe, or an "
                                "encoder.json file");
  for (const fs::path& file : {encoder, vocab})
    if (!fs::is_regular_file(file))
      throw std::invalid_argument("tokenizer '" + name + "': no " + file.string());
  return BytePairEncoding::load(encoder.string(), vocab.string());
}

std::vector<base::FileFlag> tokenizer_inputs(const std::string& name) {
  if (name == "word" || name == "gpt2") return {};
  const auto [encoder, vocab] = local_bpe_files(name);
  if (encoder.empty()) return {};
  return {{"--tokenizer", encoder.string()}, {"--tokenizer", vocab.string()}};
}

std::string words_as_text(const Tokens& words) {
  size_t bytes = 0;
  for (const std::string& w : words) bytes += w.size() + 1;
  std::string text;
  text.reserve(bytes);
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) text += ' ';
    text += words[i];
  }
  return text;
}

}  // namespace tg::text
