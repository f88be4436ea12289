#include "experiments/study.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "apps/cli.hpp"
#include "autograd/io.hpp"
#include "base/build_info.hpp"
#include "base/enum_names.hpp"
#include "base/files.hpp"
#include "base/hash.hpp"
#include "distributed/distributed.hpp"
#include "experiments/significance.hpp"
#include "experiments/test_losses.hpp"
#include "text/lm_data.hpp"
#include "text/similarity.hpp"
#include "text/vectors.hpp"
#include "train/models.hpp"
#include "train/progress.hpp"
#include "train/signals.hpp"

namespace tg::experiments {

using nlohmann::json;

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream in(list);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

std::string join_commas(const std::vector<std::string>& parts) {
  std::string list;
  for (const std::string& part : parts) list += (list.empty() ? "" : ",") + part;
  return list;
}

std::string data_path(const std::string& name) {
  return text::evaluation_file(name);
}

void make_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create directory: " + ec.message());
}

std::vector<Mode> parse_modes(const std::string& list, bool full_variants) {
  std::vector<Mode> modes;
  const auto ends_with = [](const std::string& name, std::string_view suffix) {
    return name.size() > suffix.size() && name.ends_with(suffix);
  };
  for (const std::string& name : split_commas(list)) {
    Mode mode{.name = name, .embedding = name};
    if (!nn::has_table_kind(name) && ends_with(name, "-tied")) {
      mode.embedding = name.substr(0, name.size() - 5);
      mode.tied = true;
    } else if (full_variants && !nn::has_table_kind(name) && ends_with(name, "-full")) {
      mode.embedding = name.substr(0, name.size() - 5);
      mode.full_vectors = true;
    }
    if (!nn::has_table_kind(mode.embedding))
      throw std::invalid_argument(
          "--modes: unknown mode '" + name + "' (a kind of token table or KIND-tied" +
          (full_variants ? ", or KIND-full for a kind that loads vectors" : "") + "; " +
          nn::unknown_table_kind_message(mode.embedding) + ")");
    const nn::TableKind& kind = nn::table_kind(mode.embedding);
    if (mode.tied && !kind.can_tie)
      throw std::invalid_argument("--modes: " + name + ": the token table '" + mode.embedding +
                                  "' cannot be tied");
    if (mode.full_vectors && !kind.pretrained)
      throw std::invalid_argument("--modes: " + name + ": '" + mode.embedding +
                                  "' loads no vectors, so it has no -full variant");
    if (std::ranges::find(modes, name, &Mode::name) != modes.end())
      throw std::invalid_argument("--modes: '" + name + "' is given twice");
    modes.push_back(mode);
  }
  if (modes.empty()) throw std::invalid_argument("--modes: no mode given");
  return modes;
}

train::TrainConfig run_config(const train::TrainConfig& base, const std::string& model,
                              const Mode& mode, uint64_t seed) {
  train::TrainConfig c = base;
  c.model.name = model;
  c.model.options = train::options_for(base.model.options, model);
  c.model.embedding = mode.embedding;
  c.model.tied = mode.tied;
  c.seed = seed;
  // A model that ties through its hidden width: every row uses the width the tied row needs.
  if (train::has_model(model) && train::model_entry(model).ties_through_hidden)
    c.model.hidden = c.model.d_model;
  return c;
}

void write_json(const std::string& path, const json& value) {
  // A corpus' words are bytes: one that is not UTF-8 is written with U+FFFD, not refused.
  if (distributed::is_main())
    base::atomic_write(path, [&](std::ostream& o) {
      o << value.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    });
}

