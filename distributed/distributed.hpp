// Data-parallel training over MPI processes (PyTorch's DistributedDataParallel, in small).
//
// Every rank holds the whole model and the same optimizer state. Each step, every rank takes
// its own rows of the global batch, runs forward and backward on them, and GradientSync
// averages the gradients across ranks (weighted by each rank's share of the batch, so the
// result is the gradient of the mean loss over the whole batch). Every rank then applies the
// same optimizer step to the same gradients, and the parameters stay identical.
//
//  * Dense gradients travel in buckets of about `bucket_bytes`, filled in the order backward
//    produces them: a bucket's MPI_Iallreduce starts as soon as its last gradient is final,
//    while backward goes on with the earlier layers.
//  * Row-sparse embedding gradients are exchanged as (row, values) lists with
//    MPI_Allgatherv, unless the rows of all ranks together are so many that reducing the
//    dense table is cheaper.
//
// Without MPI (built without it, or run without mpirun) everything here is a no-op over one
// process: rank 0 of 1.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.hpp"

namespace tg::distributed {

// Starts MPI if this process was launched by mpirun/mpiexec (and tapegrad was built with
// MPI); otherwise the run is one process. Idempotent; finalises at exit.
void init();
bool built_with_mpi();
int rank();
int size();
inline bool is_main() {
  return rank() == 0;
}  // the rank that writes logs, results, checkpoints

// Ends every process of the job with `code` (MPI_Abort): a rank that fails must not leave the
// others waiting in a collective for ever. Without MPI, std::exit.
[[noreturn]] void abort(int code);

void barrier();
// Sums each value over all ranks (in place).
void sum(double* values, size_t count);
inline double sum(double value) {
  sum(&value, 1);
  return value;
}
// Overwrites `values` on every rank with rank 0's.
void broadcast(float* values, size_t count);
// Rank `root`'s text, on every rank.
std::string broadcast(const std::string& text, int root = 0);

// Runs `fn` on rank 0 first, then on the others: for work that creates a shared file
// (fetching the corpus, training word vectors) before everyone reads it.
template <class F>
void rank0_first(F&& fn) {
  if (is_main()) fn();
  barrier();
  if (!is_main()) fn();
}

// For tests and reference runs inside an MPI job: while alive, this thread's collectives use
// a group of one (MPI_COMM_SELF), so the code runs as a single process would.
class SingleProcess {
 public:
  SingleProcess();
  ~SingleProcess();
  SingleProcess(const SingleProcess&) = delete;
  SingleProcess& operator=(const SingleProcess&) = delete;

 private:
  bool previous_;
};

// This rank's rows of a global batch of `rows`: [begin, end), as even as possible.
std::pair<size_t, size_t> shard(size_t rows);

struct SyncOptions {
  size_t bucket_bytes = 4u << 20;
  bool overlap = true;  // start each bucket's reduction during backward
};

struct SyncStats {
  double comm_seconds = 0.0;  // time this rank spent blocked in MPI calls for gradients
  size_t steps = 0, sparse_exchanges = 0, dense_fallbacks = 0;
};

class GradientSync {
 public:
  // params: the trainable parameters, in the same order on every rank.
  explicit GradientSync(std::vector<Tensor> params, SyncOptions options = {});
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // backward(loss), then averages the gradients: `share` is this rank's fraction of the
  // global batch's predictions (the shares of all ranks sum to 1).
  void backward(const Tensor& loss, double share);
  // For a rank with no rows in this batch: contributes zero gradients to the average.
  void contribute_nothing();

  const SyncStats& stats() const { return stats_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  SyncStats stats_;
};

}  // namespace tg::distributed
