#include "train/run_record.hpp"

#include <stdexcept>

#include "autograd/parallel.hpp"
#include "autograd/precision.hpp"
#include "base/build_info.hpp"
#include "base/machine.hpp"
#include "train/config.hpp"
#include "train/fields.hpp"

namespace tg::train {

using nlohmann::json;

namespace {

#define TG_MEMBER(path)  \
  [](auto& r) -> auto& { \
    return r.path;       \
  }

using fields::plain;

const std::vector<fields::Field<Provenance>>& provenance_fields() {
  using P = Provenance;
  static const std::vector<fields::Field<P>> table = {
      plain<P>("commit", TG_MEMBER(commit)),
      plain<P>("dirty", TG_MEMBER(dirty)),
      plain<P>("build_type", TG_MEMBER(build_type)),
      plain<P>("command", TG_MEMBER(command)),
      plain<P>("cpu", TG_MEMBER(cpu)),
      plain<P>("instruction_sets", TG_MEMBER(instruction_sets)),
      plain<P>("openblas", TG_MEMBER(openblas)),
      plain<P>("onednn", TG_MEMBER(onednn)),
  };
  return table;
}

const std::vector<fields::Field<DataRecord>>& data_fields() {
  using D = DataRecord;
  static const std::vector<fields::Field<D>> table = {
      plain<D>("fingerprint", TG_MEMBER(fingerprint)),
      plain<D>("description", TG_MEMBER(description)),
      plain<D>("vocab", TG_MEMBER(vocab)),
      plain<D>("train_tokens", TG_MEMBER(train_tokens)),
      plain<D>("valid_tokens", TG_MEMBER(valid_tokens)),
      plain<D>("test_tokens", TG_MEMBER(test_tokens)),
  };
  return table;
}

// A curve: a list of objects whose numbers are numbers (a hook may add fields of its own).
void check_curve(const json& v) {
  if (!v.is_array()) throw fields::NotA("a list of objects");
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_object()) throw fields::NotA("a list of objects");
    for (const char* key : {"epoch", "step", "train_loss", "valid_loss", "valid_ppl", "lr"})
      if (v[i].contains(key) && !v[i].at(key).is_number() && !v[i].at(key).is_null())
        throw std::invalid_argument("[" + std::to_string(i) + "]." + key + " is " +
                                    v[i].at(key).dump().substr(0, 60) + ", not a number");
  }
}

template <class Member>
fields::Field<RunRecord> curve(const char* key, Member member) {
  return {key, [member](const RunRecord& r) { return member(r) ? *member(r) : json(); },
          [member](RunRecord& r, const json& v) {
            check_curve(v);
            member(r) = v;
          }};
}

const std::vector<fields::Field<RunRecord>>& record_fields() {
  using R = RunRecord;
  static const std::vector<fields::Field<R>> table = {
      plain<R>("schema", TG_MEMBER(schema)),
      plain<R>("program", TG_MEMBER(program)),
      plain<R>("version", TG_MEMBER(version)),
      fields::object<R, Provenance>("provenance", TG_MEMBER(provenance), provenance_fields),
      {"config", [](const R& r) { return r.config; },
       [](R& r, const json& v) {
         if (!v.is_object()) throw fields::NotA("an object");
         r.config = v;
       }},
      fields::object<R, DataRecord>("data", TG_MEMBER(data), data_fields),
      plain<R>("seed", TG_MEMBER(seed)),
      plain<R>("threads", TG_MEMBER(threads)),
      plain<R>("mpi_ranks", TG_MEMBER(mpi_ranks)),
      plain<R>("blas", TG_MEMBER(blas)),
      plain<R>("simd", TG_MEMBER(simd)),
      plain<R>("trainable_params", TG_MEMBER(trainable_params)),
      plain<R>("total_params", TG_MEMBER(total_params)),
      plain<R>("steps_per_epoch", TG_MEMBER(steps_per_epoch)),
      plain<R>("tokens_per_step", TG_MEMBER(tokens_per_step)),
      plain<R>("valid_ppl", TG_MEMBER(valid_ppl)),
      plain<R>("test_ppl", TG_MEMBER(test_ppl)),
      plain<R>("train_ppl", TG_MEMBER(train_ppl)),
      plain<R>("valid_ppl_per_word", TG_MEMBER(valid_ppl_per_word)),
      plain<R>("test_ppl_per_word", TG_MEMBER(test_ppl_per_word)),
      {"tokenizer", [](const R& r) { return r.tokenizer ? *r.tokenizer : json(); },
       [](R& r, const json& v) {
         if (!v.is_object()) throw fields::NotA("an object");
         r.tokenizer = v;
       }},
      plain<R>("steps", TG_MEMBER(steps)),
      plain<R>("best_epoch", TG_MEMBER(best_epoch)),
      plain<R>("stopped_early", TG_MEMBER(stopped_early)),
      plain<R>("interrupted", TG_MEMBER(interrupted)),
      plain<R>("train_seconds", TG_MEMBER(train_seconds)),
      plain<R>("wall_s", TG_MEMBER(wall_s)),
      plain<R>("cpu_s", TG_MEMBER(cpu_s)),
      plain<R>("train_tokens_per_s", TG_MEMBER(train_tokens_per_s)),
      curve("epochs", TG_MEMBER(epochs)),
      curve("evals", TG_MEMBER(evals)),
  };
  return table;
}

