// The library's embedding experiment, with ALBERT's factorized tables registered as kinds:
//   factorized_exp_embeddings --modes learned,learned-tied,factorized-e16 --out results/factorized
#include "apps/startup.hpp"
#include "experiments/programs.hpp"
#include "factorized.hpp"

int main(int argc, char** argv) {
  tg::apps::start_program(argv);  // OpenBLAS's fastest kernel for this CPU
  for (size_t e : {8, 16, 32}) factorized::register_factorized(e);
  return tg::experiments::exp_embeddings_main(argc, argv);
}
