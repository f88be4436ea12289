// The library's train_lm, with "swiglu-gpt" registered: every flag, checkpoints, MPI and the
// results file work for it as for the built-in models.
//   swiglu_train_lm --model swiglu-gpt --corpus-file text.txt --epochs 2
#include "apps/programs.hpp"
#include "apps/startup.hpp"
#include "swiglu.hpp"

// BEGIN DOC EXAMPLE
int main(int argc, char** argv) {
  tg::apps::start_program(argv);  // OpenBLAS's fastest kernel for this CPU
  swiglu::register_swiglu_gpt();
  return tg::apps::train_lm_main(argc, argv);
}
// END DOC EXAMPLE
