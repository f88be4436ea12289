// safetensors round trips, rejection of damaged files, and atomic writes.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>

#include "autograd/autograd.hpp"
#include "base/files.hpp"
#include "temp_folder.hpp"

using namespace tg;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A file whose 8-byte length is followed by the given header text and data bytes.
std::string with_header(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + std::string(data_bytes, '\0');
}

void expect_rejected(const std::string& path, const std::string& fragment) {
  try {
    load_safetensors(path);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find(path) != std::string::npos, what);
    BOOST_TEST(what.find(fragment) != std::string::npos,
               "\"" << what << "\" lacks \"" << fragment << "\"");
    return;
  }
  BOOST_FAIL("accepted a damaged file; expected an error about " << fragment);
}

TensorFile sample() {
  TensorFile f;
  f.tensors["layer.weight"] = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  f.tensors["scalar"] = Tensor::scalar(-0.5f);
  f.ids["ids"] = Ids({4}, {0, 7, -100, 2147483647});
  f.metadata["format"] = "pt";
  return f;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(autograd_io)

BOOST_AUTO_TEST_CASE(round_trip) {
  testing::TempFolder folder;
  save_safetensors(folder.file("a.safetensors"), sample());
  const TensorFile back = load_safetensors(folder.file("a.safetensors"));
  BOOST_TEST(back.tensor("layer.weight").shape() == (Shape{2, 3}));
  BOOST_TEST(back.tensor("layer.weight").array()(1, 2) == 6.0f);
  BOOST_TEST(back.tensor("scalar").item() == -0.5f);
  BOOST_TEST(back.id_array("ids").values == sample().ids["ids"].values,
             boost::test_tools::per_element());
  BOOST_TEST(back.metadata.at("format") == "pt");
  BOOST_CHECK_THROW(back.tensor("missing"), std::out_of_range);
}

BOOST_AUTO_TEST_CASE(reads_the_golden_file_written_by_python) {
  const TensorFile g = load_safetensors(TAPEGRAD_GOLDEN_DIR "/ops.safetensors");
  BOOST_TEST(g.tensor("matmul_2d/in0").shape() == (Shape{3, 4}));
  BOOST_TEST(g.metadata.count("torch") == 1u);
}

BOOST_AUTO_TEST_CASE(rejects_truncated_and_corrupted_files) {
  testing::TempFolder folder;
  const std::string good = folder.file("good.safetensors");
  save_safetensors(good, sample());
  const std::string bytes = slurp(good);

  const std::string p = folder.file("bad.safetensors");
  spit(p, bytes.substr(0, bytes.size() - 3));
  expect_rejected(p, "outside");
  spit(p, bytes.substr(0, 5));
  expect_rejected(p, "too short");
  std::string corrupt = bytes;
  corrupt[8] = '#';  // the header's opening brace
  spit(p, corrupt);
  // Where and why, without nlohmann's "[json.exception.parse_error.101]" tag.
  expect_rejected(p, "header is not valid JSON: parse error at line 1, column 1");
  spit(p, with_header(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 16));
  expect_rejected(p, "needs 16 bytes");
  spit(p, with_header(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 4));
  expect_rejected(p, "unsupported dtype F16");
  spit(
      p,
      with_header(
          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
          12));
  expect_rejected(p, "overlap");
  spit(p, with_header(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8));
  expect_rejected(p, "negative");
  // One tensor named twice: the parser would keep the second silently.
  spit(p, with_header(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                      R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                      8));
  expect_rejected(p, "names 'w' twice");
  expect_rejected(folder.file("does_not_exist.safetensors"), "cannot open");
}

// A header that claims 10^12 floats must fail on the claim, before any allocation.
BOOST_AUTO_TEST_CASE(rejects_huge_claims_before_allocating) {
  testing::TempFolder folder;
  const std::string p = folder.file("huge.safetensors");
  spit(p, with_header(
              R"({"w":{"dtype":"F32","shape":[1000000,1000000],"data_offsets":[0,4000000000000]}})",
              16));
  expect_rejected(p, "more data than the file holds");
  std::string length_only(8, '\xff');
  spit(p, length_only + "{}");
  expect_rejected(p, "header claims");
}

BOOST_AUTO_TEST_CASE(atomic_write_keeps_the_old_file_when_writing_fails) {
  testing::TempFolder folder;
  const std::string p = folder.file("result.json");
  base::atomic_write(p, [](std::ostream& out) { out << "old"; });
  BOOST_CHECK_THROW(base::atomic_write(p,
                                       [](std::ostream& out) {
                                         out << "half";
                                         throw std::runtime_error("crash mid-write");
                                       }),
                    std::runtime_error);
  BOOST_TEST(slurp(p) == "old");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(folder.dir)) ++files;
  BOOST_TEST(files == 1u);  // no temporary left behind
  BOOST_CHECK_THROW(
      base::atomic_write(folder.file("no/such/dir/x"), [](std::ostream& o) { o << 1; }),
      std::runtime_error);
}

// A study names the files it was given by their last component (a folder moved elsewhere is
// the same study); the built-in names stay.
BOOST_AUTO_TEST_CASE(a_path_is_named_by_its_last_component) {
  BOOST_TEST(base::last_path_component("gpt2") == "gpt2");
  BOOST_TEST(base::last_path_component("/work/results/converged/gpt_bpe8k/bpe8k") == "bpe8k");
  BOOST_TEST(base::last_path_component("my-bpe/") == "my-bpe");
  BOOST_TEST(base::last_path_component("data/corpus.txt") == "corpus.txt");
  BOOST_TEST(base::last_path_component("").empty());
}

BOOST_AUTO_TEST_SUITE_END()
