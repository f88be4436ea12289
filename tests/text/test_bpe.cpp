// Byte-level BPE: GPT-2's files, token-identical to OpenAI's tiktoken (run by node, where it is
// installed: scripts/fetch_tiktoken.sh), any bytes round-trip, training is deterministic and
// its files load in GPT-2's format.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/process.hpp"
#include "temp_folder.hpp"
#include "text/bpe.hpp"
#include "text/corpus.hpp"
#include "text/lm_data.hpp"
#include "text/similarity.hpp"
#include "text/vectors.hpp"
#include "text/vocab.hpp"

namespace fs = std::filesystem;
using tg::text::BytePairEncoding;

namespace {

const BytePairEncoding& gpt2() {
  static const BytePairEncoding bpe = tg::text::load_bpe("gpt2");
  return bpe;
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<int32_t> parse_ids(const std::string& line) {
  std::istringstream in(line);
  std::vector<int32_t> ids;
  for (int32_t id; in >> id;) ids.push_back(id);
  return ids;
}

// Strings that stress the pattern and the merges: contractions, white-space runs before words
// and at the end, Unicode white space (NBSP, NEL, U+2028, ideographic space), letters and digits
// of other scripts, combining marks, emoji, the end-of-text text, long words and runs.
std::vector<std::string> adversarial() {
  std::vector<std::string> s = {
      "",
      " ",
      "  ",
      "\n\n\n",
      "   hello",
      "hello   ",
      "hello   world",
      "\t\t x\r\n y",
      "it's I'M we'll they've you're he'd she's 'tis '''",
      "don't DON'T can't",
      "1234567890123 3.14159 1,000,000 x2y3",
      "a\xc2\xa0"
      "b \xc2\xa0 c",  // NBSP
      "a\xc2\x85"
      "b",                                       // NEL: Unicode white space
      "line\xe2\x80\xa8next\xe2\x80\xa9para",    // line and paragraph separators
      "hello\xe3\x80\x80world",                  // ideographic space
      "zero\xe2\x80\x8bwidth \xef\xbb\xbf bom",  // Cf, not white space
      "caf\xc3\xa9 cafe\xcc\x81 na\xc3\xafve",   // precomposed and combining accents
      "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83"
      "\x88",
      "\xce\x95\xce\xbb\xce\xbb\xce\xb7\xce\xbd\xce\xb9\xce\xba\xce\xac "
      "\xd1\x80\xd1\x83\xd1\x81\xd1\x81\xd0\xba\xd0\xb8\xd0\xb9 "
      "\xd8\xa7\xd9\x84\xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a\xd8\xa9",
      "\xd9\xa1\xd9\xa2\xd9\xa3 \xe2\x85\xa0\xe2\x85\xa1 \xc2\xbd \xc2\xb2",  // Arabic-Indic
                                                                              // digits, Roman
                                                                              // numerals, fractions
      "\xf0\x9f\x99\x82\xf0\x9f\x99\x82 emoji \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",
      "<|endoftext|> is ordinary text here",
      "\xef\xac\x81 ligature \xc7\x85 titlecase",
      std::string("nul\0byte", 8),
      "    \n    \n\n  x  ",
      "!!!??? ... --- ***",
      "http://example.com/path?q=1&r=2#frag",
  };
  s.push_back(std::string(3000, ' '));
  s.push_back(std::string(3000, ' ') + "x");
  s.push_back(std::string(5000, 'a'));
  s.push_back(std::string(2000, '1'));
  std::mt19937 rng(7);
  std::string word;
  for (int i = 0; i < 4000; ++i) word += static_cast<char>('a' + rng() % 26);
  s.push_back(word);
  return s;
}

// The node_modules folder holding tiktoken, or "" (with why) where the reference cannot run.
std::string tiktoken_modules(std::string& why) {
  const fs::path modules = fs::path(tg::text::data_root()) / "npm" / "node_modules";
  if (!fs::exists(modules / "tiktoken" / "package.json")) {
    why = "tiktoken is not installed in " + modules.string() + " (scripts/fetch_tiktoken.sh)";
    return "";
  }
  try {
    if (tg::base::run_program({"node", "--version"}, tg::base::ProgramOutput::discard) != 0) {
      why = "node does not run";
      return "";
    }
  } catch (const std::exception& e) {
    why = std::string("node is not installed (") + e.what() + ")";
    return "";
  }
  return modules.string();
}

std::string skip_reason;
const std::string& modules() {
  static const std::string m = tiktoken_modules(skip_reason);
  return m;
}
struct tiktoken_present {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) {
    boost::test_tools::assertion_result r(!modules().empty());
    if (modules().empty()) {
      r.message() << "SKIPPED: the reference encoder is absent: " << skip_reason;
      BOOST_TEST_MESSAGE("SKIPPED: the reference encoder is absent: " << skip_reason);
    }
    return r;
  }
};

const std::string kReferenceScript =
    std::string(TAPEGRAD_SOURCE_DIR) + "/tests/text/tiktoken_encode.js";

// tiktoken's ids for a text, through a file.
std::vector<int32_t> reference_ids(const std::string& text, const std::string& dir) {
  const std::string in = dir + "/text.txt", out = dir + "/ids";
  write(in, text);
  const int status = tg::base::run_program({"node", kReferenceScript, modules(), in, out},
                                           tg::base::ProgramOutput::discard);
  BOOST_REQUIRE_EQUAL(status, 0);
  return parse_ids(read(out));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(text_bpe)

BOOST_AUTO_TEST_CASE(gpt2_files_load_with_their_sizes) {
  BOOST_TEST(gpt2().size() == 50257u);
  BOOST_TEST(gpt2().merges() == 50000u);
  BOOST_TEST(gpt2().token(50256) == "<|endoftext|>");
  BOOST_TEST(gpt2().token(220) == " ");
  BOOST_TEST(gpt2().find(" the") == 262);
  BOOST_CHECK_THROW(gpt2().token(50257), std::out_of_range);
}

// Ids tiktoken gives (the first is its README's example).
BOOST_AUTO_TEST_CASE(known_ids) {
  BOOST_TEST(gpt2().encode("hello world") == (std::vector<int32_t>{31373, 995}));
  BOOST_TEST(gpt2().encode("Hello world  \n\n it's 123 ok") ==
             (std::vector<int32_t>{15496, 995, 220, 220, 628, 340, 338, 17031, 12876}));
  BOOST_TEST(gpt2().encode("").empty());
}

BOOST_AUTO_TEST_CASE(any_bytes_round_trip) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes(rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 256);  // mostly invalid UTF-8
    BOOST_TEST(gpt2().decode(gpt2().encode(bytes)) == bytes);
  }
  for (const std::string& s : adversarial()) BOOST_TEST(gpt2().decode(gpt2().encode(s)) == s);
  const std::string invalid = "\xff\xfe \xc3 \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 ok \x80";
  const auto ids = gpt2().encode(invalid);
  BOOST_TEST(gpt2().decode(ids) == invalid);
  BOOST_TEST(ids.size() >= 10u);  // lone bytes stay bytes
}

