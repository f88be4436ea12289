// The library's train_lm, with Lion registered: checkpoints, resume, MPI and the results file
// work for it as for the built-in optimizers.
//   lion_train_lm --optimizer lion --lr 3e-4 --weight-decay 1 --corpus-file text.txt --epochs 2
#include "apps/programs.hpp"
#include "apps/startup.hpp"
#include "lion.hpp"

int main(int argc, char** argv) {
  tg::apps::start_program(argv);  // OpenBLAS's fastest kernel for this CPU
  lion::register_lion();
  return tg::apps::train_lm_main(argc, argv);
}
