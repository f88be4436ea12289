#include "train/config.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <thread>
#include <vector>

#include "base/files.hpp"
#include "distributed/distributed.hpp"
#include "text/bpe.hpp"
#include "train/fields.hpp"
#include "train/models.hpp"
#include "train/optimizers.hpp"

namespace tg::train {

using nlohmann::json;

namespace {

// One entry per configuration key (train/fields.hpp): its name in results files and
// checkpoints, how to write and read it, and whether a resumed run must have the checkpoint's
// value (the model, the data and the batch order; the rest, such as --epochs, --steps,
// --patience, the learning rate and schedule, evaluation, files and threads, may change).
// to_json, from_json and the resume check are this table; a key's name is written here only.
struct Field : fields::Field<TrainConfig> {
  bool resume_must_match;
  bool data = false;  // a key of the data (text::LMDataOptions): data_to_json writes these
};

// The same field, marked as one of the data's.
Field data_field(Field f) {
  f.data = true;
  return f;
}

// A member as JSON of its own type; `member` maps a (const) TrainConfig to it.
template <class Member>
Field plain(const char* key, bool resume_must_match, Member member) {
  return {fields::plain<TrainConfig>(key, member), resume_must_match};
}

// A map of a part's own settings (--model-option, --optimizer-option): not written when empty.
template <class Member>
Field options(const char* key, bool resume_must_match, Member member) {
  return {
      {key, [member](const TrainConfig& c) { return member(c).empty() ? json() : json(member(c)); },
       [member](TrainConfig& c, const json& v) {
         member(c) = v.get<std::map<std::string, std::string>>();
       }},
      resume_must_match};
}

// An enum member, by its name.
template <class Member, class E, size_t N>
Field named(const char* key, bool resume_must_match, Member member,
            const base::NameTable<E, N>& names) {
  return {{key,
           [member, &names](const TrainConfig& c) { return json(base::name_of(names, member(c))); },
           [member, &names, key](TrainConfig& c, const json& v) {
             member(c) = base::parse_name(names, fields::value_as<std::string>(v), key);
           }},
          resume_must_match};
}

// The name of a registered part (an optimizer, a kind of token table): any plain name, since a
// run file may name a part its reader has not registered (a user's), but never markup or a path.
template <class Member>
Field part_name(const char* key, bool resume_must_match, Member member) {
  return {{key, [member](const TrainConfig& c) { return json(member(c)); },
           [member](TrainConfig& c, const json& v) {
             const std::string name = fields::value_as<std::string>(v);
             if (!base::plain_name(name))
               throw std::invalid_argument("'" + name + "' is not a name (" + base::kPlainNameRule +
                                           ")");
             member(c) = name;
           }},
          resume_must_match};
}

#define TG_MEMBER(path)  \
  [](auto& c) -> auto& { \
    return c.path;       \
  }

const std::vector<Field>& config_fields() {
  static const std::vector<Field> table = {
      plain("model", true, TG_MEMBER(model.name)),
      plain("d_model", true, TG_MEMBER(model.d_model)),
      plain("layers", true, TG_MEMBER(model.layers)),
      plain("heads", true, TG_MEMBER(model.heads)),
      plain("context", true, TG_MEMBER(model.context)),
      named("positions", true, TG_MEMBER(model.positions), nn::kPositionsNames),
      plain("ngram", true, TG_MEMBER(model.ngram)),
      plain("hidden", true, TG_MEMBER(model.hidden)),
      plain("direct", true, TG_MEMBER(model.direct)),
      part_name("embedding", true, TG_MEMBER(model.embedding)),
      plain("vectors", false, TG_MEMBER(model.vectors)),
      plain("tied", true, TG_MEMBER(model.tied)),
      plain("dropout", false, TG_MEMBER(model.dropout)),
      options("model_options", true, TG_MEMBER(model.options)),
      part_name("optimizer", true, TG_MEMBER(optimizer)),
      options("optimizer_options", false, TG_MEMBER(optimizer_options)),
      plain("lr", false, TG_MEMBER(lr)),
      plain("weight_decay", false, TG_MEMBER(weight_decay)),
      named("table_decay", true, TG_MEMBER(table_decay), optim::kTableDecayNames),
      plain("momentum", false, TG_MEMBER(momentum)),
      plain("clip", false, TG_MEMBER(clip)),
      named("schedule", false, TG_MEMBER(schedule), optim::kScheduleNames),
      plain("warmup", false, TG_MEMBER(warmup)),
      plain("min_lr_ratio", false, TG_MEMBER(min_lr_ratio)),
      plain("lr_decay", false, TG_MEMBER(lr_decay)),
      plain("epochs", false, TG_MEMBER(epochs)),
      plain("steps", false, TG_MEMBER(steps)),
      plain("batch", true, TG_MEMBER(batch)),
      plain("patience", false, TG_MEMBER(patience)),
      plain("eval_every", false, TG_MEMBER(eval_every)),
      plain("valid_limit", false, TG_MEMBER(valid_limit)),
      plain("seed", true, TG_MEMBER(seed)),
      plain("threads", false, TG_MEMBER(threads)),
      // A resume in another precision is refused: its products, and so its numbers, differ.
      named("precision", true, TG_MEMBER(precision), kPrecisionNames),
      plain("comm_overlap", false, TG_MEMBER(comm_overlap)),
      plain("bucket_mb", false, TG_MEMBER(bucket_mb)),
      // The built-in corpus' name, or the corpus file's path.
      data_field({{"corpus",  // by its path; the data's fingerprint is what a resume compares
                   [](const TrainConfig& c) {
                     return json(c.data.corpus_file.empty() ? c.data.corpus : c.data.corpus_file);
                   },
                   [](TrainConfig& c, const json& v) {
                     const std::string name = fields::value_as<std::string>(v);
                     if (name == text::LMDataOptions{}.corpus) {
                       c.data.corpus = name;
                       c.data.corpus_file.clear();
                     } else {
                       c.data.corpus_file = name;
                     }
                   }},
                  false}),
      data_field(plain("split", true, TG_MEMBER(data.split))),
      // A resume with another tokenizer is refused naming both (the data's fingerprint, which
      // covers every token's bytes and the stream, would refuse it too); the same BPE's files
      // found elsewhere resume (Trainer::check_resumable knows them by their hash).
      data_field(plain("tokenizer", true, TG_MEMBER(data.tokenizer))),
      data_field(plain("min_count", true, TG_MEMBER(data.min_count))),
      data_field(
          named("vocab_counts", true, TG_MEMBER(data.vocab_counts), text::kVocabCountsNames)),
      data_field(plain("train_fraction", true, TG_MEMBER(data.train_fraction))),
  };
  return table;
}

#undef TG_MEMBER

// The table as the generic reader and writer take it.
std::span<const fields::Field<TrainConfig>> io_table() {
  static const std::vector<fields::Field<TrainConfig>> io(config_fields().begin(),
                                                          config_fields().end());
  return io;
}

}  // namespace

json TrainConfig::to_json() const {
  return fields::write(io_table(), *this);
}

json data_to_json(const text::LMDataOptions& data) {
  TrainConfig c;
  c.data = data;
  json j = json::object();
  for (const Field& f : config_fields())
    if (f.data) j[f.key] = f.get(c);
  return j;
}

TrainConfig TrainConfig::from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("a configuration must be a JSON object");
  TrainConfig c;
  fields::read(io_table(), c, j, "", {}, "configuration key");
  return c;
}