// The merge loop is O(n log n) on long pieces: a megabyte-long word and a megabyte of spaces
// encode (a quadratic loop would take hours), round-trip, and split into many tokens.
BOOST_AUTO_TEST_CASE(megabyte_word_and_whitespace_run) {
  std::mt19937 rng(3);
  std::string word(1 << 20, 'a');
  for (char& c : word) c = static_cast<char>('a' + rng() % 26);
  const auto ids = gpt2().encode(word);
  BOOST_TEST(gpt2().decode(ids) == word);
  BOOST_TEST(ids.size() > word.size() / 8);
  BOOST_TEST(ids.size() < word.size() * 3 / 4);  // random letters merge into pairs and triples
  const std::string spaces = std::string(1 << 20, ' ') + "end";
  const auto space_ids = gpt2().encode(spaces);
  BOOST_TEST(gpt2().decode(space_ids) == spaces);
  // The run's last space goes with the word (the pattern's \s+(?!\S)).
  BOOST_TEST(space_ids.back() == gpt2().find(" end"));
}

BOOST_AUTO_TEST_CASE(same_as_tiktoken_on_adversarial_strings,
                     *boost::unit_test::precondition(tiktoken_present())) {
  const tg::testing::TempFolder folder;
  const std::string dir = folder.dir.string();
  // One node run for all strings: a JSON array in, one line of ids per string out.
  const std::vector<std::string> strings = adversarial();
  write(dir + "/strings.json", nlohmann::json(strings).dump());
  const int status = tg::base::run_program(
      {"node", kReferenceScript, modules(), dir + "/strings.json", dir + "/ids"},
      tg::base::ProgramOutput::discard);
  BOOST_REQUIRE_EQUAL(status, 0);
  std::istringstream lines(read(dir + "/ids"));
  std::string line;
  for (size_t i = 0; i < strings.size(); ++i) {
    BOOST_REQUIRE(std::getline(lines, line));
    BOOST_TEST(gpt2().encode(strings[i]) == parse_ids(line),
               "string " << i << " (" << strings[i].size() << " bytes)");
  }
}

