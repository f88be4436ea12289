// The run file as one typed record (train/run_record.hpp): it writes and reads back the same,
// reads the files written before its schema, and refuses a bad field naming the file and it.
#define BOOST_TEST_MODULE tapegrad
#include <boost/test/unit_test.hpp>

#include "train/config.hpp"
#include "train/run_record.hpp"

namespace tg {

using nlohmann::json;

namespace {

train::RunRecord example() {
  train::RunRecord r;
  r.version = "0.1.0";
  r.provenance = {"0123456789ab", true,       "Release",         {"train_lm", "--epochs", "2"},
                  "a CPU",        "avx2 fma", "OpenBLAS 0.3.21", "2.6.3"};
  train::TrainConfig c;
  c.model.d_model = 64;
  r.config = c.to_json();
  r.data = {"abc", "Brown", 100, 1000, 100, 100};
  r.seed = 3;
  r.threads = 1;
  r.valid_ppl = 250.5;
  r.test_ppl = 240.25;
  r.steps = 40;
  r.best_epoch = 2;
  r.stopped_early = false;
  r.wall_s = 1.5;
  r.epochs = json::array({{{"epoch", 1}, {"valid_ppl", 300.0}, {"my_metric", "kept"}}});
  r.extra["lifecycle"] = {{"rows_per_step_mean", 0.05}};
  return r;
}

// The message of the error reading j as a record, "" when it reads.
std::string refusal(const json& j) {
  try {
    (void)train::RunRecord::from_json(j, "runs/x.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(train_run_record)

BOOST_AUTO_TEST_CASE(a_record_reads_back_as_it_was_written) {
  const json j = example().to_json();
  BOOST_TEST(j.at("schema") == 2);
  BOOST_TEST(j.at("provenance").at("command") == json({"train_lm", "--epochs", "2"}));
  BOOST_TEST(j.at("lifecycle").at("rows_per_step_mean") == 0.05);  // a program's own field
  BOOST_TEST(j.at("epochs")[0].at("my_metric") == "kept");         // a hook's
  BOOST_TEST(!j.contains("train_ppl"));  // a result not given is not written
  const train::RunRecord back = train::RunRecord::from_json(j, "x.json");
  BOOST_TEST(back.to_json() == j);
  BOOST_TEST(back.provenance.commit_shown() == "0123456789ab-dirty");
}

// A file of schema 1 (no "schema" key) has its commit at the top, or the commit that added it
// to the repository; read as schema 2, that is the provenance's commit, its command unknown.
BOOST_AUTO_TEST_CASE(a_file_of_the_first_schema_reads_as_this_one) {
  json old = example().to_json();
  old.erase("schema");
  old.erase("provenance");
  old["commit"] = "fedcba987654-dirty";
  const train::RunRecord r = train::RunRecord::from_json(old, "old.json");
  BOOST_TEST(r.schema == 2);
  BOOST_TEST(r.provenance.commit == "fedcba987654");
  BOOST_TEST(r.provenance.dirty);
  BOOST_TEST(r.provenance.command.empty());
  BOOST_TEST(!r.to_json().contains("commit"));  // moved, not kept twice
  BOOST_TEST(r.valid_ppl.value() == 250.5);
  old.erase("commit");
  old["added_in_commit"] = "135db3ae95f7";
  BOOST_TEST(train::RunRecord::from_json(old, "old.json").provenance.commit == "135db3ae95f7");
  // A file with provenance keeps its own; the top-level commit of schema 1 is not read over it.
  json both = example().to_json();
  both.erase("schema");
  both["commit"] = "ffffffffffff";
  BOOST_TEST(train::RunRecord::from_json(both, "b.json").provenance.commit == "0123456789ab");
}

BOOST_AUTO_TEST_CASE(a_bad_field_is_refused_naming_the_file_and_the_field) {
  const json good = example().to_json();
  const auto with = [&](const std::string& key, const json& value) {
    json j = good;
    j[key] = value;
    return refusal(j);
  };
  BOOST_TEST(refusal(good) == "");
  BOOST_TEST(with("steps", -3) == "runs/x.json: field 'steps' is -3, not a whole number");
  BOOST_TEST(with("steps", 2.5) == "runs/x.json: field 'steps' is 2.5, not a whole number");
  BOOST_TEST(with("valid_ppl", "low") == "runs/x.json: field 'valid_ppl' is \"low\", not a number");
  BOOST_TEST(with("stopped_early", 1) ==
             "runs/x.json: field 'stopped_early' is 1, not true or false");
  BOOST_TEST(with("schema", 7) ==
             "runs/x.json: field 'schema' is 7, not a schema this build reads (1 to 2)");
  BOOST_TEST(with("provenance", {{"commit", 5}}) ==
             "runs/x.json: field 'provenance': field 'commit' is 5, not a string");
  BOOST_TEST(with("epochs", json::array({{{"valid_ppl", "x"}}})) ==
             "runs/x.json: field 'epochs': [0].valid_ppl is \"x\", not a number");
  json config = good;
  config["config"]["lr"] = "fast";
  BOOST_TEST(refusal(config) ==
             "runs/x.json: field 'config': configuration key 'lr' is \"fast\", not a number");
  // Another program's configuration is its own: ngram's keys are not the Trainer's.
  json ngram = good;
  ngram["program"] = "ngram";
  ngram["config"] = {{"smoothing", "kneser-ney"}, {"order", 5}};
  BOOST_TEST(refusal(ngram) == "");
  ngram["program"] = "train_lm";
  BOOST_TEST(refusal(ngram).find("unknown configuration key 'order'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(only_a_file_with_a_configuration_is_a_run_file) {
  BOOST_TEST(train::RunRecord::is_run_file(example().to_json()));
  BOOST_TEST(!train::RunRecord::is_run_file(json{{"runs", json::array()}}));  // a summary
  BOOST_TEST(!train::RunRecord::is_run_file(json::array()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tg
