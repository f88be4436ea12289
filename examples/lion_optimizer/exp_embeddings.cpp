// The library's embedding experiment, with Lion registered: a whole study under Lion.
//   lion_exp_embeddings --optimizer lion --lr 3e-4 --modes learned,learned-tied --out results/lion
#include "apps/startup.hpp"
#include "experiments/programs.hpp"
#include "lion.hpp"

int main(int argc, char** argv) {
  tg::apps::start_program(argv);  // OpenBLAS's fastest kernel for this CPU
  lion::register_lion();
  return tg::experiments::exp_embeddings_main(argc, argv);
}