std::vector<const char*> resume_keys(bool must_match) {
  std::vector<const char*> keys;
  for (const Field& f : config_fields())
    if (f.resume_must_match == must_match) keys.push_back(f.key);
  return keys;
}

void TrainConfig::validate() const {
  auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (!has_model(model.name)) bad("--model: " + unknown_model_message(model.name));
  if (!has_optimizer(optimizer)) bad("--optimizer: " + unknown_optimizer_message(optimizer));
  check_optimizer_options(*this);
  const bool loads_vectors = nn::table_kind(model.embedding, "--embedding").pretrained;
  if (loads_vectors && model.vectors.empty())
    bad("--embedding " + model.embedding + " needs --vectors FILE");
  if (!loads_vectors && !model.vectors.empty())
    bad("--vectors is only used by the kinds of token table that load vectors (--embedding " +
        model.embedding + " does not)");
  nn::check_tie(model.embedding, model.tied);
  if (batch == 0 || model.context == 0) bad("--batch and --context must be positive");
  if (epochs == 0 && steps <= 0) bad("give --epochs or --steps");
  if (!(model.dropout >= 0.0f && model.dropout < 1.0f)) bad("--dropout must be in [0, 1)");
  if (!(lr > 0.0f)) bad("--lr must be positive");
  if (threads == 0) bad("--threads must be positive");
  if (const unsigned cores = std::thread::hardware_concurrency(); cores > 0 && threads > cores)
    bad("--threads " + std::to_string(threads) + " is more than the " + std::to_string(cores) +
        " cores of this machine: the threads would wait on each other and training would crawl");
  if (!(bucket_mb > 0.0f)) bad("--bucket-mb must be positive");
  if (batch < static_cast<size_t>(distributed::size()))
    bad("--batch " + std::to_string(batch) + " is smaller than the number of MPI ranks (" +
        std::to_string(distributed::size()) + "): every rank needs at least one row of each batch");
}

