#include "apps/flags.hpp"

#include "apps/validators.hpp"

#include <map>

#include "train/models.hpp"
#include "train/optimizers.hpp"

namespace tg::apps {

void add_data_flags(CLI::App& app, text::LMDataOptions& d) {
  app.add_option("--corpus", d.corpus, "built-in corpus: brown (Bengio et al. 2003 protocol)")
      ->capture_default_str();
  app.add_option("--corpus-file", d.corpus_file, "your own plain text (whitespace tokens) instead")
      ->check(CLI::ExistingFile);
  app.add_option("--split", d.split, "train,valid,test fractions for --corpus-file")
      ->capture_default_str();
  app.add_option("--tokenizer", d.tokenizer,
                 "word (rare words -> <unk>), gpt2 (GPT-2's byte-level BPE), or the folder / "
                 "encoder.json of a BPE trained with `tokenize train`")
      ->capture_default_str();
  app.add_option("--min-count", d.min_count, "rarer words map to <unk> (--tokenizer word)")
      ->capture_default_str()
      ->check(positive());
  add_enum_option(app, "--vocab-counts", d.vocab_counts, text::kVocabCountsNames,
                  "count word frequencies on all tokens (Bengio) or the training split only");
  app.add_option("--train-fraction", d.train_fraction,
                 "use the first fraction of the training split")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0, false, false) & positive(false));
}

namespace {

// A flag naming a registered part (a model, an optimizer, a kind of token table): an unknown
// name is refused with the registered ones, and `hint` when it gives one for that name.
CLI::Validator registered_name(bool (*has)(const std::string&),
                               std::string (*unknown)(const std::string&), const char* type,
                               std::string (*hint)(const std::string&) = nullptr) {
  return CLI::Validator(
      [has, unknown, hint](std::string& name) {
        return has(name) ? std::string() : unknown(name) + (hint ? hint(name) : "");
      },
      type);
}

// An unknown kind of table named like a study's mode ("learned-tied"): train_lm ties with a flag.
std::string tie_hint(const std::string& name) {
  return name.ends_with("-tied") ? "; a table is tied with --tied" : "";
}

// A repeatable KEY=VALUE flag into `settings` (a later KEY replaces an earlier one).
CLI::Option* add_settings_option(CLI::App& app, const std::string& flag,
                                 std::map<std::string, std::string>& settings,
                                 const std::string& description) {
  return app
      .add_option_function<std::vector<std::string>>(
          flag,
          [&settings, flag](const std::vector<std::string>& pairs) {
            for (const std::string& kv : pairs) {
              const size_t eq = kv.find('=');
              if (eq == 0 || eq == std::string::npos)
                throw CLI::ValidationError(flag, "'" + kv + "' is not KEY=VALUE");
              settings[kv.substr(0, eq)] = kv.substr(eq + 1);
            }
          },
          description)
      ->type_name("KEY=VALUE");
}

void add_model_flags(CLI::App& app, train::ModelConfig& m) {
  app.add_option("--model", m.name, "a registered model: " + train::model_help())
      ->capture_default_str()
      ->check(registered_name(train::has_model, train::unknown_model_message, "MODEL"));
  add_settings_option(app, "--model-option", m.options,
                      "a registered model's own setting (repeatable); MODEL:KEY=VALUE gives it "
                      "to one model of a study")
      ->type_name("[MODEL:]KEY=VALUE");
  app.add_option("--d-model", m.d_model, "embedding / residual width")
      ->capture_default_str()
      ->check(positive());
  app.add_option("--layers", m.layers, "GPT: transformer blocks; lstm, gru: recurrent layers")
      ->capture_default_str()
      ->check(positive());
  app.add_option("--heads", m.heads, "GPT: attention heads")
      ->capture_default_str()
      ->check(positive());
  add_enum_option(
      app, "--positions", m.positions, nn::kPositionsNames,
      "GPT: a learned position table (GPT-2), rotary queries and keys (LLaMA), or none");
  app.add_option("--context", m.context, "tokens per training window (GPT: its context size)")
      ->capture_default_str()
      ->check(number_in(1, 1e6, false, true));
  app.add_option("--ngram", m.ngram, "NPLM: n (predicts from n-1 words)")
      ->capture_default_str()
      ->check(number_in(2, 64, false, true));
  app.add_option("--hidden", m.hidden,
                 "hidden width (the NPLM's hidden layer, the lstm's and gru's state; a "
                 "registered model may read it as spec.config.hidden)")
      ->capture_default_str()
      ->check(positive());
  app.add_flag("--direct", m.direct, "NPLM: direct input-to-output connections");
  app.add_option("--embedding", m.embedding,
                 "a registered kind of token table: " + nn::table_kind_help())
      ->capture_default_str()
      ->check(
          registered_name(nn::has_table_kind, nn::unknown_table_kind_message, "KIND", tie_hint));
  app.add_option("--vectors", m.vectors,
                 "word2vec-format vectors (text or binary: word2vec, GloVe, fastText .vec, "
                 "train_lm --export-vectors) for the kinds that load them")
      ->check(CLI::ExistingFile);
  app.add_flag("--tied", m.tied, "output matrix = token embedding (GPT-2 style)");
  app.add_option("--dropout", m.dropout, "dropout probability")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0, true));
}

