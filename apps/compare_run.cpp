// compare_run GOLDEN RESULT: exits 0 when every number GOLDEN records (perplexities, steps,
// parameter count, the per-epoch losses; not timings) is bit-identical in RESULT (a train_lm
// results file), and prints each difference otherwise. Used for the golden runs (recorded
// results that every build must replay), and for a study resumed after a kill against the
// same study run in one go. A run records which clone of the row kernels ("simd") and which
// OpenBLAS kernel ("blas") made it; when either differs (other summation orders), or with
// --relaxed (the sanitizer build, whose instrumentation keeps the kernels scalar), numbers must
// agree within a relative 1e-4 instead.
// compare_run --agreement COMMITTED NEW: how every run of a folder trained anew agrees with
// the committed run of the same place (scripts/reproduce.sh): the same to the last digit, or
// the relative difference in test perplexity and why (another CPU's kernels, threads, build).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autograd/simd_kernels.hpp"
#include "train/run_record.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A results file; a run file as the typed record reads it (train/run_record.hpp), so that one
// of an older schema compares with one of this. No file, or not JSON: null. A run file with a
// field of the wrong kind throws, naming the file and the field.
json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return json();
  const json j = json::parse(in, nullptr, false);
  if (!tg::train::RunRecord::is_run_file(j)) return j.is_discarded() ? json() : j;
  return tg::train::RunRecord::from_json(j, p.string()).to_json();
}

std::string text_of(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.is_null() ? std::string("?") : v.dump();
}

// Why a run here can differ from the committed one: the first of the things that change the
// order of its sums (another CPU's kernels, another thread or rank count) or its code.
std::string why_different(const json& committed, const json& here) {
  const auto differs = [&](const char* key) {
    return committed.contains(key) && here.contains(key) && committed[key] != here[key];
  };
  // Files written before the kernels were recorded name OpenBLAS alone and no row kernels.
  if (!committed.contains("simd") && committed.value("blas", std::string()) == "OpenBLAS")
    return "the committed run does not record its kernels (an older file): other kernels may "
           "explain it";
  if (differs("blas"))
    return "another OpenBLAS kernel (" + text_of(committed["blas"]) + " there, " +
           text_of(here["blas"]) + " here)";
  if (differs("simd"))
    return "other row kernels (" + text_of(committed["simd"]) + " there, " + text_of(here["simd"]) +
           " here)";
  if (differs("threads"))
    return "another thread count (" + text_of(committed["threads"]) + " there, " +
           text_of(here["threads"]) + " here)";
  if (differs("mpi_ranks")) return "another number of MPI ranks";
  const auto commit = [](const json& run) {
    return run.value("provenance", json::object()).value("commit", std::string());
  };
  if (commit(committed) != commit(here))
    return "another build (commit " + commit(committed) + " there, " + commit(here) + " here)";
  return "the same kernels, threads and build: unexplained, a regression to look into";
}