void TrainConfig::check_files() const {
  const base::FileFlag outputs[] = {{"--results", results},
                                    {"--checkpoint", checkpoint},
                                    {"--token-nll", token_nll},
                                    {"--export-vectors", export_vectors}};
  std::vector<base::FileFlag> inputs = text::tokenizer_inputs(data.tokenizer);
  inputs.insert(
      inputs.end(),
      {{"--corpus-file", data.corpus_file}, {"--vectors", model.vectors}, {"--resume", resume}});
  const std::pair<std::string, std::string> resumed_in_place[] = {{"--checkpoint", "--resume"}};
  base::check_outputs(outputs, inputs, resumed_in_place);
}

std::string config_differences(const json& a, const json& b, std::string_view a_name,
                               std::string_view b_name, std::span<const char* const> keys) {
  // A key a file lacks was added after it was written: the file's run had its default.
  static const json defaults = TrainConfig().to_json();
  const auto side = [](const json& config, const std::string& key) {
    if (config.is_object() && config.contains(key))
      // Replacing invalid UTF-8 (a path's bytes, say): a message must not throw.
      return config.at(key).dump(-1, ' ', false, json::error_handler_t::replace);
    if (config.is_object() && defaults.contains(key)) return defaults.at(key).dump();
    return std::string("none");
  };
  std::vector<std::string> compared(keys.begin(), keys.end());
  if (keys.empty())
    for (const json* config : {&a, &b})
      if (config->is_object())
        for (const auto& [key, value] : config->items())
          if (std::find(compared.begin(), compared.end(), key) == compared.end())
            compared.push_back(key);
  std::string out;
  for (const std::string& key : compared)
    if (const std::string there = side(a, key), here = side(b, key); there != here)
      out += "\n  " + key + ": " + there + " " + std::string(a_name) + ", " + here + " " +
             std::string(b_name);
  return out;
}

std::string data_difference(std::string_view a, std::string_view b, std::string_view a_name,
                            std::string_view b_name) {
  if (a.empty() || a == b) return "";
  return "\n  the data (corpus, split and vocabulary): fingerprint " + std::string(a) + " " +
         std::string(a_name) + ", " + std::string(b) + " " + std::string(b_name);
}

}  // namespace tg::train