BOOST_AUTO_TEST_CASE(same_as_tiktoken_on_the_brown_corpus,
                     *boost::unit_test::precondition(tiktoken_present())) {
  const tg::testing::TempFolder folder;
  const std::string dir = folder.dir.string();
  const std::string text =
      tg::text::words_as_text(tg::text::read_brown(tg::text::brown_dir_or_fetch()));
  const auto expected = reference_ids(text, dir);
  const auto ids = gpt2().encode(text);
  BOOST_TEST_MESSAGE("Brown: " << text.size() << " bytes, " << ids.size() << " GPT-2 tokens");
  BOOST_TEST(ids.size() == expected.size());
  size_t first_difference = 0;
  while (first_difference < std::min(ids.size(), expected.size()) &&
         ids[first_difference] == expected[first_difference])
    ++first_difference;
  BOOST_TEST(first_difference == expected.size(), "first difference at token " << first_difference);
}

// Another encoder reads a trained vocabulary: tiktoken, given its tokens as ranks in id order
// (the merge order), encodes Brown's training split to the same ids.
BOOST_AUTO_TEST_CASE(trained_vocabulary_encodes_the_same_in_tiktoken,
                     *boost::unit_test::precondition(tiktoken_present())) {
  const tg::testing::TempFolder folder;
  const std::string dir = folder.dir.string();
  const std::string text = tg::text::words_as_text(
      tg::text::bengio_splits(tg::text::read_brown(tg::text::brown_dir_or_fetch())).train);
  tg::text::BpeTrainOptions o;
  o.vocab_size = 8192;
  const BytePairEncoding bpe = BytePairEncoding::train(text, o);
  bpe.save(dir + "/encoder.json", dir + "/vocab.bpe");
  write(dir + "/text.txt", text);
  const int status = tg::base::run_program({"node", kReferenceScript, modules(), dir + "/text.txt",
                                            dir + "/ids", "1", dir + "/encoder.json"},
                                           tg::base::ProgramOutput::discard);
  BOOST_REQUIRE_EQUAL(status, 0);
  const auto expected = parse_ids(read(dir + "/ids"));
  const auto ids = bpe.encode(text);
  BOOST_TEST_MESSAGE("Brown train in a Brown-trained 8,192-token BPE: " << ids.size() << " tokens");
  BOOST_TEST(ids.size() == expected.size());
  BOOST_TEST((ids == expected));
}

BOOST_AUTO_TEST_CASE(trained_vocabulary_is_deterministic_and_readable_as_gpt2_files) {
  const std::string text = read(std::string(TAPEGRAD_FIXTURES) + "/toy_corpus.txt");
  tg::text::BpeTrainOptions o;
  o.vocab_size = 300;
  const BytePairEncoding a = BytePairEncoding::train(text, o), b = BytePairEncoding::train(text, o);
  BOOST_TEST(a.size() == 300u);
  BOOST_TEST(a.hash() == b.hash());
  BOOST_TEST(a.token(299) == "<|endoftext|>");
  // The first 256 ids are the bytes in GPT-2's order.
  for (int32_t id = 0; id < 256; ++id) BOOST_TEST(a.token(id) == gpt2().token(id));
  const tg::testing::TempFolder folder;
  const std::string dir = folder.dir.string();
  a.save(dir + "/encoder.json", dir + "/vocab.bpe");
  const BytePairEncoding loaded = tg::text::load_bpe(dir);
  BOOST_TEST(loaded.hash() == a.hash());
  const auto ids = loaded.encode(text);
  BOOST_TEST(ids == a.encode(text));
  BOOST_TEST(loaded.decode(ids) == text);
  // Trained merges compress their own text (43 merges: the toy corpus's 18,970 bytes become
  // 10,096 tokens).
  BOOST_TEST(ids.size() * 10 < text.size() * 6);
  // Training stops when no pair occurs twice: a tiny text cannot fill a large vocabulary.
  o.vocab_size = 5000;
  BOOST_TEST(BytePairEncoding::train(text, o).size() < 5000u);
}

