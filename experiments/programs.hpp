// The study's programs (tapegrad::experiments), as functions, like the general ones in
// apps/programs.hpp: a user's program that registers its own models and then returns
// tg::experiments::exp_embeddings_main(argc, argv) runs the study on them.
#pragma once

namespace tg::experiments {

int exp_embeddings_main(int argc, char** argv);
int exp_data_size_main(int argc, char** argv);
int exp_lifecycle_main(int argc, char** argv);
int report_main(int argc, char** argv);

}  // namespace tg::experiments
