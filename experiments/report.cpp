// build/bin/report: renders results/REPORT.md (tables and gnuplot plots) from the JSON files
// the experiment binaries wrote. Trains nothing.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "apps/cli.hpp"
#include "experiments/programs.hpp"
#include "experiments/report/render.hpp"

int tg::experiments::report_main(int argc, char** argv) {
  CLI::App app{"report: render REPORT.md from experiment results"};
  apps::add_version_flag(app);
  std::string results = "results";
  bool no_plots = false;
  app.add_option("--results", results, "folder holding embeddings/, data_size/, lifecycle/")
      ->capture_default_str();
  app.add_flag("--no-plots", no_plots, "tables only");
  CLI11_PARSE(app, argc, argv);
  return tg::apps::guarded_main("report", [&] {
    tg::experiments::report::render_report(results, !no_plots);
    std::fprintf(stderr, "wrote %s/REPORT.md\n", results.c_str());
    return 0;
  });
}