// Training picks the most frequent pair: on "ab ab ab cd" the first merge is a+b, then " "+ab.
BOOST_AUTO_TEST_CASE(training_merges_the_most_frequent_pair_first) {
  tg::text::BpeTrainOptions o;
  o.vocab_size = 256 + 2;
  o.end_of_text = "";
  const BytePairEncoding bpe = BytePairEncoding::train("ab ab ab cd", o);
  BOOST_REQUIRE_EQUAL(bpe.merges(), 2u);
  BOOST_TEST(bpe.token(256) == "ab");
  BOOST_TEST(bpe.token(257) == " ab");
  BOOST_TEST(bpe.encode("ab ab cd") ==
             (std::vector<int32_t>{256, 257, bpe.find(" "), bpe.find("c"), bpe.find("d")}));
  o.vocab_size = 100;
  BOOST_CHECK_THROW(BytePairEncoding::train("x", o), std::invalid_argument);
}

// The end-of-text token is a token of its own: one byte (a token already) or a string the
// merges make from the text is refused, naming it, where training used to drop it silently.
BOOST_AUTO_TEST_CASE(an_end_of_text_token_the_text_makes_is_refused) {
  tg::text::BpeTrainOptions o;
  o.vocab_size = 256 + 3;
  const auto refused = [&](const std::string& eot, const std::string& message) {
    o.end_of_text = eot;
    try {
      BytePairEncoding::train("ab ab ab cd", o);
      BOOST_ERROR("end of text '" << eot << "' accepted");
    } catch (const std::invalid_argument& e) {
      BOOST_TEST(std::string(e.what()).find(message) != std::string::npos, e.what());
    }
  };
  refused("a", "the end-of-text token 'a' is one byte");
  refused("\n", "the end-of-text token '\\x0a' is one byte");
  refused("ab", "the end-of-text token 'ab' is a token the merges made");
  o.end_of_text = "<eot>";
  const BytePairEncoding bpe = BytePairEncoding::train("ab ab ab cd", o);
  BOOST_TEST(bpe.token(static_cast<int32_t>(bpe.size()) - 1) == "<eot>");
}

// Tokens no text encodes to: in a trained vocabulary only the end-of-text token (training merges
// within pieces); in GPT-2's also tokens its merges made across what pre-tokenisation splits.
BOOST_AUTO_TEST_CASE(unreachable_tokens_are_those_no_text_encodes_to) {
  tg::text::BpeTrainOptions o;
  o.vocab_size = 256 + 3;
  const BytePairEncoding trained = BytePairEncoding::train("ab ab ab cd", o);
  BOOST_REQUIRE_EQUAL(trained.token(258), "<|endoftext|>");
  BOOST_TEST(trained.unreachable_tokens() == std::vector<int32_t>{258});
  const std::vector<int32_t> unreachable = gpt2().unreachable_tokens();
  BOOST_TEST_MESSAGE("GPT-2: " << unreachable.size() << " unreachable tokens");
  BOOST_TEST(unreachable.back() == 50256);
  BOOST_TEST(unreachable.size() > 1u);
  BOOST_TEST(unreachable.size() < 1000u);
  for (int32_t id : unreachable)
    BOOST_TEST(gpt2().encode(gpt2().token(id)) != std::vector<int32_t>{id}, id);
  // Every other token is its own encoding.
  for (int32_t id = 0; id < 50256; id += 97)
    if (!std::binary_search(unreachable.begin(), unreachable.end(), id))
      BOOST_TEST(gpt2().encode(gpt2().token(id)) == std::vector<int32_t>{id}, id);
}