// compare_run --agreement COMMITTED NEW: every run file under NEW against the file at the same
// place under COMMITTED; one line per run and a total. Exit 0 unless a run has no counterpart
// or an unexplained difference.
int agreement(const fs::path& committed_dir, const fs::path& new_dir) {
  size_t same = 0, close = 0, unexplained = 0, missing = 0;
  double largest = 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(new_dir))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    const json here = read_json(file);
    if (!here.is_object() || !here.contains("epochs") || !here.contains("test_ppl")) continue;
    const fs::path relative = fs::relative(file, new_dir);
    const json there = read_json(committed_dir / relative);
    if (!there.is_object() || !there.contains("test_ppl")) {
      std::printf("%-48s no committed run to compare with\n", relative.c_str());
      ++missing;
      continue;
    }
    const double a = there["test_ppl"].get<double>(), b = here["test_ppl"].get<double>();
    const bool identical = there.value("valid_ppl", json()) == here.value("valid_ppl", json()) &&
                           there["test_ppl"] == here["test_ppl"] &&
                           there.value("epochs", json()).size() == here["epochs"].size();
    if (identical) {
      std::printf("%-48s test ppl %.4f: the same to the last digit\n", relative.c_str(), b);
      ++same;
      continue;
    }
    const double relative_difference = (b - a) / a;
    largest = std::max(largest, std::abs(relative_difference));
    const std::string why = why_different(there, here);
    (why.starts_with("the same") ? unexplained : close) += 1;
    std::printf("%-48s test ppl %.4f committed, %.4f here (%+.3f%%): %s\n", relative.c_str(), a, b,
                100 * relative_difference, why.c_str());
  }
  std::printf(
      "%zu runs: %zu the same to the last digit, %zu differ for a known reason (largest "
      "test ppl difference %.3f%%), %zu unexplained, %zu without a committed run\n",
      same + close + unexplained + missing, same, close, 100 * largest, unexplained, missing);
  return unexplained + missing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--agreement") {
    if (!fs::is_directory(argv[2]) || !fs::is_directory(argv[3])) {
      std::fprintf(stderr, "compare_run --agreement: %s and %s must be folders\n", argv[2],
                   argv[3]);
      return 2;
    }
    try {
      return agreement(argv[2], argv[3]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "compare_run: %s\n", e.what());
      return 2;
    }
  }
  const bool relaxed = argc == 4 && std::string(argv[3]) == "--relaxed";
  if (argc != 3 && !relaxed) {
    std::fprintf(stderr,
                 "usage: compare_run GOLDEN RESULT [--relaxed]\n"
                 "       compare_run --agreement COMMITTED_FOLDER NEW_FOLDER\n");
    return 2;
  }
  json golden, result;
  try {
    for (const auto& [file, into] : {std::pair{argv[1], &golden}, std::pair{argv[2], &result}}) {
      if (!std::ifstream(file)) throw std::runtime_error(std::string(file) + ": cannot be read");
      *into = read_json(file);
      if (into->is_null()) throw std::runtime_error(std::string(file) + ": not valid JSON");
      if (!into->is_object())
        throw std::runtime_error(std::string(file) + ": not a results file (a JSON object)");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compare_run: %s\n", e.what());
    return 2;
  }
  // Sums run in another order under another clone of the row kernels or another OpenBLAS
  // kernel: then numbers must agree within 1e-4, and the reason is printed.
  const std::string isa = tg::detail::simd_isa();
  const std::string result_isa = result.value("simd", isa);
  std::string why_inexact;
  if (relaxed)
    why_inexact = "--relaxed";
  else if (golden.contains("simd") && golden["simd"] != result_isa)
    why_inexact = "recorded with the " + golden["simd"].get<std::string>() +
                  " row kernels, run with " + result_isa;
  else if (golden.contains("blas") && result.contains("blas") && golden["blas"] != result["blas"])
    why_inexact = "recorded with " + golden["blas"].get<std::string>() + ", run with " +
                  result["blas"].get<std::string>() + " (OPENBLAS_CORETYPE picks the kernel)";
  const bool exact = why_inexact.empty();
  if (!exact) std::printf("%s: comparing within 1e-4\n", why_inexact.c_str());
  int differences = 0;
  auto check = [&](const std::string& what, const json& want, const json& got) {
    if (want == got) return;
    if (!exact && want.is_number_float() && got.is_number() &&
        std::abs(got.get<double>() - want.get<double>()) <= 1e-4 * std::abs(want.get<double>()))
      return;
    std::printf("%s: golden %s, now %s\n", what.c_str(), want.dump().c_str(), got.dump().c_str());
    ++differences;
  };
  for (const char* key :
       {"valid_ppl", "test_ppl", "train_ppl", "steps", "trainable_params", "epochs"})
    if (!golden.contains(key)) {
      std::fprintf(stderr, "compare_run: %s has no \"%s\" (not a train_lm results file?)\n",
                   argv[1], key);
      return 2;
    }
  if (!result.contains("epochs") || !result.at("epochs").is_array()) {
    std::fprintf(stderr, "compare_run: %s has no \"epochs\" (not a train_lm results file?)\n",
                 argv[2]);
    return 2;
  }
  for (const char* key : {"valid_ppl", "test_ppl", "train_ppl", "steps", "trainable_params"})
    check(key, golden.at(key), result.value(key, json()));
  const json& epochs = golden.at("epochs");
  check("epochs", epochs.size(), result.at("epochs").size());
  for (size_t i = 0; i < epochs.size() && i < result.at("epochs").size(); ++i)
    for (const char* key :
         {"epoch", "step", "train_loss", "valid_loss", "valid_ppl"})  // not timings
      if (epochs[i].contains(key))
        check("epoch " + std::to_string(i + 1) + " " + key, epochs[i][key],
              result["epochs"][i].value(key, json()));
  std::fprintf(differences == 0 ? stdout : stderr, "%s: %d differences\n", argv[2], differences);
  return differences == 0 ? 0 : 1;
}