namespace {

// What a word2vec run was trained on: the training tokens as the LM sees them.
std::string token_fingerprint(const text::LMData& data) {
  base::Fnv1a h;
  for (size_t i = data.train.begin; i < data.train.end; ++i)
    h.add_little_endian(static_cast<uint32_t>(data.stream[i]), 4);
  for (const auto& w : data.vocab.words()) h.add_bytes(w + "\n");
  return std::to_string(h.value());
}

// The settings of a finished run that differ from this invocation's, one "key: there, here"
// line each; empty when the run can be reused. How it was run (threads, MPI buckets) and how often
// it was watched (--eval-every) do not change a single-process result (test
// same_numbers_whatever_the_evaluation_frequency). The pretrained vectors are the study's own
// (pretrain_word2vec checks their options and tokens), named by their file: a study folder
// moved or cloned elsewhere keeps its finished runs. A corpus file and a BPE's folder are named
// by their last component too: their tokens are checked by the data's fingerprint when the run
// comes (read_finished).
std::string settings_differences(const json& done, const train::TrainConfig& now) {
  if (!done.is_object()) return "\n  the run records no settings";
  train::TrainConfig there = train::TrainConfig::from_json(done), here = now;
  const train::TrainConfig defaults;
  for (train::TrainConfig* c : {&there, &here}) {
    c->threads = defaults.threads;
    c->comm_overlap = defaults.comm_overlap;
    c->bucket_mb = defaults.bucket_mb;
    c->eval_every = defaults.eval_every;
    c->model.vectors = base::last_path_component(c->model.vectors);
    c->data.corpus_file = base::last_path_component(c->data.corpus_file);
    c->data.tokenizer = base::last_path_component(c->data.tokenizer);
  }
  return train::config_differences(there.to_json(), here.to_json(), "there", "here");
}

}  // namespace

namespace {

// The log of the vectors at `path` when a study trained them before with the same options on
// the same tokens, marked "reused"; null otherwise. Throws when the file is not the one its log
// hashed.
json reusable_word2vec(const std::string& path, const json& options) {
  const std::string log_path = path + ".json";
  if (!std::filesystem::exists(path) || !std::filesystem::exists(log_path)) return nullptr;
  json log = json::parse(std::ifstream(log_path), nullptr, false);
  if (!log.is_object() || log.value("options", json()) != options) return nullptr;
  const json recorded = log.value("fnv1a", json());
  if (!recorded.is_string()) {
    if (distributed::is_main())
      std::fprintf(stderr, "[word2vec] %s records no hash of %s: training it again\n",
                   log_path.c_str(), path.c_str());
    return nullptr;
  }
  const std::string now = base::fnv1a_file_hex(path);
  if (now != recorded.get<std::string>())
    throw std::runtime_error(path + ": not the vectors this study trained (FNV-1a " + now + "; " +
                             log_path + " records " + recorded.get<std::string>() +
                             "): delete both files and the study trains them again");
  if (distributed::is_main())
    std::fprintf(stderr, "[word2vec] reusing %s (same options, tokens and hash)\n", path.c_str());
  log["reused"] = true;
  return log;
}

// WordSim-353 of the vectors, as the live line ends: the score, or why there is none.
std::string wordsim_text(const text::SimilarityScore& ws) {
  char score[80];
  if (ws.measured())
    std::snprintf(score, sizeof score, "%.3f", ws.spearman);
  else  // too few pairs with both words known to rank
    std::snprintf(score, sizeof score, "n/a (%zu of %zu pairs known, %zu needed)", ws.used,
                  ws.pairs, text::SimilarityScore::kMinPairs);
  return score;
}

}  // namespace