#undef TG_MEMBER

}  // namespace

Provenance Provenance::of_this_process() {
  // The build and the machine do not change while the process runs: read once (a study writes
  // its summary, with its provenance, after every run). The command line is recorded anew.
  static const Provenance machine = [] {
    Provenance p;
    p.commit = base::commit();
    p.dirty = p.commit.ends_with("-dirty");
    if (p.dirty) p.commit.resize(p.commit.size() - 6);
    p.build_type = base::build_type();
    p.cpu = base::cpu_model();
    p.instruction_sets = base::cpu_instruction_sets();
    p.openblas = blas_build();
    p.onednn = onednn_version();
    return p;
  }();
  Provenance p = machine;
  p.command = base::command_line();
  return p;
}

json Provenance::to_json() const {
  return fields::write<Provenance>(provenance_fields(), *this);
}

json RunRecord::to_json() const {
  json j = extra;
  j.update(fields::write<RunRecord>(record_fields(), *this));
  return j;
}

bool RunRecord::is_run_file(const json& j) {
  return j.is_object() && j.contains("config");
}

RunRecord RunRecord::from_json(const json& j, const std::string& where) {
  RunRecord r;
  r.schema = 1;  // a file without "schema" was written before there was one
  std::optional<std::string> legacy_commit;
  const std::string prefix = where + ": ";
  fields::read<RunRecord>(
      record_fields(), r, j, prefix, [&](const std::string& key, const json& v) {
        if (key == "commit" || key == "added_in_commit") {
          if (!v.is_string())
            throw std::invalid_argument(prefix + "field '" + key + "' is " +
                                        v.dump().substr(0, 60) + ", not a string");
          if (key == "commit" || !legacy_commit) legacy_commit = v.get<std::string>();
        } else {
          r.extra[key] = v;
        }
      });
  if (r.schema < 1 || r.schema > kSchema)
    throw std::invalid_argument(prefix + "field 'schema' is " + std::to_string(r.schema) +
                                ", not a schema this build reads (1 to " + std::to_string(kSchema) +
                                ")");
  if (r.program.empty()) throw std::invalid_argument(prefix + "field 'program' is empty");
  if (!j.contains("provenance") && legacy_commit) {
    r.provenance.commit = *legacy_commit;
    r.provenance.dirty = r.provenance.commit.ends_with("-dirty");
    if (r.provenance.dirty) r.provenance.commit.resize(r.provenance.commit.size() - 6);
  }
  if (r.program == "train_lm") {
    try {
      (void)TrainConfig::from_json(r.config);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(prefix + "field 'config': " + e.what());
    }
  }
  r.schema = kSchema;  // read as this schema: what it writes back
  return r;
}

}  // namespace tg::train
