// A table of every finished run under a results folder, one row per run, for pandas or R:
// `report --csv FILE`.
#pragma once

#include <string>

namespace tg::experiments::report {

// Every run a study's summary.json lists, in any folder under results_dir (the study is the
// folder's path below results_dir), as CSV: study, model, mode, d_model, layers, train_fraction,
// optimizer, precision, seed, test_ppl, valid_ppl, test_ppl_per_word, valid_ppl_per_word,
// best_epoch, stopped_early, cpu_s, commit. A figure a run did not record is an empty cell.
// Text is quoted (RFC 4180), and a cell a spreadsheet would read as a formula starts with '.
std::string runs_csv(const std::string& results_dir);

}  // namespace tg::experiments::report