json pretrain_word2vec(const text::LMData& data, text::Word2VecOptions o, const std::string& path) {
  const json options = {
      {"size", o.size},     {"window", o.window}, {"negative", o.negative},
      {"sample", o.sample}, {"iter", o.iter},     {"min_count", o.min_count},
      {"cbow", o.cbow},     {"seed", o.seed},     {"train_fingerprint", token_fingerprint(data)}};
  // A study invoked again reuses the vectors it trained (with the same options on the same
  // tokens), so that resumed runs see exactly the vectors the finished ones saw.
  if (json reused = reusable_word2vec(path, options); !reused.is_null()) return reused;
  const std::string log_path = path + ".json";
  const std::string file_name = std::filesystem::path(path).filename().string();
  // Under MPI rank 0 trains and writes the vectors; the others wait, then read the file.
  if (!distributed::is_main()) {
    distributed::barrier();
    return {{"file", file_name}};
  }
  const text::Tokens tokens = data.train_tokens();
  train::LiveLine line;
  const std::string label = "[word2vec " + std::to_string(tokens.size()) + " tokens] ";
  const text::Word2VecResult r =
      text::train_word2vec(tokens, o, [&](const text::Word2VecProgress& p) {
        char buf[120];
        std::snprintf(buf, sizeof buf, "%5.1f%%  %.0fk words/s", 100 * p.fraction,
                      p.words_per_s / 1000);
        line.update(label + buf);
      });
  text::save_vectors(path, r.words, r.input, text::VectorFormat::binary);
  // In subword tokens the test's words are the tokens that are a space and a word.
  const text::VectorIndex index(data.vocab.bpe() ? text::word_names_of_subwords(r.words) : r.words,
                                r.input);
  const auto ws = text::evaluate_similarity(index, data_path("wordsim353.tsv"));
  char buf[200];
  std::snprintf(buf, sizeof buf, "done in %.1f s, %zu words, WordSim-353 %s, %.0f%% OOV", r.seconds,
                r.words.size(), wordsim_text(ws).c_str(), 100 * ws.oov_ratio());
  line.finish(label + buf);
  const json log = {{"file", file_name},
                    {"fnv1a", base::fnv1a_file_hex(path)},
                    {"tokens", tokens.size()},
                    {"words", r.words.size()},
                    {"seconds", r.seconds},
                    {"words_per_s", r.words_per_s},
                    {"wordsim353", ws.spearman},
                    {"wordsim353_oov", ws.oov_ratio()},
                    {"options", options},
                    {"commit", base::commit()},
                    {"provenance", train::Provenance::of_this_process().to_json()}};
  write_json(log_path, log);
  distributed::barrier();
  return log;
}

namespace {
// The finished run in json_path with c's settings, or null; throws when the settings differ,
// or (given the run's data) when the run was trained on other tokens.
json read_finished(const train::TrainConfig& c, const std::string& json_path,
                   const text::LMData* data = nullptr) {
  if (!std::filesystem::is_regular_file(json_path)) return nullptr;  // the run reports a folder
  json done = json::parse(std::ifstream(json_path), nullptr, false);
  // Files are written whole (atomically), so one that does not parse was damaged afterwards.
  if (done.is_discarded())
    throw std::invalid_argument(json_path +
                                ": not valid JSON (a damaged run file: delete it "
                                "and the run is trained again)");
  // A run file is an object; anything else was put there by hand or by another program, and
  // training over it would silently replace it.
  if (!done.is_object())
    throw std::invalid_argument(json_path +
                                ": not a run file (a JSON object): delete it and the run is "
                                "trained again, or give another --out");
  // Read as the typed record: a field of the wrong kind (its configuration's too) is refused
  // naming the file and the field.
  train::RunRecord record;
  try {
    record = train::RunRecord::from_json(done, json_path);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(e.what()) +
                                "\n(a damaged run file: delete it and the run is trained again, "
                                "or give another --out)");
  }
  if (!record.test_ppl || record.interrupted) return nullptr;
  // A finished run's numbers are perplexities: a damaged or hand-edited file must not count.
  for (const auto& [key, v] :
       {std::pair{"test_ppl", record.test_ppl}, std::pair{"valid_ppl", record.valid_ppl}})
    if (!v || !std::isfinite(*v) || *v < 1)
      throw std::invalid_argument(json_path + ": " + key + " is " +
                                  (v ? json(*v).dump() : std::string("missing")) +
                                  ", not a perplexity (a damaged run file: delete it and the "
                                  "run is trained again)");
  std::string differences = settings_differences(record.config, c);
  // Runs of older versions record no fingerprint: their settings are all there is to compare.
  if (data && record.data.fingerprint)
    differences +=
        train::data_difference(*record.data.fingerprint, text::fingerprint(*data), "there", "here");
  if (!differences.empty())
    throw std::invalid_argument(json_path + " holds a finished run with other settings:" +
                                differences + "\n(delete it, or give another --out)");
  return done;
}

void say_skipped(const std::string& label, const std::string& json_path) {
  std::fprintf(stderr, "[%s] done, skipped (%s)\n", label.c_str(), json_path.c_str());
}