BOOST_AUTO_TEST_CASE(bad_files_are_refused_naming_the_problem) {
  const tg::testing::TempFolder folder;
  const std::string dir = folder.dir.string();
  const std::string enc = dir + "/encoder.json", merges = dir + "/vocab.bpe";
  tg::text::BpeTrainOptions o;
  o.vocab_size = 260;
  BytePairEncoding::train("aaaa bbbb aaaa", o).save(enc, merges);
  const auto refused = [&](const std::string& encoder_text, const std::string& merges_text,
                           const std::string& expected) {
    write(enc, encoder_text);
    write(merges, merges_text);
    try {
      BytePairEncoding::load(enc, merges);
      BOOST_ERROR("accepted: " << expected);
    } catch (const std::runtime_error& e) {
      BOOST_TEST(std::string(e.what()).find(expected) != std::string::npos, e.what());
    }
  };
  const std::string good_encoder = read(enc), good_merges = read(merges);
  refused("{", good_merges, "not a JSON object");
  refused(R"({"a": 0, "b": 0})", "", "given to two tokens");
  refused(R"({"a": 5})", "", "outside 0..0");
  // A deleted token leaves a gap: the gap is named, not the last token's id.
  refused(R"({"a": 0, "b": 2})", "",
          "token \"b\" has id 2, outside 0..1 (ids must be dense); no token has id 1");
  refused(R"({"a": "x"})", "", "no integer id");
  refused(R"({"\u4e00": 0})", "", "byte alphabet");
  refused(R"({"a": 0})", "", "no token for byte");
  refused(good_encoder, "#version: 0.2\naa\n", "two tokens separated by one space");
  refused(good_encoder, "#version: 0.2\nq z\n", "which encoder.json does not have");
  refused(good_encoder, good_merges + good_merges.substr(good_merges.find('\n') + 1),
          "appears twice");
  BOOST_CHECK_THROW(tg::text::load_bpe(dir + "/missing"), std::invalid_argument);
}

// A vocab.bpe missing merges loaded and reported 50,257 tokens, then encoded Brown into other
// tokens than GPT-2's: now every token must be a byte, a special token or a merge's result.
BOOST_AUTO_TEST_CASE(a_vocabulary_missing_merges_is_refused) {
  const tg::testing::TempFolder folder;
  const std::string enc = folder.file("encoder.json"), merges = folder.file("vocab.bpe");
  gpt2().save(enc, merges);
  const std::string all = read(merges);
  // The header line and the first n merges.
  const auto first_merges = [&](size_t n) {
    size_t end = all.find('\n') + 1;
    for (size_t i = 0; i < n; ++i) end = all.find('\n', end) + 1;
    return all.substr(0, end);
  };
  const auto refused = [&](const std::string& merges_text, const std::string& expected) {
    write(merges, merges_text);
    try {
      BytePairEncoding::load(enc, merges);
      BOOST_ERROR("accepted a vocab.bpe without all its merges");
    } catch (const std::runtime_error& e) {
      BOOST_TEST(std::string(e.what()).find(expected) != std::string::npos, e.what());
    }
  };
  refused(first_merges(25000), "it has 25000 merges where 50257 tokens");
  refused(first_merges(49995), "it has 49995 merges where 50257 tokens");
  refused(first_merges(0), "it has 0 merges where 50257 tokens");
  refused("", "no merge makes the token");
  write(merges, all);
  BOOST_TEST(BytePairEncoding::load(enc, merges).merges() == 50000u);
}

