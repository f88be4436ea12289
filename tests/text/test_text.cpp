// Corpus parsing, splits, vocabulary files, word2vec files.
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "temp_folder.hpp"
#include "text/corpus.hpp"
#include "text/lm_data.hpp"
#include "text/vectors.hpp"
#include "text/vocab.hpp"

using namespace tg;
using namespace tg::text;
namespace fs = std::filesystem;

namespace {
void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
template <class F>
void expect_error(F f, const std::string& fragment) {
  try {
    f();
  } catch (const std::exception& e) {
    BOOST_TEST(std::string(e.what()).find(fragment) != std::string::npos,
               "\"" << e.what() << "\" lacks \"" << fragment << "\"");
    return;
  }
  BOOST_FAIL("no error; expected one mentioning " << fragment);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(text_corpus)

BOOST_AUTO_TEST_CASE(tagged_format) {
  const std::string text =
      "\n\n\tThe/at jury/nn said/vbd 1/2/cd ``/`` and/or/cc ./.\n\n\t  Dr./np-tl  /x\n";
  const Tokens t = parse_tagged(text);
  const Tokens want = {"The", "jury", "said", "1/2", "``", "and/or", ".", "Dr.", "/x"};
  BOOST_TEST(t == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(brown_reads_500_files_in_order_and_names_a_gap) {
  testing::TempFolder folder;
  size_t n = 0;
  for (char g : std::string("abcdefghjklmnpr"))
    for (int i = 1; i <= 40 && n < 500; ++i, ++n) {
      char name[16];
      std::snprintf(name, sizeof name, "c%c%02d", g, i);
      spit(folder.file(name), std::string("w") + name + "/nn ./.\n");
    }
  const Tokens t = read_brown(folder.dir.string());
  BOOST_TEST(t.size() == 1000u);
  BOOST_TEST(t[0] == "wca01");
  BOOST_TEST(t[2] == "wca02");
  fs::remove(folder.dir / "cb03");
  expect_error([&] { read_brown(folder.dir.string()); }, "found 499");
}

// The corpus cache: $TAPEGRAD_DATA when set; for a program of the build tree (this test)
// data/cache in the source tree. (Installed programs use ~/.cache/tapegrad: tests/examples.sh.)
BOOST_AUTO_TEST_CASE(corpus_cache_folder) {
  const char* before = std::getenv("TAPEGRAD_DATA");
  const std::string saved = before ? before : "";
  ::setenv("TAPEGRAD_DATA", "/some/shared/cache", 1);
  BOOST_TEST(text::data_root() == "/some/shared/cache");
  ::unsetenv("TAPEGRAD_DATA");
  BOOST_TEST(text::data_root() ==
             (std::filesystem::path(TAPEGRAD_SOURCE_DIR) / "data" / "cache").string());
  if (before) ::setenv("TAPEGRAD_DATA", saved.c_str(), 1);
}

BOOST_AUTO_TEST_CASE(splits_and_unk) {
  Tokens t;
  for (int i = 0; i < 100; ++i)
    t.push_back(i % 10 == 0 ? "rare" + std::to_string(i) : "w" + std::to_string(i % 3));
  const Splits s = bengio_splits(t, 60, 20);
  BOOST_TEST(s.train.size() == 60u);
  BOOST_TEST(s.valid.size() == 20u);
  BOOST_TEST(s.test.size() == 20u);
  BOOST_TEST(s.valid.front() == t[60]);
  expect_error([&] { bengio_splits(t, 80, 20); }, "fewer than");
  const Splits f = fraction_splits(t, "0.5,0.25,0.25");
  BOOST_TEST(f.train.size() == 50u);
  expect_error([&] { fraction_splits(t, "0.5,0.5"); }, "three positive fractions");
  expect_error([&] { fraction_splits(t, "0.5,x,0.25"); }, "'x' is not a number");

  const Vocabulary v = Vocabulary::build(t, 4);  // each rare word occurs once -> <unk>
  BOOST_TEST(v.size() == 4u);
  BOOST_TEST(v.word(0) == "<unk>");
  BOOST_TEST(v.count(0) == 10u);
  BOOST_TEST(v.id("rare0") == v.unk());
  BOOST_TEST(v.id("w1") != v.unk());
  BOOST_CHECK_THROW(v.word(4), std::out_of_range);
}

BOOST_AUTO_TEST_CASE(vocabulary_file_round_trip_and_rejections) {
  testing::TempFolder folder;
  const Vocabulary v = Vocabulary::build({"b", "a", "a", "c", "c", "c"}, 1);
  v.save(folder.file("v.txt"));
  const Vocabulary back = Vocabulary::load(folder.file("v.txt"));
  BOOST_TEST(back.words() == v.words(), boost::test_tools::per_element());
  BOOST_TEST(back.words()[1] == "c");  // most frequent first
  const std::string p = folder.file("bad.txt");
  spit(p, "tapegrad-vocab 2\n<unk>\t0\nx\tlots\n");
  expect_error([&] { Vocabulary::load(p); }, ":3: bad count 'lots'");
  spit(p, "tapegrad-vocab 3\n<unk>\t0\nx\t1\n");
  expect_error([&] { Vocabulary::load(p); }, "declares 3 words but the file has 2");
  spit(p, "tapegrad-vocab 2\n<unk>\t0\n<unk>\t1\n");
  expect_error([&] { Vocabulary::load(p); }, "appears twice");
  spit(p, "hello\n");
  expect_error([&] { Vocabulary::load(p); }, ":1: missing");
  expect_error([&] { Vocabulary::load(folder.file("none")); }, "cannot open");
}

BOOST_AUTO_TEST_CASE(lm_data_from_a_plain_file) {
  LMDataOptions o;
  o.corpus_file = TAPEGRAD_FIXTURES "/toy_corpus.txt";
  o.min_count = 2;
  const LMData d = load_lm_data(o);
  BOOST_TEST(d.train.size() + d.valid.size() + d.test.size() == d.stream.size());
  BOOST_TEST(d.valid.begin == d.train.end);
  o.train_fraction = 0.25;
  const LMData quarter = load_lm_data(o);
  BOOST_TEST(quarter.train.size() == (d.train.size() + 2) / 4);
  BOOST_TEST(quarter.valid.begin == d.valid.begin);  // same evaluation data
  o.train_fraction = 1.5;
  expect_error([&] { load_lm_data(o); }, "--train-fraction");
  testing::TempFolder folder;
  spit(folder.file("empty.txt"), "  \n\n");
  o.train_fraction = 1.0;
  o.corpus_file = folder.file("empty.txt");
  expect_error([&] { load_lm_data(o); }, "empty");
}

// Each reason a corpus or a vectors file cannot be read is named, not guessed at.
BOOST_AUTO_TEST_CASE(read_file_names_why_a_path_cannot_be_read) {
  testing::TempFolder folder;
  expect_error([&] { read_file(folder.file("missing.txt")); }, "missing.txt: no such file");
  expect_error([&] { read_file(folder.dir.string()); }, ": a folder, not a file");
  expect_error([&] { read_file("/dev/zero"); },
               "/dev/zero: a character device, not a regular file");
  spit(folder.file("a.txt"), "a b\n");
  BOOST_TEST(read_file(folder.file("a.txt")) == "a b\n");
  // The vectors reader checks the same way (it reads a size first).
  expect_error([&] { load_vectors(folder.dir.string(), VectorFormat::autodetect); },
               ": a folder, not a file");
  expect_error([&] { load_vectors("/dev/zero", VectorFormat::autodetect); },
               "/dev/zero: a character device, not a regular file");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(text_vectors)

BOOST_AUTO_TEST_CASE(text_and_binary_round_trips) {
  testing::TempFolder folder;
  const std::vector<std::string> words = {"king", "queen", "the"};
  const Tensor m = Tensor::from_vector(
      {3, 4}, {0.1f, -2.5f, 3e-8f, 1.0f / 3.0f, 4, 5, 6, 7, -1, -0.0f, 1e20f, 8});
  for (auto format : {VectorFormat::text, VectorFormat::binary}) {
    const std::string p = folder.file("v");
    save_vectors(p, words, m, format);
    for (auto how : {format, VectorFormat::autodetect}) {
      const WordVectors v = load_vectors(p, how);
      BOOST_TEST(v.words == words, boost::test_tools::per_element());
      BOOST_TEST(std::memcmp(v.matrix.data(), m.data(), 12 * sizeof(float)) == 0);  // exact
    }
  }
  BOOST_TEST(slurp(folder.file("v")).rfind("3 4\nking ", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(malformed_files_are_rejected_with_location) {
  testing::TempFolder folder;
  const std::string p = folder.file("bad.txt");
  auto text = [&](const std::string& body) {
    spit(p, body);
    return p;
  };
  expect_error([&] { load_vectors(text("2 3\na 1 2 3\n"), VectorFormat::text); },
               ":3: file ends after 1 of the 2");
  expect_error([&] { load_vectors(text("1 3\na 1 2\n"), VectorFormat::text); },
               ":2: expected 3 values for 'a', found 2");
  expect_error([&] { load_vectors(text("1 3\na 1 2 3 4\n"), VectorFormat::text); },
               ":2: more than 3 values");
  expect_error([&] { load_vectors(text("1 3\na 1 x2 3\n"), VectorFormat::text); },
               ":2: 'x2' is not a number");
  expect_error([&] { load_vectors(text("1 3\na 1 nan 3\n"), VectorFormat::text); }, "not finite");
  expect_error([&] { load_vectors(text("2 2\na 1 2\na 3 4\n"), VectorFormat::text); },
               ":3: word 'a' appears twice");
  expect_error([&] { load_vectors(text("1 2\na 1 2\nb 3 4\n"), VectorFormat::text); },
               "more vectors than the header's 1");
  expect_error([&] { load_vectors(text("two 3\n"), VectorFormat::text); }, ":1: header");
  expect_error([&] { load_vectors(text("1000000000 1000\na 1\n")); }, "more than the");
  expect_error([&] { load_vectors(folder.file("missing")); }, "missing: no such file");
  // Binary: truncated inside a vector.
  save_vectors(p, {"a", "b"}, Tensor::from_vector({2, 2}, {1, 2, 3, 4}), VectorFormat::binary);
  const std::string bytes = slurp(p);
  spit(p, bytes.substr(0, bytes.size() - 5));
  expect_error([&] { load_vectors(p, VectorFormat::binary); }, "inside the vector of 'b'");
  spit(p, bytes.substr(0, bytes.size() - 10));
  expect_error([&] { load_vectors(p, VectorFormat::binary); }, "byte");
}

BOOST_AUTO_TEST_CASE(align_to_vocabulary) {
  WordVectors v;
  v.words = {"the", "cat"};
  v.index = {{"the", 0}, {"cat", 1}};
  v.matrix = Tensor::from_vector({2, 2}, {1, 2, 3, 4});
  const Vocabulary vocab =
      Vocabulary::build({"the", "the", "dog", "cat"}, 1);  // <unk> the cat dog (ties by word)
  Generator gen(1);
  AlignStats s;
  const Tensor t = align_to_vocab(v, vocab, 2, gen, &s);
  BOOST_TEST(s.found == 2u);
  BOOST_TEST(s.missing == 2u);  // <unk> and dog
  BOOST_TEST(t.array()(vocab.id("cat"), 1) == 4.0f);
  BOOST_TEST(s.init_std > 1.0f);
  expect_error([&] { align_to_vocab(v, vocab, 3, gen); },
               "dimension 2 but the token table reads vectors of width 3");
}

BOOST_AUTO_TEST_SUITE_END()
