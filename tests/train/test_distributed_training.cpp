// Data-parallel training under `mpirun -np 2` (CTest runs it so): 20 steps on 2 ranks give the
// parameters of a single-process run on the combined batches, every rank holds the same
// parameters, and a 2-rank checkpoint resumes on 1 rank or 2.
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>

#include "distributed/distributed.hpp"
#include "train/toy_data.hpp"
#include "train/trainer.hpp"

using namespace tg;
namespace fs = std::filesystem;

namespace {

struct StartMPI {
  StartMPI() { distributed::init(); }
};
BOOST_TEST_GLOBAL_FIXTURE(StartMPI);

const text::LMData& toy() {
  return testing::toy_data();
}

// Dropout off: the masks of a batch split over ranks cannot equal those of one process.
train::TrainConfig tiny(const std::string& model, bool tied, const std::string& optimizer) {
  train::TrainConfig c;
  c.model = testing::tiny_model(model);
  c.model.tied = tied;
  c.optimizer = optimizer;
  c.batch = 7;  // an odd batch: ranks hold 3 and 4 rows, weighted accordingly
  c.steps = 20;
  c.warmup = 0;
  c.lr = 1e-2f;
  c.model.dropout = 0.0f;
  c.quiet = true;
  c.seed = 5;
  c.valid_limit = 200;
  return c;
}

std::vector<std::vector<float>> parameters(const nn::Module& m) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, p] : m.named_parameters())
    out.emplace_back(p.data(), p.data() + p.numel());
  return out;
}

// Largest |a - b| over all parameters.
double max_diff(const std::vector<std::vector<float>>& a,
                const std::vector<std::vector<float>>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[i].size(); ++j)
      d = std::max(d, std::fabs(static_cast<double>(a[i][j]) - b[i][j]));
  return d;
}

void require_same_on_every_rank(const std::vector<std::vector<float>>& params) {
  for (const auto& p : params) {
    std::vector<float> rank0 = p;
    distributed::broadcast(rank0.data(), rank0.size());
    BOOST_TEST(p == rank0, boost::test_tools::per_element());
  }
}

// A path every rank agrees on: rank 0's process id.
std::string shared_temp(const std::string& name) {
  const double pid =
      distributed::sum(distributed::is_main() ? static_cast<double>(::getpid()) : 0.0);
  return (fs::temp_directory_path() /
          ("tapegrad_distributed_" + std::to_string(static_cast<long>(pid)) + "_" + name))
      .string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(distributed_training)

BOOST_AUTO_TEST_CASE(two_ranks_equal_one_process_on_the_combined_batch) {
  BOOST_REQUIRE_MESSAGE(distributed::size() == 2, "run this suite with mpirun -np 2 (CTest does)");
  // Untied: row-sparse embedding gradients exchanged; tied: one dense table. With SGD the two
  // runs differ only by float rounding. Adam divides by sqrt(v): a gradient entry near zero
  // whose rounding differs can move by a visible fraction of lr, hence a looser bound there.
  struct Case {
    const char* model;
    bool tied;
    const char* optimizer;
    float lr;
    double tolerance;
  };
  for (const Case& k :
       {Case{"gpt", false, "sgd", 0.5f, 2e-6}, Case{"gpt", true, "sgd", 0.5f, 2e-6},
        Case{"nplm", false, "sgd", 0.5f, 2e-6}, Case{"gpt", false, "adamw", 1e-2f, 2e-4},
        Case{"gpt", true, "adamw", 1e-2f, 2e-4}, Case{"nplm", false, "lazy-adam", 1e-2f, 2e-4},
        // Each rank carries the state of its rows of the streams.
        Case{"lstm", false, "sgd", 0.5f, 2e-6}, Case{"lstm", false, "adamw", 1e-2f, 2e-4}}) {
    BOOST_TEST_CONTEXT(k.model << (k.tied ? " tied " : " untied ") << k.optimizer) {
      train::TrainConfig c = tiny(k.model, k.tied, k.optimizer);
      c.lr = k.lr;
      const auto initial = parameters(*train::build_model(c, toy()));
      std::vector<std::vector<float>> single;
      {
        distributed::SingleProcess alone;
        single = parameters(*train::train_language_model(c, toy()).model);
      }
      const train::RunResult r = train::train_language_model(c, toy());
      BOOST_TEST(r.json["mpi_ranks"].get<int>() == 2);
      const auto parallel = parameters(*r.model);
      const double moved = max_diff(single, initial), gap = max_diff(parallel, single);
      BOOST_TEST_MESSAGE("parameters moved up to "
                         << moved << "; 2 ranks vs 1 process differ by up to " << gap);
      BOOST_TEST(moved > 0.01);
      BOOST_TEST(gap < k.tolerance);
      require_same_on_every_rank(parallel);
    }
  }
}

// The lstm's checkpoint also holds the state it carries in the middle of an epoch, gathered
// from the ranks' rows and dealt out again on resume.
BOOST_AUTO_TEST_CASE(a_two_rank_checkpoint_resumes_on_one_rank_or_two) {
  for (const std::string model : {"gpt", "lstm"}) {
    BOOST_TEST_CONTEXT(model) {
      train::TrainConfig c = tiny(model, false, "adamw");
      const auto straight = parameters(*train::train_language_model(c, toy()).model);

      // Stop after step 10's checkpoint (written by rank 0 alone) by failing step 11 on both
      // ranks.
      c.checkpoint = shared_temp(model + "_resume.safetensors");
      c.checkpoint_every = 10;
      train::TrainHooks stop;
      stop.after_backward = [](long step, nn::LanguageModel&) {
        if (step == 10) throw std::runtime_error("stop here");
      };
      BOOST_CHECK_THROW(train::train_language_model(c, toy(), stop), std::runtime_error);
      distributed::barrier();
      c.resume = c.checkpoint;
      c.checkpoint.clear();

      const auto two_ranks = parameters(*train::train_language_model(c, toy()).model);
      // Same ranks, same data, same order: same bits.
      BOOST_TEST(max_diff(two_ranks, straight) == 0.0);
      std::vector<std::vector<float>> one_rank;
      {
        distributed::SingleProcess alone;
        one_rank = parameters(*train::train_language_model(c, toy()).model);
      }
      BOOST_TEST(max_diff(one_rank, straight) < 2e-5);
      distributed::barrier();
      if (distributed::is_main()) fs::remove(c.resume);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
