// The general programs' mains, as functions: build/bin/<name> is tg::apps::start_program(argv)
// and then `return tg::apps::<name>_main(argc, argv);` (apps/main.cpp.in). A user's program can
// be the same after registering its own models (train/models.hpp), which then work with every
// flag. The study's programs are in experiments/programs.hpp.
#pragma once

namespace tg::apps {

int train_lm_main(int argc, char** argv);
int word2vec_main(int argc, char** argv);
int ngram_main(int argc, char** argv);
int tokenize_main(int argc, char** argv);

}  // namespace tg::apps