// "dir/run.json" -> "dir/run.ckpt": the run's per-epoch checkpoint while it trains.
std::string checkpoint_path(const std::string& json_path) {
  return json_path.substr(0, json_path.size() - 5) + ".ckpt";
}

// A finished run's JSON holds everything. A checkpoint beside it is left by a stop during the
// run's final evaluation (the run completed and wrote its JSON; the study stopped before
// deleting the checkpoint): deleted when the run is skipped, so that no finished run keeps one.
// (A run trained again for a program's hooks keeps its checkpoint: that may be the progress of
// the training again.)
void drop_leftover_checkpoint(const std::string& json_path) {
  std::error_code ignored;  // absent: nothing to do
  if (distributed::is_main()) std::filesystem::remove(checkpoint_path(json_path), ignored);
}

using base::FileLock;

// A run's claim holds the claiming process's settings for it, so that a study with other
// settings on the same folder is refused rather than skipping the run as if it were its own.
void check_claim_settings(const std::string& lock_path, const train::TrainConfig& mine) {
  std::ifstream in(lock_path);
  const json claim = json::parse(in, nullptr, false);
  if (!claim.is_object() || !claim.contains("config")) return;  // an older study's claim
  const std::string differences = settings_differences(claim.at("config"), mine);
  if (!differences.empty())
    throw std::invalid_argument(lock_path + ": another process (pid " +
                                claim.value("pid", json("?")).dump() +
                                ") is training this run with other settings:" + differences +
                                "\n(one folder holds one study's settings: give another --out)");
}

// "dir/run.json" -> "dir/run.lock": held by the process that trains the run.
std::string claim_path(const std::string& json_path) {
  return json_path.substr(0, json_path.size() - 5) + ".lock";
}
// The process that holds the flock on `path`, or 0 when none does (or the file is absent).
// Read from /proc/locks (each lock with its file's device and inode), never by trying the lock:
// a study claiming the run at that moment would find it taken and skip it.
long flock_holder(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  char file_id[64];
  std::snprintf(file_id, sizeof file_id, "%02x:%02x:%llu", ::major(st.st_dev), ::minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    // "1: FLOCK  ADVISORY  WRITE 26084 fe:00:5349872 0 EOF"; waiters ("1: -> FLOCK ...") hold
    // nothing.
    std::istringstream fields(line);
    std::string number, kind, advisory, access, file;
    long pid = 0;
    if (fields >> number >> kind >> advisory >> access >> pid >> file && kind == "FLOCK" &&
        file == file_id)
      return pid;
  }
  return 0;
}
}  // namespace

RunStatus run_status(const train::TrainConfig& c, const std::string& json_path,
                     const std::string& hooks_key) {
  namespace fs = std::filesystem;
  if (const json done = finished_run(c, json_path, hooks_key); done.is_object()) {
    char line[96];
    std::snprintf(line, sizeof line, "done: test ppl %.1f, best epoch %s",
                  done.at("test_ppl").get<double>(),
                  done.value("best_epoch", json()).dump().c_str());
    // Nothing else is looked at: a finished run is never trained again.
    const json cpu = done.value("cpu_s", json());
    return {RunStatus::Next::done, line, cpu.is_number() ? cpu.get<double>() : 0.0};
  }
  const fs::path checkpoint = checkpoint_path(json_path);
  RunStatus status =
      fs::exists(checkpoint)
          ? RunStatus{RunStatus::Next::resume, "resumes from " + checkpoint.filename().string()}
          : RunStatus{RunStatus::Next::train, "to train"};
  if (const long pid = flock_holder(claim_path(json_path)))
    status.text += " (being trained by process " + std::to_string(pid) + ")";
  return status;
}

