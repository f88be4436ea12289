#include <algorithm>
#include <sstream>
#include <vector>

#include "experiments/report/format.hpp"
#include "experiments/report/sections.hpp"

namespace tg::experiments::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Compute compute_in(const FolderFiles& folder) {
  Compute c;
  for (const auto& [name, j] : folder) {
    if (name.starts_with("word2vec_")) {
      c.word2vec_seconds += j.value("seconds", 0.0);
    } else if (j.contains("train_seconds") && j.contains("test_ppl") &&
               !j.contains("interrupted")) {
      ++c.runs;
      c.train_seconds += j.at("train_seconds").get<double>();
      if (j.contains("cpu_s")) {
        ++c.cpu_runs;
        c.cpu_seconds += j.at("cpu_s").get<double>();
      }
    }
  }
  return c;
}

std::string cpu_cell(const Compute& c) {
  if (c.cpu_runs == 0) return "-";
  return duration(c.cpu_seconds) +
         (c.cpu_runs == c.runs
              ? ""
              : " (" + std::to_string(c.cpu_runs) + " of " + std::to_string(c.runs) + " runs)");
}

}  // namespace

void Compute::add(const Compute& other) {
  runs += other.runs;
  train_seconds += other.train_seconds;
  word2vec_seconds += other.word2vec_seconds;
  cpu_runs += other.cpu_runs;
  cpu_seconds += other.cpu_seconds;
}

// What the long studies cost, folder by folder: paper_nplm/, then converged/'s folders by name.
std::string compute_section(const fs::path& dir, const FolderFiles& paper, Compute& total) {
  std::vector<std::pair<std::string, Compute>> folders = {{"paper_nplm", compute_in(paper)}};
  std::vector<fs::path> converged;
  if (fs::is_directory(dir / "converged"))
    for (const auto& entry : fs::directory_iterator(dir / "converged"))
      if (entry.is_directory()) converged.push_back(entry.path());
  std::sort(converged.begin(), converged.end());
  for (const fs::path& folder : converged)
    folders.emplace_back("converged/" + folder.filename().string(),
                         compute_in(read_folder(folder)));
  std::ostringstream rows;
  for (const auto& [folder, c] : folders) {
    if (c.runs == 0) continue;
    rows << "| " << markdown_code(folder + "/") << " | " << c.runs << " | "
         << duration(c.train_seconds) << " | " << cpu_cell(c) << " | "
         << duration(c.word2vec_seconds) << " |\n";
    total.add(c);
  }
  if (total.runs == 0) return "";
  return "## Compute\n\nThe long studies so far, one core per run. Training: the optimisation "
         "steps of each finished run, summed over the sittings of a resumed one (evaluations, "
         "runs still in progress and the n-gram baselines, seconds each, not included); it is "
         "wall time, so a run paused mid-step counts its pause. CPU time: the process's over "
         "the whole run, evaluations included and pauses not, in the runs that record it "
         "(`cpu_s`; the older ones do not).\n\n"
         "| folder | finished runs | training | CPU time | word2vec "
         "|\n|---|---:|---:|---:|---:|\n" +
         rows.str() + "| total | " + std::to_string(total.runs) + " | " +
         duration(total.train_seconds) + " | " + cpu_cell(total) + " | " +
         duration(total.word2vec_seconds) + " |\n\n";
}
}  // namespace tg::experiments::report
