// The library's embedding experiment, with "swiglu-gpt" registered:
//   swiglu_exp_embeddings --models gpt,swiglu-gpt --corpus-file text.txt --out results
#include "apps/startup.hpp"
#include "experiments/programs.hpp"
#include "swiglu.hpp"

int main(int argc, char** argv) {
  tg::apps::start_program(argv);  // OpenBLAS's fastest kernel for this CPU
  swiglu::register_swiglu_gpt();
  return tg::experiments::exp_embeddings_main(argc, argv);
}