std::string describe_runs(const std::string& folder,
                          const std::vector<std::pair<std::string, RunStatus>>& runs) {
  size_t done = 0, resumed = 0, width = 0;
  for (const auto& [label, status] : runs) {
    done += status.next == RunStatus::Next::done;
    resumed += status.next == RunStatus::Next::resume;
    width = std::max(width, label.size());
  }
  std::ostringstream out;
  out << runs.size() << (runs.size() == 1 ? " run in " : " runs in ") << folder << ": " << done
      << " done, " << resumed << " to resume, " << runs.size() - done - resumed << " to start\n";
  for (const auto& [label, status] : runs)
    out << "  " << label << std::string(width - label.size() + 2, ' ') << status.text << "\n";
  // CPU time rather than wall time: it leaves out the pauses and the sharing of a core that a
  // run's wall time may include (a run on several threads counts each thread's).
  size_t timed = 0;
  double cpu = 0;
  for (const auto& [label, status] : runs)
    if (status.next == RunStatus::Next::done && status.cpu_seconds > 0) {
      ++timed;
      cpu += status.cpu_seconds;
    }
  if (const size_t left = runs.size() - done; timed > 0 && left > 0) {
    const double mean = cpu / static_cast<double>(timed);
    out << "  about " << train::format_duration(mean * static_cast<double>(left))
        << " of CPU time for the " << left << " not done (the finished runs' mean, "
        << train::format_duration(mean) << " a run)\n";
  }
  return out.str();
}

