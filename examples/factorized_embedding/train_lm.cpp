// The library's train_lm, with ALBERT's factorized tables registered: --embedding
// factorized-e16 for any model (gpt, nplm, lstm, gru, or one of yours).
//   factorized_train_lm --embedding factorized-e16 --corpus-file text.txt --epochs 2
#include "apps/programs.hpp"
#include "apps/startup.hpp"
#include "factorized.hpp"

int main(int argc, char** argv) {
  tg::apps::start_program(argv);  // OpenBLAS's fastest kernel for this CPU
  for (size_t e : {8, 16, 32}) factorized::register_factorized(e);
  return tg::apps::train_lm_main(argc, argv);
}
