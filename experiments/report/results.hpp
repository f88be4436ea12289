// Reading a results folder: the JSON files the experiment programs wrote, and a study's runs
// grouped by row (model, mode) and seed. Every section of the report reads through here.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "train/config.hpp"
#include "train/run_record.hpp"

namespace tg::experiments::report {

// A JSON file, or null when there is none; a file that is not valid JSON is an error naming it.
nlohmann::json load(const std::filesystem::path& p);
// Every JSON file of a results folder but its summary, by file name: read once for all the
// parts of the report that want them (the tables, the curves, the Compute section). No
// folder: no files.
using FolderFiles = std::map<std::string, nlohmann::json>;
FolderFiles read_folder(const std::filesystem::path& folder);
// A file of a folder read by read_folder, or null.
const nlohmann::json& file_in(const FolderFiles& folder, const std::string& name);

// A study's summary.json, or null while it lists no finished run: a study writes its summary
// before the first run ends, and an empty section says nothing. The summary is checked against
// the run files it lists (check_summary): those of `files` where its folder was read already.
nlohmann::json load_summary(const std::filesystem::path& p, const FolderFiles* files = nullptr);
// Throws naming the file and the number unless the summary says what its run files say: each
// listed run's valid and test perplexity as in its file (where the file is there), each row's
// count a whole number of the runs listed for it, and its mean test perplexity theirs. The run
// files are those of `files` (read_folder of the summary's folder), or read here.
void check_summary(const nlohmann::json& summary, const std::filesystem::path& p,
                   const FolderFiles* files = nullptr);

// A run file (train/run_record.hpp) as the typed record: a field of the wrong kind is an error
// naming the file and the field; a file of an older schema is read as this one. read_folder
// gives every run file as this record writes it.
train::RunRecord run_record(const nlohmann::json& file, const std::filesystem::path& p);
// The commit that built a run (as read_folder gives it): "<commit>[-dirty]", "" when unknown.
std::string commit_of(const nlohmann::json& run);

// A study's runs grouped by (model, mode), the groups in the order their first run appears.
using RowKey = std::pair<std::string, std::string>;
using Rows = std::vector<std::pair<RowKey, std::vector<nlohmann::json>>>;
Rows runs_by_row(const nlohmann::json& runs);

// Each run's own JSON file (the summary keeps only its headline numbers), row by row of
// runs_by_row, then by seed; runs whose file is missing are left out. The files stay in the
// folder's map: RunFiles points into it and must not outlive it.
using RunFiles = std::vector<std::pair<RowKey, std::map<size_t, const nlohmann::json*>>>;
RunFiles load_run_files(const Rows& rows, const FolderFiles& folder);
// A data-size sweep's run files, one row per (share, mode): the share joins the model's name
// ("gpt 5%"), so that each share's modes are compared with learned at the same share.
RunFiles files_by_share(const nlohmann::json& summary, const FolderFiles& folder);
// The configuration of the first run of a study's files, or null.
nlohmann::json first_run_config(const RunFiles& files);

// A run's or a study's configuration (a run file's "config", a summary's "base_config") as the
// typed struct, so that the report names a setting by its member, never by its key; an unknown
// key or a value of the wrong type is an error naming it.
train::TrainConfig config_of(const nlohmann::json& config);

// A run's training time: train_seconds adds up the sittings of a resumed run, where an older
// run's wall_s counts the last one only (the oldest have wall_s alone).
double training_seconds(const nlohmann::json& run);
// How the tables time a folder's runs: by CPU time (cpu_s, all sittings) where every run
// records it, else by training time, which also counts the time a run was paused or shared its
// core with another, and so says more of the machine's day than of the run's cost.
enum class RunClock { cpu, training };
RunClock run_clock(const RunFiles& files);
// The time a table shows for a run by that clock.
double run_seconds(const nlohmann::json& run, RunClock clock);

}  // namespace tg::experiments::report
