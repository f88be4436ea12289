// The programs' mains, as functions: build/bin/<name> is tg::apps::start_program(argv) and then
// `return tg::apps::<name>_main(argc, argv);` (apps/main.cpp.in). A user's program can be the
// same after registering its own models (train/models.hpp), which then work with every flag.
#pragma once

namespace tg::apps {

int train_lm_main(int argc, char** argv);
int word2vec_main(int argc, char** argv);
int exp_embeddings_main(int argc, char** argv);
int exp_data_size_main(int argc, char** argv);
int exp_lifecycle_main(int argc, char** argv);
int report_main(int argc, char** argv);
int ngram_main(int argc, char** argv);

}  // namespace tg::apps
