// compare_run GOLDEN RESULT: exits 0 when every number GOLDEN records (perplexities, steps,
// parameter count, the per-epoch losses; not timings) is bit-identical in RESULT (a train_lm
// results file), and prints each difference otherwise. Used for the golden runs (recorded
// results that every build must replay), and for a study resumed after a kill against the
// same study run in one go. A run records which clone of the row kernels ("simd") and which
// OpenBLAS kernel ("blas") made it; when either differs (other summation orders), or with
// --relaxed (the sanitizer build, whose instrumentation keeps the kernels scalar), numbers must
// agree within a relative 1e-4 instead.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "autograd/simd_kernels.hpp"

using nlohmann::json;

int main(int argc, char** argv) {
  const bool relaxed = argc == 4 && std::string(argv[3]) == "--relaxed";
  if (argc != 3 && !relaxed) {
    std::fprintf(stderr, "usage: compare_run GOLDEN RESULT [--relaxed]\n");
    return 2;
  }
  json golden, result;
  try {
    std::ifstream(argv[1]) >> golden;
    std::ifstream(argv[2]) >> result;
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
