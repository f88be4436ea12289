// build/bin/tokenize: byte-level BPE from the command line.
//   tokenize encode --tokenizer gpt2 --input story.txt --output story.ids
//   tokenize decode --tokenizer gpt2 --input story.ids --output story.txt
//   tokenize train  --input corpus.txt --vocab-size 8192 --output my-bpe/
//   tokenize stats  --tokenizer my-bpe --input corpus.txt
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/programs.hpp"
#include "apps/validators.hpp"
#include "base/escape.hpp"
#include "base/files.hpp"
#include "distributed/distributed.hpp"
#include "text/bpe.hpp"
#include "text/corpus.hpp"

using namespace tg;

namespace {

struct Args {
  std::string tokenizer = "gpt2", input, output, corpus;
  size_t repeats = 1;
  text::BpeTrainOptions train;
};

std::string read_input(const Args& a) {
  if (!a.corpus.empty()) {  // Brown's words, or those of its training split (Bengio et al.)
    const text::Tokens all = text::read_brown(text::brown_dir_or_fetch());
    return text::words_as_text(a.corpus == "brown" ? all : text::bengio_splits(all).train);
  }
  return text::read_file(a.input);
}

// Refuses, before any work, an --output that cannot be written or would replace what the
// command reads: its --input or the tokenizer's files.
void check_output(const Args& a) {
  const base::FileFlag outputs[] = {{"--output", a.output}};
  std::vector<base::FileFlag> inputs = text::tokenizer_inputs(a.tokenizer);
  inputs.push_back({"--input", a.input});
  base::check_outputs(outputs, inputs);
}

// Writes to --output atomically, or to standard output when it is not given.
void write_output(const Args& a, const std::function<void(std::ostream&)>& write) {
  if (a.output.empty()) {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("writing to standard output failed");
  } else {
    base::atomic_write(a.output, write);
  }
}

void add_common(CLI::App* sub, Args& a, const char* input_help, bool output = true) {
  sub->add_option("--tokenizer", a.tokenizer,
                  "gpt2, a folder with encoder.json and vocab.bpe, or an encoder.json")
      ->capture_default_str();
  sub->add_option("--input", a.input, input_help)->required();
  if (output) sub->add_option("--output", a.output, "file to write (default: standard output)");
}

int encode(const Args& a) {
  check_output(a);
  const text::BytePairEncoding bpe = text::load_bpe(a.tokenizer);
  const std::vector<int32_t> ids = bpe.encode(read_input(a));
  write_output(a, [&](std::ostream& out) {
    for (size_t i = 0; i < ids.size(); ++i) out << ids[i] << ((i + 1) % 32 == 0 ? '\n' : ' ');
    out << '\n';
  });
  return 0;
}

int decode(const Args& a) {
  check_output(a);
  const text::BytePairEncoding bpe = text::load_bpe(a.tokenizer);
  std::istringstream in(read_input(a));
  std::vector<int32_t> ids;
  std::string word;
  size_t number = 0;
  while (in >> word) {
    ++number;
    // An id is written as digits alone: "-0", "+5" or "1e3" are not ids.
    size_t used = 0;
    long long id = -1;
    if (word.find_first_not_of("0123456789") == std::string::npos && word.size() <= 12)
      id = std::stoll(word, &used);
    if (used != word.size() || id < 0 || id >= static_cast<long long>(bpe.size())) {
      const std::string shown = base::escape_bytes(word.substr(0, 40));
      throw std::invalid_argument("--input " + a.input + ": token " + std::to_string(number) +
                                  " is '" + shown + (word.size() > 40 ? "...'" : "'") +
                                  ", not an id of the " + std::to_string(bpe.size()) +
                                  "-token vocabulary");
    }
    ids.push_back(static_cast<int32_t>(id));
  }
  const std::string text = bpe.decode(ids);
  write_output(a, [&](std::ostream& out) { out << text; });
  return 0;
}

// Refuses, before training (which can take minutes), an --output folder its two files cannot
// be written into. A folder that does not exist yet is made only once the vocabulary is ready,
// so that a refused or failed run leaves nothing behind; until then the deepest folder on its
// path that does exist must take a new file.
void check_vocabulary_folder(const Args& a) {
  namespace fs = std::filesystem;
  const fs::path dir = a.output;
  if (fs::exists(dir) && !fs::is_directory(dir))
    throw std::invalid_argument("--output " + a.output +
                                ": not a folder (the vocabulary is two files, written into it)");
  if (fs::is_directory(dir)) {
    const base::FileFlag outputs[] = {{"--output", (dir / "encoder.json").string()},
                                      {"--output", (dir / "vocab.bpe").string()}};
    const base::FileFlag inputs[] = {{"--input", a.input}};
    base::check_outputs(outputs, inputs);
    return;
  }
  fs::path existing = dir.parent_path();
  while (!existing.empty() && !fs::exists(existing)) existing = existing.parent_path();
  if (existing.empty()) existing = ".";
  if (!fs::is_directory(existing))
    throw std::invalid_argument("--output " + a.output + ": " + existing.string() +
                                " is not a folder, so no folder can be made in it");
  base::check_writable((existing / "encoder.json").string(),
                       "--output " + a.output + ": no folder can be made, as a file");
}

int train(const Args& a) {
  namespace fs = std::filesystem;
  check_vocabulary_folder(a);
  const std::string text = read_input(a);
  const auto start = std::chrono::steady_clock::now();
  const text::BytePairEncoding bpe = text::BytePairEncoding::train(text, a.train);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const fs::path dir = a.output;
  const bool existed = fs::exists(dir);
  std::error_code made;
  fs::create_directories(dir, made);
  if (made)
    throw std::runtime_error("--output " + a.output +
                             ": cannot make the folder: " + made.message());
  // Both files are written into a folder of their own first and moved into place only when both
  // are whole: a failed write (a full disk) leaves neither a vocabulary whose two files
  // disagree nor, when this run made it, an empty folder.
  const fs::path staging = dir / (".tokenize.tmp." + std::to_string(::getpid()));
  std::error_code ignored;
  try {
    fs::create_directories(staging);
    bpe.save((staging / "encoder.json").string(), (staging / "vocab.bpe").string());
    fs::rename(staging / "encoder.json", dir / "encoder.json");
    fs::rename(staging / "vocab.bpe", dir / "vocab.bpe");
    fs::remove(staging);
  } catch (const std::exception& e) {
    fs::remove_all(staging, ignored);
    if (!existed) fs::remove(dir, ignored);  // only if empty: nothing of anyone else's
    throw std::runtime_error("--output " + a.output + ": the vocabulary was not written (" +
                             (existed ? "the folder is as it was" : "no folder is left") +
                             "): " + e.what());
  }
  std::fprintf(stderr, "trained %zu tokens (%zu merges) on %zu bytes in %.1f s: %s\n", bpe.size(),
               bpe.merges(), text.size(), seconds, a.output.c_str());
  // Not an error (a small text makes a small vocabulary), but not what was asked for either.
  if (bpe.size() < a.train.vocab_size)
    std::fprintf(stderr,
                 "note: %zu of the %zu tokens asked for: no other pair occurs --min-pair-count "
                 "(%zu) times or more in the input\n",
                 bpe.size(), a.train.vocab_size, a.train.min_pair_count);
  return 0;
}

int stats(const Args& a) {
  const text::BytePairEncoding bpe = text::load_bpe(a.tokenizer);
  const std::string text = read_input(a);
  // The median of --repeats encodings of the whole text, one thread.
  std::vector<int32_t> ids;
  std::vector<double> times;
  for (size_t r = 0; r < a.repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    ids = bpe.encode(text);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  const double seconds = times[times.size() / 2];
  std::vector<bool> used(bpe.size(), false);
  size_t distinct = 0;
  for (int32_t id : ids) distinct += !used[id], used[id] = true;
  const bool round_trip = bpe.decode(ids) == text;
  std::printf(
      "tokenizer %s (%zu tokens, hash %s)\nbytes %zu  tokens %zu  bytes/token %.3f  "
      "distinct tokens %zu (%.1f%% of the vocabulary)\nencoded in %.3f s (%.2f MB/s), "
      "decode(encode(x)) == x: %s\n",
      a.tokenizer.c_str(), bpe.size(), bpe.hash().c_str(), text.size(), ids.size(),
      ids.empty() ? 0.0 : static_cast<double>(text.size()) / static_cast<double>(ids.size()),
      distinct, 100.0 * static_cast<double>(distinct) / static_cast<double>(bpe.size()), seconds,
      seconds > 0 ? static_cast<double>(text.size()) / seconds / 1e6 : 0.0,
      round_trip ? "yes" : "NO");
  return round_trip ? 0 : 1;
}

}  // namespace

int tg::apps::tokenize_main(int argc, char** argv) {
  CLI::App app{"tokenize: byte-level BPE (GPT-2's, or one trained here): encode, decode, train"};
  apps::add_version_flag(app);
  app.require_subcommand(1);
  Args enc, dec, tr, st;
  CLI::App* encode_cmd = app.add_subcommand("encode", "text -> token ids (whitespace-separated)");
  add_common(encode_cmd, enc, "text file (any bytes)");
  CLI::App* decode_cmd = app.add_subcommand("decode", "token ids -> the text's bytes");
  add_common(decode_cmd, dec, "file of whitespace-separated ids");
  CLI::App* train_cmd =
      app.add_subcommand("train",
                         "learn a byte-level BPE vocabulary; writes encoder.json and "
                         "vocab.bpe into the --output folder");
  train_cmd->add_option("--input", tr.input, "training text");
  train_cmd->add_option("--corpus", tr.corpus, "train on Brown instead of --input")
      ->check(CLI::IsMember({"brown-train", "brown"}));
  train_cmd->add_option("--output", tr.output, "folder to write the two files into")->required();
  train_cmd
      ->add_option("--vocab-size", tr.train.vocab_size, "tokens, bytes and end-of-text included")
      ->capture_default_str()
      ->check(apps::number_in(257, 1 << 24, false, true));
  train_cmd
      ->add_option("--min-pair-count", tr.train.min_pair_count,
                   "stop when the most frequent pair occurs fewer times")
      ->capture_default_str()
      ->check(apps::positive());
  train_cmd
      ->add_option("--end-of-text", tr.train.end_of_text,
                   "the end-of-text token appended last (empty: none)")
      ->capture_default_str();
  CLI::App* stats_cmd = app.add_subcommand("stats", "tokens per byte, vocabulary use, speed");
  add_common(stats_cmd, st, "text file", false);
  stats_cmd->add_option("--repeats", st.repeats, "encode this many times, report the median")
      ->capture_default_str()
      ->check(apps::positive());
  CLI11_PARSE(app, argc, argv);
  return apps::guarded_main("tokenize", [&] {
    if (!distributed::is_main()) return 0;
    if (encode_cmd->parsed()) return encode(enc);
    if (decode_cmd->parsed()) return decode(dec);
    if (train_cmd->parsed()) {
      if (tr.input.empty() == tr.corpus.empty())
        throw std::invalid_argument("tokenize train: give one of --input FILE or --corpus");
      return train(tr);
    }
    if (stats_cmd->parsed()) return stats(st);
    return 0;
  });
}
