// build/bin/report: renders results/REPORT.md (tables and gnuplot plots) from the JSON files
// the experiment binaries wrote. Trains nothing.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "apps/cli.hpp"
#include "base/files.hpp"
#include "experiments/programs.hpp"
#include "experiments/report/render.hpp"
#include "experiments/report/runs_table.hpp"
#include "experiments/study.hpp"

int tg::experiments::report_main(int argc, char** argv) {
  CLI::App app{"report: render REPORT.md from experiment results"};
  apps::add_version_flag(app);
  std::string results = "results";
  bool no_plots = false;
  std::string csv;
  app.add_option("--results", results,
                 "folder of study folders: each with a study.json, or one of the study's own "
                 "(embeddings/, data_size/, lifecycle/, ...)")
      ->capture_default_str();
  app.add_flag("--no-plots", no_plots, "tables only");
  app.add_option("--csv", csv,
                 "write a table of every finished run under --results (one row per run, for "
                 "pandas or R) to FILE instead of rendering REPORT.md");
  bool declare = false;
  app.add_flag("--declare-finished", declare,
               "give each finished study folder under --results made before study files existed "
               "(exp_embeddings, exp_data_size) its study.json, declaring the comparisons the "
               "report tests there, marked as written after the runs; renders nothing");
  CLI11_PARSE(app, argc, argv);
  return tg::apps::guarded_main("report", [&] {
    if (declare) {
      if (!std::filesystem::is_directory(results))
        throw std::invalid_argument("--results " + results + ": not a folder");
      const auto written = tg::experiments::declare_finished_studies(results, "learned");
      for (const auto& file : written) std::fprintf(stderr, "wrote %s\n", file.c_str());
      std::fprintf(stderr, "%zu study files written\n", written.size());
      return 0;
    }
    if (!csv.empty()) {
      // The table replaces what is at FILE: never a results file, a report or a device.
      if (!csv.ends_with(".csv"))
        throw std::invalid_argument("--csv " + csv +
                                    ": give a file name ending in .csv (the table replaces the "
                                    "file; a results or report file is not overwritten)");
      const tg::base::FileFlag output[] = {{"--csv", csv}};
      tg::base::check_outputs(output, {});
      const std::string table = tg::experiments::report::runs_csv(results);
      tg::base::atomic_write(csv, [&](std::ostream& o) { o << table; });
      std::fprintf(stderr, "wrote %s\n", csv.c_str());
      return 0;
    }
    tg::experiments::report::render_report(results, !no_plots);
    std::fprintf(stderr, "wrote %s/REPORT.md\n", results.c_str());
    return 0;
  });
}