std::string Plan::describe() const {
  // In the order the programs train: seed-major, plan order within a seed.
  std::vector<size_t> order(runs_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::ranges::stable_sort(order, {}, [this](size_t i) { return runs_[i].config.seed; });
  std::vector<std::pair<std::string, RunStatus>> listed;
  for (size_t i : order)
    listed.emplace_back(runs_[i].label,
                        run_status(runs_[i].config, runs_[i].file, runs_[i].hooks_key));
  return describe_runs(std::filesystem::path(summary_path_).parent_path().string(), listed);
}

json finished_run(const train::TrainConfig& c, const std::string& json_path,
                  const std::string& hooks_key) {
  json done = read_finished(c, json_path);
  if (!hooks_key.empty() && done.is_object() && !done.contains(hooks_key)) return nullptr;
  return done;
}

json run_one(train::TrainConfig c, const text::LMData& data, const std::string& label,
             const std::string& json_path, const train::TrainHooks& hooks,
             const std::string& hooks_key) {
  namespace fs = std::filesystem;
  c.label = label;
  c.results = json_path;
  // --token-nll names a folder for a study: each run's losses in a file named like its JSON.
  if (!c.token_nll.empty()) {
    make_dirs(c.token_nll);
    c.token_nll = (fs::path(c.token_nll) / fs::path(json_path).filename()).string();
  }
  // Resumable studies: a finished run (its JSON, with these settings) is not run again; the
  // run in progress checkpoints each epoch beside its JSON and continues from there.
  if (json done = read_finished(c, json_path, &data); done.is_object()) {
    if (hooks_key.empty() || done.contains(hooks_key)) {
      drop_leftover_checkpoint(json_path);
      say_skipped(label, json_path);
      return done;
    }
    std::fprintf(stderr,
                 "[%s] %s has no \"%s\" (made without this program's hooks): training again\n",
                 label.c_str(), json_path.c_str(), hooks_key.c_str());
  }
  const std::string checkpoint = checkpoint_path(json_path);
  if (c.checkpoint.empty()) {
    c.checkpoint = checkpoint;
    c.checkpoint_each_epoch = true;
    if (std::filesystem::exists(checkpoint)) c.resume = checkpoint;
  }
  train::RunResult r = train::train_language_model(c, data, with_test_losses(hooks, data));
  // Finished: the JSON holds everything; the checkpoint was only for resuming.
  if (c.checkpoint == checkpoint && distributed::is_main()) std::filesystem::remove(checkpoint);
  // The study's vectors sit in its folder: recorded by name, the folder can move.
  const fs::path vectors = c.model.vectors;
  if (!vectors.empty() && vectors.parent_path() == fs::path(json_path).parent_path()) {
    train::TrainConfig recorded = c;
    recorded.model.vectors = vectors.filename().string();
    r.json["config"] = recorded.to_json();
    write_json(json_path, r.json);
  }
  std::fprintf(stderr,
               "[%s] valid ppl %.1f, test ppl %.1f, %zu trainable parameters, %.0f tok/s, %s\n",
               label.c_str(), r.valid_ppl, r.test_ppl, r.json["trainable_params"].get<size_t>(),
               r.json["train_tokens_per_s"].get<double>(),
               train::format_duration(r.json["wall_s"].get<double>()).c_str());
  return r.json;
}

Plan::Plan(std::string summary_path, json summary, Entry entry, std::vector<std::string> group_keys,
           std::vector<std::string> metrics)
    : summary_path_(std::move(summary_path)),
      summary_(std::move(summary)),
      entry_(std::move(entry)),
      group_keys_(std::move(group_keys)),
      metrics_(std::move(metrics)) {}

namespace {

// The study file at `path` as an earlier invocation wrote it (an empty object when there is
// none); refused when it is of another version or compares against another reference.
json existing_study(const std::string& path, const std::string& reference) {
  if (!std::filesystem::exists(path)) return json::object();
  json study = json::parse(std::ifstream(path), nullptr, false);
  if (!study.is_object() || study.value("schema", 0) != 1)
    throw std::invalid_argument(path +
                                ": not a study file of this version (delete it, or give "
                                "another --out)");
  if (study.value("reference", reference) != reference)
    throw std::invalid_argument(path + ": the study compares against " +
                                study.at("reference").dump() + ", this invocation against '" +
                                reference + "' (give another --out)");
  return study;
}

// Adds to `family` each (group, mode) comparison against `reference` not listed yet, stamped
// with the time and commit that declared it; none when the reference is not among the modes.
void extend_family(json& family, const std::vector<json>& groups,
                   const std::vector<std::string>& modes, const std::string& reference) {
  if (!family.is_array()) family = json::array();
  if (std::ranges::find(modes, reference) == modes.end()) return;
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  for (const json& g : groups)
    for (const std::string& mode : modes) {
      if (mode == reference) continue;
      const bool listed = std::ranges::any_of(family, [&](const json& c) {
        return c.value("group", json()) == g && c.value("mode", "") == mode;
      });
      if (!listed)
        family.push_back({{"group", g},
                          {"mode", mode},
                          {"against", reference},
                          {"declared", when},
                          {"commit", base::commit()}});
    }
}

// Fills `study` (an earlier invocation's, or empty) with the program, reference, base
// configuration, axes (every value each run key takes, in first-seen order, old values kept)
// and the family of comparisons: every other mode against `reference` within each group of
// runs that agree on `group_keys` (all but mode, seed and train_tokens).
void fill_study(json& study, const json& summary, const std::vector<json>& run_keys,
                const std::vector<std::string>& group_keys, const std::string& reference) {
  study["schema"] = 1;
  study["program"] = summary.value("experiment", "");
  study["reference"] = reference;
  study["base_config"] = summary.value("base_config", json::object());
  json& axes = study["axes"];
  if (!axes.is_object()) axes = json::object();
  std::vector<std::string> group;  // the keys a comparison holds fixed
  for (const std::string& key : group_keys)
    if (key != "mode" && key != "train_tokens") group.push_back(key);
  std::vector<json> groups;
  std::vector<std::string> modes;
  for (const json& keys : run_keys) {
    for (const auto& [key, value] : keys.items()) {
      json& values = axes[key == "seed" ? "seeds" : key + "s"];
      if (!values.is_array()) values = json::array();
      if (std::ranges::find(values, value) == values.end()) values.push_back(value);
    }
    json g = json::object();
    for (const std::string& key : group) g[key] = keys.value(key, json());
    if (std::ranges::find(groups, g) == groups.end()) groups.push_back(g);
    const std::string mode = keys.value("mode", std::string());
    if (std::ranges::find(modes, mode) == modes.end()) modes.push_back(mode);
  }
  extend_family(study["family"], groups, modes, reference);
}

}  // namespace

void Plan::declare(const std::string& reference) {
  if (!distributed::is_main()) return;
  const std::filesystem::path folder = std::filesystem::path(summary_path_).parent_path();
  const std::string path = (folder / "study.json").string();
  const FileLock one_writer((folder / ".summary.lock").string(), true, true);
  json study = existing_study(path, reference);
  std::vector<json> run_keys;
  for (const Run& run : runs_) run_keys.push_back(run.keys);
  fill_study(study, summary_, run_keys, group_keys_, reference);
  // Of the invocation that wrote it last.
  study["provenance"] = train::Provenance::of_this_process().to_json();
  write_json(path, study);
}

std::vector<std::string> group_keys_of(std::string_view program) {
  if (program == "embeddings") return {"model", "mode"};
  if (program == "data_size") return {"model", "mode", "fraction"};
  return {};
}

bool declare_finished_study(const std::filesystem::path& folder, const std::string& reference) {
  const std::filesystem::path path = folder / "study.json", summary_path = folder / "summary.json";
  if (std::filesystem::exists(path)) return false;
  const json summary = json::parse(std::ifstream(summary_path), nullptr, false);
  if (summary.is_discarded())
    throw std::runtime_error(summary_path.string() + ": not JSON (no study file is written)");
  const json program = summary.is_object() ? summary.value("experiment", json()) : json();
  std::vector<std::string> keys =
      group_keys_of(program.is_string() ? program.get<std::string>() : "");
  if (keys.empty() || !summary.contains("runs")) return false;
  keys.push_back("seed");
  std::vector<json> run_keys;
  for (const json& run : summary.at("runs")) {
    json k = json::object();
    for (const std::string& key : keys) {
      if (!run.contains(key)) return false;
      // The values become the study file's axes and family, then names in REPORT.md.
      const json& value = run.at(key);
      if (!value.is_number() && !(value.is_string() && base::plain_name(value.get<std::string>())))
        throw std::runtime_error(summary_path.string() + ": a run's '" + key +
                                 "' is neither a number nor a name (" + base::kPlainNameRule + ")");
      k[key] = value;
    }
    run_keys.push_back(k);
  }
  json study = json::object();
  const std::vector<std::string> group = {keys.begin(), keys.end() - 1};  // all but the seed
  fill_study(study, summary, run_keys, group, reference);
  study["declared_after_its_runs"] =
      "written from summary.json when its runs had finished, before study files existed: its "
      "family is the comparisons the report tested in this folder then";
  study["provenance"] = train::Provenance::of_this_process().to_json();
  write_json(path.string(), study);
  return true;
}

std::vector<std::filesystem::path> declare_finished_studies(const std::filesystem::path& results,
                                                            const std::string& reference) {
  std::vector<std::filesystem::path> written;
  // A link is not followed: a study file is written only inside `results`.
  for (const std::filesystem::path& folder : base::folders_inside(results))
    if (std::filesystem::exists(folder / "summary.json") &&
        declare_finished_study(folder, reference))
      written.push_back(folder / "study.json");
  return written;
}

void Plan::collect_finished() {
  for (size_t i = 0; i < runs_.size(); ++i)
    if (const json done = finished_run(runs_[i].config, runs_[i].file, runs_[i].hooks_key);
        !done.is_null())
      list(i, done);
  save();
}

void Plan::train(size_t i, const text::LMData& data) {
  const Run& run = runs_[i];
  if (!entries_[i].is_null()) {                  // finished, and read once by collect_finished
    read_finished(run.config, run.file, &data);  // throws if its tokens were others
    drop_leftover_checkpoint(run.file);
    say_skipped(run.label, run.file);
    return;
  }
  // Several processes may share the study's folder (one per core or machine): each trains
  // the runs it claims and skips those another holds. Under MPI rank 0 claims for the job,
  // and every rank follows its decision.
  std::optional<FileLock> claim;
  float claimed = 1;
  if (distributed::is_main()) {
    claimed = claim.emplace(claim_path(run.file), false).held() ? 1 : 0;
    if (claimed == 1)
      claim->write(json{{"pid", ::getpid()}, {"config", run.config.to_json()}}.dump());
    else
      check_claim_settings(claim_path(run.file), run.config);
  }
  distributed::broadcast(&claimed, 1);
  if (claimed == 0) {
    if (distributed::is_main())
      std::fprintf(stderr, "[%s] another process is training it (it holds %s), skipped\n",
                   run.label.c_str(), claim_path(run.file).c_str());
    held_elsewhere_.push_back(i);
    return;
  }
  if (run.prepare) run.prepare();
  // run_one reads the run's JSON first: a run another process finished meanwhile is listed.
  try {
    list(i, run_one(run.config, data, run.label, run.file, run.hooks, run.hooks_key));
  } catch (const train::Interrupted& e) {
    save();  // lists the run if the signal came in its final evaluation, which finished it
    // A study continues by being invoked again, not by --resume (which the study passes itself).
    std::string what = e.what();
    if (const size_t at = what.find("; continue with --resume "); at != std::string::npos)
      what = what.substr(0, at) +
             "; run the same command again to continue: the study skips its finished runs and "
             "resumes this one from its checkpoint";
    throw train::Interrupted(e.signal, what);
  }
  // Finished: its JSON is what the others look for now. A claim ended by an interruption
  // keeps its file, so that no two processes ever hold the same run's lock on two files.
  if (distributed::is_main()) std::filesystem::remove(claim_path(run.file));
  save();
}

json Plan::entry(size_t i, const json& results) const {
  json e = runs_[i].keys;
  // Relative to the summary's folder, which holds the run files.
  e["file"] = std::filesystem::path(runs_[i].file).filename().string();
  e.update(entry_(results));
  return e;
}

void Plan::say_unfinished() const {
  if (!distributed::is_main()) return;
  std::string missing;
  size_t count = 0;
  for (size_t i : held_elsewhere_) {
    if (!entries_[i].is_null() ||
        !finished_run(runs_[i].config, runs_[i].file, runs_[i].hooks_key).is_null())
      continue;  // finished meanwhile: listed by the last save
    const long pid = flock_holder(claim_path(runs_[i].file));
    missing += "\n  " + runs_[i].label +
               (pid > 0 ? " (pid " + std::to_string(pid) + " is training it)" : " (not finished)");
    ++count;
  }
  if (count > 0)
    std::fprintf(stderr,
                 "%zu run%s of this study another process was training %s missing from the "
                 "table above; the summary lists %s when that process finishes it:%s\n",
                 count, count == 1 ? "" : "s", count == 1 ? "is" : "are",
                 count == 1 ? "it" : "them", missing.c_str());
}

void Plan::list(size_t i, const json& results) {
  entries_[i] = entry(i, results);
}

void Plan::save() {
  // Rank 0 writes, one process at a time, and lists the runs that others sharing the folder
  // finished too (their JSON is written before their summary): the last to write lists every
  // finished run. They are listed here only: whether to train a run is decided by claims.
  std::optional<FileLock> one_writer;
  if (distributed::is_main())
    one_writer.emplace(
        (std::filesystem::path(summary_path_).parent_path() / ".summary.lock").string(), true,
        true);
  std::vector<json> listed;
  for (size_t i = 0; i < runs_.size(); ++i)
    if (!entries_[i].is_null())
      listed.push_back(entries_[i]);
    else if (distributed::is_main())
      if (const json done = finished_run(runs_[i].config, runs_[i].file, runs_[i].hooks_key);
          !done.is_null())
        listed.push_back(entry(i, done));
  summary_["runs"] = listed;
  summary_["rows"] = aggregate(listed, group_keys_, metrics_);
  summary_["provenance"] =
      train::Provenance::of_this_process().to_json();  // of the invocation that wrote it last
  write_json(summary_path_, summary_);
}

json aggregate(const std::vector<json>& runs, const std::vector<std::string>& keys,
               const std::vector<std::string>& metrics) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const json*>> groups;
  for (const auto& run : runs) {
    std::string id;
    for (const auto& k : keys) id += run.at(k).dump() + "|";
    if (!groups.count(id)) order.push_back(id);
    groups[id].push_back(&run);
  }
  json rows = json::array();
  for (const auto& id : order) {
    const auto& g = groups[id];
    json row;
    for (const auto& k : keys) row[k] = g.front()->at(k);
    row["runs"] = g.size();
    for (const auto& m : metrics) {
      std::vector<double> v;
      for (const json* run : g)
        if (run->contains(m) && run->at(m).is_number()) v.push_back(run->at(m).get<double>());
      if (v.empty()) continue;
      const experiments::Spread s = experiments::spread_of(v);
      row[m] = {{"mean", s.mean}, {"std", s.sd}, {"min", s.min}, {"max", s.max}, {"n", s.n}};
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace tg::experiments
