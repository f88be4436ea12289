// build/bin/word2vec: train word vectors, evaluate them, list neighbours.
//   word2vec train --input tokens.txt --output vectors.bin --size 128 --cbow 0 --binary 1
//   word2vec eval --vectors vectors.bin
//   word2vec neighbors --vectors vectors.bin king money said
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "apps/cli.hpp"
#include "apps/programs.hpp"
#include "apps/validators.hpp"
#include "autograd/io.hpp"
#include "base/files.hpp"
#include "distributed/distributed.hpp"
#include "text/bpe.hpp"
#include "text/corpus.hpp"
#include "text/similarity.hpp"
#include "text/vectors.hpp"
#include "text/word2vec.hpp"
#include "train/progress.hpp"

using namespace tg;

namespace {

// word2vec train: the original tool's flags.
struct TrainArgs {
  text::Word2VecOptions o;
  std::string input, output, tokenizer = "word";
  int cbow = 1, binary = 0;
};

CLI::App* add_train(CLI::App& app, TrainArgs& a) {
  auto* train = app.add_subcommand("train", "train vectors on a whitespace-tokenised text file");
  train->add_option("--input", a.input, "training text (whitespace-separated tokens)")
      ->required()
      ->check(CLI::ExistingFile);
  train->add_option("--output", a.output, "where to write the vectors")->required();
  train
      ->add_option("--tokenizer", a.tokenizer,
                   "word: the input's whitespace-separated tokens; gpt2 or a BPE's folder / "
                   "encoder.json: the input's words joined by spaces and encoded, as train_lm "
                   "reads them with the same --tokenizer, each token named as GPT-2's files "
                   "write it (\"Ġthe\"), the name the pretrained modes look it up by")
      ->capture_default_str();
  train->add_option("--size", a.o.size, "vector dimension")
      ->capture_default_str()
      ->check(apps::positive());
  train->add_option("--window", a.o.window, "max context distance")
      ->capture_default_str()
      ->check(apps::positive());
  train
      ->add_option("--negative", a.o.negative,
                   "negative samples per pair (the only output layer: at least 1)")
      ->capture_default_str()
      ->check(apps::positive());
  train->add_option("--sample", a.o.sample, "sub-sampling threshold (0 = off)")
      ->capture_default_str()
      ->check(apps::non_negative(false));
  train->add_option("--iter", a.o.iter, "epochs")->capture_default_str()->check(apps::positive());
  train->add_option("--min-count", a.o.min_count, "drop words rarer than this")
      ->capture_default_str();
  train->add_option("--alpha", a.o.alpha,
                    "starting learning rate (default 0.05 CBOW, 0.025 skip-gram)");
  train->add_option("--cbow", a.cbow, "1 = CBOW, 0 = skip-gram")
      ->capture_default_str()
      ->check(apps::number_in(0, 1, false, true));
  train->add_option("--binary", a.binary, "1 = binary output, 0 = text")
      ->capture_default_str()
      ->check(apps::number_in(0, 1, false, true));
  train->add_option("--threads", a.o.threads, "worker threads (1 = deterministic)")
      ->capture_default_str()
      ->check(apps::positive());
  train->add_option("--seed", a.o.seed, "random seed")->capture_default_str();
  return train;
}

// Words as a BPE's tokens, each spelled as GPT-2's files write it.
text::Tokens subword_spellings(const text::BytePairEncoding& bpe, const text::Tokens& words) {
  text::Tokens spelled;
  for (int32_t id : bpe.encode(text::words_as_text(words)))
    spelled.push_back(text::gpt2_written(bpe.token(id)));
  return spelled;
}

int train_vectors(TrainArgs a) {
  text::Word2VecOptions& o = a.o;
  o.cbow = a.cbow == 1;
  std::fprintf(stderr,
               "word2vec train: input %s output %s size %zu window %zu negative %zu sample %g "
               "iter %zu min-count %zu alpha %g cbow %d binary %d threads %zu seed %llu "
               "tokenizer %s\n",
               a.input.c_str(), a.output.c_str(), o.size, o.window, o.negative, o.sample, o.iter,
               o.min_count, o.alpha > 0 ? o.alpha : (o.cbow ? 0.05 : 0.025), a.cbow, a.binary,
               o.threads, static_cast<unsigned long long>(o.seed), a.tokenizer.c_str());
  const base::FileFlag outputs[] = {{"--output", a.output}};
  std::vector<base::FileFlag> inputs = text::tokenizer_inputs(a.tokenizer);
  inputs.push_back({"--input", a.input});
  base::check_outputs(outputs, inputs);
  text::Tokens tokens = text::read_plain_file(a.input);
  if (tokens.empty()) throw std::runtime_error(a.input + ": no tokens");
  if (a.tokenizer != "word") tokens = subword_spellings(text::load_bpe(a.tokenizer), tokens);
  train::LiveLine line;
  auto result = text::train_word2vec(tokens, o, [&](const text::Word2VecProgress& p) {
    char buf[160];
    const double eta = p.fraction > 0 ? p.elapsed_s * (1 - p.fraction) / p.fraction : 0;
    std::snprintf(buf, sizeof buf,
                  "progress %5.1f%%  alpha %.6f  words/s %.0fk  elapsed %s  ETA %s",
                  100 * p.fraction, p.alpha, p.words_per_s / 1000,
                  train::format_duration(p.elapsed_s).c_str(), train::format_duration(eta).c_str());
    line.update(buf);
  });
  char buf[200];
  std::snprintf(
      buf, sizeof buf, "trained %zu words x %zu epochs, vocabulary %zu, in %.2f s (%.0f words/s)",
      result.corpus_words, o.iter, result.words.size(), result.seconds, result.words_per_s);
  line.finish(buf);
  text::save_vectors(a.output, result.words, result.input,
                     a.binary ? text::VectorFormat::binary : text::VectorFormat::text);
  std::fprintf(stderr, "wrote %s\n", a.output.c_str());
  return 0;
}

// word2vec eval: word similarity and analogies.
struct EvalArgs {
  std::string vectors, wordsim = text::evaluation_file("wordsim353.tsv"),
                       simlex = text::evaluation_file("simlex999.txt"),
                       analogies = text::evaluation_file("questions-words.txt");
};

CLI::App* add_eval(CLI::App& app, EvalArgs& a) {
  auto* eval = app.add_subcommand("eval", "WordSim-353 / SimLex-999 Spearman and analogy accuracy");
  eval->add_option("--vectors", a.vectors, "word2vec text or binary file")
      ->required()
      ->check(CLI::ExistingFile);
  eval->add_option("--wordsim", a.wordsim, "word-pair file")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  eval->add_option("--simlex", a.simlex, "word-pair file")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  eval->add_option("--analogies", a.analogies, "analogy questions")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  return eval;
}

int evaluate_vectors(const EvalArgs& a) {
  const text::WordVectors v = text::load_vectors(a.vectors);
  const text::VectorIndex index(v.words, v.matrix);
  for (const auto& [name, path] :
       {std::pair{"WordSim-353", a.wordsim}, std::pair{"SimLex-999", a.simlex}}) {
    const auto s = text::evaluate_similarity(index, path);
    if (s.measured())
      std::printf("%-12s Spearman %.4f  pairs %zu/%zu (%.1f%% out of vocabulary)\n", name,
                  s.spearman, s.used, s.pairs, 100 * s.oov_ratio());
    else
      std::printf("%-12s Spearman n/a  pairs %zu/%zu (at least %zu with both words known needed)\n",
                  name, s.used, s.pairs, text::SimilarityScore::kMinPairs);
  }
  const auto an = text::evaluate_analogies(index, a.analogies);
  std::printf("%-12s accuracy %.4f  questions %zu/%zu\n", "analogies", an.accuracy, an.used,
              an.questions);
  return 0;
}

// word2vec neighbors: nearest words by cosine.
struct NeighborArgs {
  std::string vectors;
  std::vector<std::string> words;
  size_t k = 10;
};

CLI::App* add_neighbors(CLI::App& app, NeighborArgs& a) {
  auto* neighbors = app.add_subcommand("neighbors", "nearest neighbours by cosine");
  neighbors->add_option("--vectors", a.vectors, "word2vec text or binary file")
      ->required()
      ->check(CLI::ExistingFile);
  neighbors->add_option("-k", a.k, "neighbours per word")->capture_default_str();
  neighbors->add_option("words", a.words, "query words")->required();
  return neighbors;
}

int print_neighbours(const NeighborArgs& a) {
  const text::WordVectors v = text::load_vectors(a.vectors);
  const text::VectorIndex index(v.words, v.matrix);
  for (const auto& w : a.words) {
    const int row = index.find(w, false) >= 0 ? index.find(w, false) : index.find(w);
    if (row < 0) {
      std::printf("%s: not in the vocabulary\n", w.c_str());
      continue;
    }
    std::printf("%s:", w.c_str());
    for (const auto& [r, s] : index.nearest(index.row(row), a.k, {row}))
      std::printf(" %s (%.3f)", index.word(r).c_str(), s);
    std::printf("\n");
  }
  return 0;
}

// word2vec export: a split of the Brown corpus as plain text.
struct ExportArgs {
  std::string split = "train", corpus = "brown", output;
};

CLI::App* add_export(CLI::App& app, ExportArgs& a) {
  auto* exporter =
      app.add_subcommand("export", "write a corpus split as a whitespace-tokenised text file");
  exporter->add_option("--corpus", a.corpus, "brown")
      ->capture_default_str()
      ->check(CLI::IsMember({"brown"}));
  exporter->add_option("--split", a.split, "train, valid, test or all (Bengio et al. protocol)")
      ->capture_default_str()
      ->check(CLI::IsMember({"train", "valid", "test", "all"}));
  exporter->add_option("--output", a.output, "file to write")->required();
  return exporter;
}

int export_split(const ExportArgs& a) {
  const text::Tokens all = text::read_brown(text::brown_dir_or_fetch());
  const text::Splits s = text::bengio_splits(all);
  const text::Tokens& part = a.split == "train"   ? s.train
                             : a.split == "valid" ? s.valid
                             : a.split == "test"  ? s.test
                                                  : all;
  base::atomic_write(a.output, [&](std::ostream& out) {
    for (size_t i = 0; i < part.size(); ++i) out << part[i] << ((i + 1) % 1000 == 0 ? '\n' : ' ');
    out << '\n';
  });
  std::fprintf(stderr, "wrote %zu tokens (%s split) to %s\n", part.size(), a.split.c_str(),
               a.output.c_str());
  return 0;
}

}  // namespace

int tg::apps::word2vec_main(int argc, char** argv) {
  CLI::App app{"word2vec: skip-gram / CBOW with negative sampling, and evaluation of word vectors"};
  apps::add_version_flag(app);
  app.require_subcommand(1);
  TrainArgs train_args;
  EvalArgs eval_args;
  NeighborArgs neighbor_args;
  ExportArgs export_args;
  const CLI::App* train = add_train(app, train_args);
  const CLI::App* eval = add_eval(app, eval_args);
  const CLI::App* neighbors = add_neighbors(app, neighbor_args);
  const CLI::App* exporter = add_export(app, export_args);
  CLI11_PARSE(app, argc, argv);
  return apps::guarded_main("word2vec", [&] {
    // word2vec is multi-threaded, not data-parallel: under mpirun rank 0 does the work alone.
    if (!distributed::is_main()) return 0;
    if (train->parsed()) return train_vectors(train_args);
    if (eval->parsed()) return evaluate_vectors(eval_args);
    if (neighbors->parsed()) return print_neighbours(neighbor_args);
    if (exporter->parsed()) return export_split(export_args);
    return 0;
  });
}