void add_optimizer_flags(CLI::App& app, train::TrainConfig& c) {
  app.add_option("--optimizer", c.optimizer, "a registered optimizer: " + train::optimizer_help())
      ->capture_default_str()
      ->check(registered_name(train::has_optimizer, train::unknown_optimizer_message, "OPTIMIZER"));
  add_settings_option(app, "--optimizer-option", c.optimizer_options,
                      "a registered optimizer's own setting (repeatable)");
  app.add_option("--lr", c.lr, "peak learning rate")->capture_default_str()->check(positive(false));
  app.add_option("--weight-decay", c.weight_decay,
                 "AdamW: on matrices, not embeddings/biases/norms")
      ->capture_default_str()
      ->check(non_negative(false));
  add_enum_option(app, "--table-decay", c.table_decay, optim::kTableDecayNames,
                  "AdamW: which vocabulary matrices decay: the untied output only, none, or "
                  "the token table as well (none makes tied and untied decay alike)");
  app.add_option("--momentum", c.momentum, "SGD momentum")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0, true));
  app.add_option("--warmup", c.warmup, "linear warm-up steps")
      ->capture_default_str()
      ->check(non_negative());
  add_enum_option(app, "--schedule", c.schedule, optim::kScheduleNames,
                  "inverse: Bengio's lr/(1+r t)");
  app.add_option("--min-lr-ratio", c.min_lr_ratio, "cosine floor as a fraction of --lr")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0));
  app.add_option("--lr-decay", c.lr_decay, "r of the inverse schedule")
      ->capture_default_str()
      ->check(non_negative(false));
  app.add_option("--clip", c.clip, "global gradient-norm clip (0 = off)")
      ->capture_default_str()
      ->check(non_negative(false));
}

// How long to train, how often to evaluate, and how the run is spread over threads and ranks.
void add_run_flags(CLI::App& app, train::TrainConfig& c) {
  app.add_option("--epochs", c.epochs, "passes over the training split")
      ->capture_default_str()
      ->check(non_negative());
  app.add_option("--steps", c.steps, "train this many steps instead of --epochs")
      ->capture_default_str()
      ->check(non_negative());
  app.add_option("--batch", c.batch, "windows per step")->capture_default_str()->check(positive());
  app.add_option("--patience", c.patience,
                 "early stopping: epochs without a better validation loss (0 = off)")
      ->capture_default_str()
      ->check(non_negative());
  app.add_option("--valid-limit", c.valid_limit,
                 "per-epoch validation on the first N valid tokens (0 = all)")
      ->capture_default_str()
      ->check(non_negative());
  app.add_option("--eval-every", c.eval_every, "also report validation perplexity every N steps")
      ->capture_default_str()
      ->check(non_negative());
  app.add_option("--seed", c.seed, "random seed (initialisation, batches, dropout)")
      ->capture_default_str()
      ->check(non_negative());
  app.add_option("--threads", c.threads, "OpenBLAS threads")
      ->capture_default_str()
      ->check(positive());
  // Resolved here, once: a run records (and a study compares) the precision it trains in, and
  // bf16 on a CPU without it is refused before any data is read.
  add_enum_option(app, "--precision", c.precision, kPrecisionNames,
                  "matrix products: bf16 inputs with fp32 sums need AVX512_BF16 or AMX; auto "
                  "picks bf16 where the CPU has it",
                  [&c] {
                    const Precision requested = c.precision;
                    try {
                      c.precision = resolve_precision(requested);
                    } catch (const std::invalid_argument& e) {
                      throw CLI::ValidationError(e.what());  // refused before any data is read
                    }
                    if (requested == Precision::automatic && distributed::rank() == 0)
                      std::cerr << "--precision auto: "
                                << base::name_of(kPrecisionNames, c.precision)
                                << (c.precision == Precision::bf16
                                        ? " (this CPU has " + native_bf16_instructions() + ")"
                                        : " (" + bf16_unavailable() + ")")
                                << "\n";
                  });
  app.add_flag("--detect-anomaly", c.detect_anomaly,
               "stop at the first op that produces NaN/inf, naming it");
  app.add_option("--bucket-mb", c.bucket_mb, "MPI: gradient bucket size in MiB")
      ->capture_default_str()
      ->check(positive(false));
  app.add_flag("--no-comm-overlap{false}", c.comm_overlap,
               "MPI: reduce gradients after backward, not during it");
}

void add_file_flags(CLI::App& app, train::TrainConfig& c) {
  app.add_option("--checkpoint", c.checkpoint,
                 "save model + optimizer + training state here (safetensors)");
  app.add_option("--checkpoint-every", c.checkpoint_every, "also save every N steps")
      ->capture_default_str()
      ->check(non_negative());
  app.add_option("--resume", c.resume, "continue from a checkpoint")->check(CLI::ExistingFile);
  app.add_option("--results", c.results, "write the results JSON here");
  app.add_option("--token-nll", c.token_nll,
                 "write each valid and test token's negative log-likelihood (JSON; for "
                 "ngram --mix-with and per-token comparisons)");
}

}  // namespace

void add_training_flags(CLI::App& app, train::TrainConfig& c) {
  add_model_flags(app, c.model);
  add_optimizer_flags(app, c);
  add_run_flags(app, c);
  add_file_flags(app, c);
  add_data_flags(app, c.data);
}

std::string describe_flags(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_name() == "--help" || o->get_lnames().empty()) continue;
    // A flag expects no value (CLI11 2.1 still reports a type size of 1 for bool flags).
    const bool flag = o->get_items_expected_max() == 0;
    if (flag && !o->count()) continue;  // unset flags are off: do not list them
    const std::string value =
        flag ? "" : (o->count() ? o->as<std::string>() : o->get_default_str());
    if (!flag && value.empty()) continue;  // unset and without a default (e.g. --vectors)
    out += (out.empty() ? "" : " ") + o->get_name() + (value.empty() ? "" : " " + value);
  }
  return out;
}

}  // namespace tg::apps