// A language model's data in GPT-2's tokens: the stream is the whole text's encoding (the splits
// joined at word boundaries), nothing is <unk>, and the word counts give the per-word scale.
BOOST_AUTO_TEST_CASE(lm_data_in_gpt2_tokens) {
  tg::text::LMDataOptions o;
  o.corpus_file = std::string(TAPEGRAD_FIXTURES) + "/toy_corpus.txt";
  const tg::text::LMData words = tg::text::load_lm_data(o);
  o.tokenizer = "gpt2";
  const tg::text::LMData d = tg::text::load_lm_data(o);
  BOOST_REQUIRE(d.vocab.bpe() != nullptr);
  BOOST_TEST(d.vocab.size() == 50257u);
  BOOST_TEST(d.vocab.unk() == -1);
  const tg::text::Tokens all = tg::text::read_plain_file(o.corpus_file);
  BOOST_TEST(d.stream == gpt2().encode(tg::text::words_as_text(all)));
  BOOST_TEST(d.train.size() + d.valid.size() + d.test.size() == d.stream.size());
  BOOST_TEST(d.valid.begin == d.train.end);
  // The splits are the word-level splits, in tokens: as many words, at least as many tokens.
  BOOST_TEST(d.valid_words == words.valid.size());
  BOOST_TEST(d.test_words == words.test.size());
  BOOST_TEST(d.test.size() >= d.test_words);
  BOOST_TEST(gpt2().decode(std::span(d.stream).subspan(d.valid.begin, d.valid.size()))[0] == ' ');
  // Counts are the stream's.
  size_t counted = 0;
  for (int32_t id = 0; id < static_cast<int32_t>(d.vocab.size()); ++id)
    counted += d.vocab.count(id);
  BOOST_TEST(counted == d.stream.size());
  // Prompts and samples go through the BPE.
  BOOST_TEST(d.vocab.encode_text("the cat") == gpt2().encode("the cat"));
  std::string text = "the";
  d.vocab.append(text, gpt2().find(" cat"));
  BOOST_TEST(text == "the cat");
  BOOST_CHECK_THROW(d.vocab.save("/tmp/never_written.vocab"), std::logic_error);
}

// Word vectors for subword tokens: every token has a spelling free of white space (GPT-2's
// written form), the training tokens word2vec is given are those spellings, and a vector file
// row named by a spelling lands on that token's row of the table.
BOOST_AUTO_TEST_CASE(subword_tokens_name_word_vector_rows) {
  tg::text::LMDataOptions o;
  o.corpus_file = std::string(TAPEGRAD_FIXTURES) + "/toy_corpus.txt";
  o.tokenizer = "gpt2";
  const tg::text::LMData d = tg::text::load_lm_data(o);
  const int32_t the = gpt2().find(" the"), cat = gpt2().find("cat");
  BOOST_TEST(d.vocab.spelling(the) == "\u0120the");  // "Ġthe"
  std::set<std::string> spellings;
  for (int32_t id = 0; id < static_cast<int32_t>(d.vocab.size()); ++id) {
    const std::string s = d.vocab.spelling(id);
    BOOST_TEST_REQUIRE(!s.empty());
    BOOST_TEST_REQUIRE(
        std::none_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }),
        "token " << id << " is spelled with white space: " << s);
    spellings.insert(s);
  }
  BOOST_TEST(spellings.size() == d.vocab.size());  // one name per row
  const tg::text::Tokens train = d.train_tokens();
  BOOST_TEST_REQUIRE(train.size() == d.train.size());
  for (size_t i = 0; i < train.size(); ++i)
    BOOST_TEST_REQUIRE(train[i] == d.vocab.spelling(d.stream[d.train.begin + i]));
  // Through a vector file and back: the rows named by spellings are found, the rest drawn.
  const tg::testing::TempFolder folder;
  const std::string dir = folder.dir.string(), file = dir + "/vectors.txt";
  tg::text::save_vectors(file, {d.vocab.spelling(the), d.vocab.spelling(cat), "not-a-token"},
                         tg::Tensor::from_vector({3, 2}, {1, 2, 3, 4, 5, 6}),
                         tg::text::VectorFormat::text);
  tg::Generator gen(1);
  tg::text::AlignStats stats;
  const tg::Tensor table =
      tg::text::align_to_vocab(tg::text::load_vectors(file), d.vocab, 2, gen, &stats);
  BOOST_TEST(stats.found == 2u);
  BOOST_TEST(stats.missing == d.vocab.size() - 2);
  BOOST_TEST(table.array()(the, 0) == 1.0f);
  BOOST_TEST(table.array()(cat, 1) == 4.0f);
  // For a word-similarity test a space-and-word token answers for the word, a piece for none.
  const std::vector<std::string> names = tg::text::word_names_of_subwords(
      {d.vocab.spelling(the), d.vocab.spelling(cat), d.vocab.spelling(gpt2().find(" "))});
  BOOST_TEST(names[0] == "the");
  BOOST_TEST(names[1] == "##cat");
  BOOST_TEST(names[2] == "##\u0120");  // a lone space is no word
}

BOOST_AUTO_TEST_SUITE_END()
