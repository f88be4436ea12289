#include "distributed/distributed.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>

#ifdef TAPEGRAD_WITH_MPI
#include <mpi.h>
#endif

namespace tg::distributed {

namespace {

thread_local bool t_single_process = false;
bool g_mpi_started = false;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The launchers of Open MPI, MPICH/Hydra and PMIx-based schedulers set these.
bool launched_by_mpirun() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(var)) return true;
  return false;
}

#ifdef TAPEGRAD_WITH_MPI
MPI_Comm comm() {
  return t_single_process ? MPI_COMM_SELF : MPI_COMM_WORLD;
}

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(what) +
                           " failed: " + std::string(text, static_cast<size_t>(length)));
}

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
#endif

bool active() {
  return g_mpi_started && !t_single_process;
}

}  // namespace

bool built_with_mpi() {
#ifdef TAPEGRAD_WITH_MPI
  return true;
#else
  return false;
#endif
}

void init() {
  if (g_mpi_started || !launched_by_mpirun()) return;
#ifdef TAPEGRAD_WITH_MPI
  int already = 0;
  MPI_Initialized(&already);
  if (!already) check(MPI_Init(nullptr, nullptr), "MPI_Init");
  // Errors come back as codes (and become exceptions) instead of killing the job silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_mpi_started = true;
  std::atexit(finalize_at_exit);
#else
  std::fprintf(
      stderr,
      "tapegrad: launched by mpirun, but built without MPI (install libopenmpi-dev and rebuild): "
      "every process trains alone\n");
#endif
}

int rank() {
#ifdef TAPEGRAD_WITH_MPI
  if (active()) {
    int r = 0;
    MPI_Comm_rank(comm(), &r);
    return r;
  }
#endif
  return 0;
}

int size() {
#ifdef TAPEGRAD_WITH_MPI
  if (active()) {
    int n = 1;
    MPI_Comm_size(comm(), &n);
    return n;
  }
#endif
  return 1;
}

void abort(int code) {
#ifdef TAPEGRAD_WITH_MPI
  if (g_mpi_started) {
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 1) MPI_Abort(MPI_COMM_WORLD, code);
  }
#endif
  std::exit(code);
}

void barrier() {
#ifdef TAPEGRAD_WITH_MPI
  if (active()) check(MPI_Barrier(comm()), "MPI_Barrier");
#endif
}

void sum(double* values, size_t count) {
#ifdef TAPEGRAD_WITH_MPI
  if (active() && size() > 1)
    check(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, MPI_SUM, comm()),
          "MPI_Allreduce");
#else
  (void)values, (void)count;
#endif
}

void broadcast(float* values, size_t count) {
#ifdef TAPEGRAD_WITH_MPI
  if (active() && size() > 1)
    check(MPI_Bcast(values, static_cast<int>(count), MPI_FLOAT, 0, comm()), "MPI_Bcast");
#else
  (void)values, (void)count;
#endif
}

std::string broadcast(const std::string& text, int root) {
#ifdef TAPEGRAD_WITH_MPI
  if (!active() || size() == 1) return text;
  unsigned long long length = text.size();
  check(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm()), "MPI_Bcast");
  std::string out = rank() == root ? text : std::string(length, '\0');
  check(MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, root, comm()), "MPI_Bcast");
  return out;
#else
  (void)root;
  return text;
#endif
}

SingleProcess::SingleProcess() : previous_(t_single_process) {
  t_single_process = true;
}
SingleProcess::~SingleProcess() {
  t_single_process = previous_;
}

std::pair<size_t, size_t> shard(size_t rows) {
  const size_t n = static_cast<size_t>(size()), r = static_cast<size_t>(rank());
  return {rows * r / n, rows * (r + 1) / n};
}

// ---------------------------------------------------------------------------------------
// GradientSync

#ifdef TAPEGRAD_WITH_MPI

struct GradientSync::Impl {
  struct Bucket {
    std::vector<size_t> params;  // indices into `params`, in ready order
    std::vector<float> buffer;   // the gradients, then one "had a gradient" flag per parameter
    MPI_Request request = MPI_REQUEST_NULL;
    bool launched = false;
    long ready_at = -1;  // the bucket is final once backward has processed this tape node
  };

  std::vector<Tensor> params;
  SyncOptions options;
  bool planned = false;
  std::vector<bool> sparse_kind;  // embedding tables whose gradient arrives row-sparse
  std::vector<Bucket> buckets;
  size_t next_bucket = 0;
  double share = 1.0;
  SyncStats* stats = nullptr;

  // Tape position of each parameter's first use in this step's forward pass (-1: unused):
  // backward has finished that parameter's gradient once it has processed that node.
  std::vector<long> first_uses() const {
    std::unordered_map<const TensorImpl*, size_t> index;
    for (size_t i = 0; i < params.size(); ++i) index[params[i].impl()] = i;
    std::vector<long> first(params.size(), -1);
    const auto& nodes = tape().nodes();
    for (size_t n = nodes.size(); n-- > 0;)
      for (const Tensor& input : nodes[n].inputs)
        if (auto it = index.find(input.impl()); it != index.end())
          first[it->second] = static_cast<long>(n);
    return first;
  }

  // Buckets in the order backward finishes the gradients, decided on rank 0 and broadcast, so
  // that every rank starts the same reductions in the same order.
  void plan(const std::vector<long>& first) {
    std::vector<int> flags(params.size());
    for (size_t i = 0; i < params.size(); ++i) flags[i] = params[i].sparse_grad() != nullptr;
    check(MPI_Allreduce(MPI_IN_PLACE, flags.data(), static_cast<int>(flags.size()), MPI_INT,
                        MPI_MAX, comm()),
          "MPI_Allreduce");
    sparse_kind.assign(params.size(), false);
    for (size_t i = 0; i < params.size(); ++i) sparse_kind[i] = flags[i] != 0;

    std::vector<int> order(params.size());
    std::iota(order.begin(), order.end(), 0);
    // Latest first use first; unused parameters last.
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const long fa = first[static_cast<size_t>(a)], fb = first[static_cast<size_t>(b)];
      return (fa < 0 ? -2 : fa) > (fb < 0 ? -2 : fb);
    });
    check(MPI_Bcast(order.data(), static_cast<int>(order.size()), MPI_INT, 0, comm()), "MPI_Bcast");
    buckets.clear();
    size_t bytes = 0;
    for (int id : order) {
      const size_t i = static_cast<size_t>(id);
      if (sparse_kind[i]) continue;
      if (buckets.empty() || bytes >= options.bucket_bytes) buckets.emplace_back(), bytes = 0;
      buckets.back().params.push_back(i);
      bytes += params[i].numel() * sizeof(float);
    }
    for (Bucket& b : buckets) {
      size_t floats = b.params.size();
      for (size_t i : b.params) floats += params[i].numel();
      b.buffer.resize(floats);
    }
    planned = true;
  }

  void set_ready_points(const std::vector<long>& first) {
    for (Bucket& b : buckets) {
      b.ready_at = static_cast<long>(tape().size());
      for (size_t i : b.params) b.ready_at = std::min(b.ready_at, first[i] < 0 ? -1 : first[i]);
    }
  }

  void launch(Bucket& b) {
    float* out = b.buffer.data();
    float* flag = out + b.buffer.size() - b.params.size();
    const float scale = static_cast<float>(share);
    for (size_t k = 0; k < b.params.size(); ++k) {
      const Tensor& p = params[b.params[k]];
      const size_t n = p.numel();
      if (p.has_dense_grad() && !p.sparse_grad()) {
        const float* g = p.grad().data();
        for (size_t j = 0; j < n; ++j) out[j] = g[j] * scale;
      } else if (p.has_grad()) {
        const Array g = p.dense_grad();
        for (size_t j = 0; j < n; ++j) out[j] = g.data()[j] * scale;
      } else {
        std::fill(out, out + n, 0.0f);
      }
      flag[k] = p.has_grad() ? 1.0f : 0.0f;
      out += n;
    }
    const double t0 = now_s();
    check(MPI_Iallreduce(MPI_IN_PLACE, b.buffer.data(), static_cast<int>(b.buffer.size()),
                         MPI_FLOAT, MPI_SUM, comm(), &b.request),
          "MPI_Iallreduce");
    stats->comm_seconds += now_s() - t0;
    b.launched = true;
  }

  // Called by backward after each tape node: starts every bucket that became final, in order,
  // and lets MPI progress the ones in flight.
  void after_node(size_t node) {
    while (next_bucket < buckets.size() && buckets[next_bucket].ready_at >= static_cast<long>(node))
      launch(buckets[next_bucket++]);
    if (next_bucket == 0) return;
    const double t0 = now_s();
    for (size_t b = 0; b < next_bucket; ++b)
      if (buckets[b].request != MPI_REQUEST_NULL) {
        int done = 0;
        MPI_Test(&buckets[b].request, &done, MPI_STATUS_IGNORE);
      }
    stats->comm_seconds += now_s() - t0;
  }

  void finish_dense() {
    while (next_bucket < buckets.size()) launch(buckets[next_bucket++]);
    const double t0 = now_s();
    for (Bucket& b : buckets) check(MPI_Wait(&b.request, MPI_STATUS_IGNORE), "MPI_Wait");
    stats->comm_seconds += now_s() - t0;
    for (Bucket& b : buckets) {
      const float* in = b.buffer.data();
      const float* flag = in + b.buffer.size() - b.params.size();
      for (size_t k = 0; k < b.params.size(); ++k) {
        Tensor& p = params[b.params[k]];
        const size_t n = p.numel();
        p.zero_grad();
        if (flag[k] > 0.0f) std::copy(in, in + n, p.grad_data());
        in += n;
      }
      b.launched = false;
    }
    next_bucket = 0;
  }

  // Row-sparse gradients: every rank sends its (row, values) list to all (MPI_Allgatherv) and
  // merges them in rank order, so every rank ends with the same sorted, summed rows. If the
  // lists together would be larger than the table, the table is reduced densely instead.
  void finish_sparse() {
    std::vector<size_t> ids;
    for (size_t i = 0; i < params.size(); ++i)
      if (sparse_kind[i]) ids.push_back(i);
    if (ids.empty()) return;
    const double t0 = now_s();
    const int n = size();
    std::vector<int> header(2 * ids.size()), all(2 * ids.size() * static_cast<size_t>(n));
    for (size_t k = 0; k < ids.size(); ++k) {
      const Tensor& p = params[ids[k]];
      header[2 * k] = p.has_dense_grad();
      header[2 * k + 1] = p.sparse_grad() ? static_cast<int>(p.sparse_grad()->rows.size()) : 0;
    }
    check(MPI_Allgather(header.data(), static_cast<int>(header.size()), MPI_INT, all.data(),
                        static_cast<int>(header.size()), MPI_INT, comm()),
          "MPI_Allgather");
    for (size_t k = 0; k < ids.size(); ++k) {
      Tensor& p = params[ids[k]];
      const size_t width = p.numel() / p.size(0);
      bool any_dense = false;
      std::vector<int> counts(static_cast<size_t>(n));
      size_t total_rows = 0;
      for (size_t r = 0; r < static_cast<size_t>(n); ++r) {
        any_dense = any_dense || all[r * header.size() + 2 * k] != 0;
        counts[r] = all[r * header.size() + 2 * k + 1];
        total_rows += static_cast<size_t>(counts[r]);
      }
      if (!any_dense && total_rows == 0) {
        p.zero_grad();
        continue;
      }
      if (any_dense) {
        reduce_dense(p);
        ++stats->dense_fallbacks;
      } else if (total_rows * (width + 1) >= p.numel()) {
        reduce_rows_densely(p, width);
        ++stats->dense_fallbacks;
      } else {
        exchange_rows(p, counts, width);
        ++stats->sparse_exchanges;
      }
    }
    stats->comm_seconds += now_s() - t0;
  }

  // Some rank has a dense gradient for this table (e.g. the rows were also used elsewhere):
  // the sum is dense too, as it would be in one process.
  void reduce_dense(Tensor& p) {
    Array g = p.has_grad() ? p.dense_grad() : Array(xt::zeros<float>(p.shape()));
    const float scale = static_cast<float>(share);
    for (float& x : g) x *= scale;
    check(MPI_Allreduce(MPI_IN_PLACE, g.data(), static_cast<int>(g.size()), MPI_FLOAT, MPI_SUM,
                        comm()),
          "MPI_Allreduce");
    p.zero_grad();
    std::copy(g.begin(), g.end(), p.grad_data());
  }

  // Row-sparse on every rank but touching most of the table: reduce the whole table plus one
  // "touched" flag per row, and keep the result row-sparse (a lazy optimizer must still skip
  // the rows no rank looked up).
  void reduce_rows_densely(Tensor& p, size_t width) {
    const size_t vocab = p.size(0);
    std::vector<float> buffer(vocab * (width + 1), 0.0f);
    const float scale = static_cast<float>(share);
    if (const SparseGrad* local = p.sparse_grad())
      for (size_t r = 0; r < local->rows.size(); ++r) {
        const size_t row = static_cast<size_t>(local->rows[r]);
        const float* g = local->values.data() + r * width;
        for (size_t j = 0; j < width; ++j) buffer[row * width + j] = g[j] * scale;
        buffer[vocab * width + row] = 1.0f;
      }
    check(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT,
                        MPI_SUM, comm()),
          "MPI_Allreduce");
    SparseGrad merged;
    for (size_t row = 0; row < vocab; ++row)
      if (buffer[vocab * width + row] > 0.0f) merged.rows.push_back(static_cast<int32_t>(row));
    merged.values = Array::from_shape({merged.rows.size(), width});
    for (size_t r = 0; r < merged.rows.size(); ++r)
      std::copy_n(buffer.data() + static_cast<size_t>(merged.rows[r]) * width, width,
                  merged.values.data() + r * width);
    p.zero_grad();
    p.sparse_grad_mut() = std::move(merged);
  }

  void exchange_rows(Tensor& p, const std::vector<int>& counts, size_t width) {
    const SparseGrad* local = p.sparse_grad();
    const int mine = local ? static_cast<int>(local->rows.size()) : 0;
    std::vector<float> values(static_cast<size_t>(mine) * width);
    const float scale = static_cast<float>(share);
    for (size_t j = 0; j < values.size(); ++j) values[j] = local->values.data()[j] * scale;
    std::vector<int> row_displs(counts.size()), value_counts(counts.size()),
        value_displs(counts.size());
    size_t total = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      row_displs[r] = static_cast<int>(total);
      value_counts[r] = counts[r] * static_cast<int>(width);
      value_displs[r] = static_cast<int>(total * width);
      total += static_cast<size_t>(counts[r]);
    }
    std::vector<int32_t> rows(total);
    std::vector<float> all_values(total * width);
    static_assert(sizeof(int32_t) == sizeof(int));
    check(MPI_Allgatherv(local ? local->rows.data() : nullptr, mine, MPI_INT, rows.data(),
                         counts.data(), row_displs.data(), MPI_INT, comm()),
          "MPI_Allgatherv");
    check(
        MPI_Allgatherv(values.data(), mine * static_cast<int>(width), MPI_FLOAT, all_values.data(),
                       value_counts.data(), value_displs.data(), MPI_FLOAT, comm()),
        "MPI_Allgatherv");
    // Merge: sort entries by row (stable, so equal rows add in rank order on every rank).
    std::vector<size_t> order(total);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return rows[a] < rows[b]; });
    SparseGrad merged;
    std::vector<float> merged_values;
    merged_values.reserve(total * width);
    for (size_t e : order) {
      if (merged.rows.empty() || merged.rows.back() != rows[e]) {
        merged.rows.push_back(rows[e]);
        merged_values.insert(merged_values.end(), all_values.begin() + static_cast<long>(e * width),
                             all_values.begin() + static_cast<long>((e + 1) * width));
      } else {
        float* dst = merged_values.data() + merged_values.size() - width;
        for (size_t j = 0; j < width; ++j) dst[j] += all_values[e * width + j];
      }
    }
    merged.values = Array::from_shape({merged.rows.size(), width});
    std::copy(merged_values.begin(), merged_values.end(), merged.values.begin());
    p.zero_grad();
    p.sparse_grad_mut() = std::move(merged);
  }
};

GradientSync::GradientSync(std::vector<Tensor> params, SyncOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->params = std::move(params);
  impl_->options = options;
  impl_->stats = &stats_;
}

GradientSync::~GradientSync() = default;

void GradientSync::backward(const Tensor& loss, double share) {
  Impl& s = *impl_;
  s.share = share;
  if (size() == 1) {
    tg::backward(loss);
    return;
  }
  const std::vector<long> first = s.first_uses();
  if (!s.planned || !s.options.overlap) {
    // The first step runs backward undisturbed and learns the order gradients arrive in.
    tg::backward(loss);
    if (!s.planned) s.plan(first);
  } else {
    s.set_ready_points(first);
    s.next_bucket = 0;
    BackwardOptions o;
    o.after_node = [&s](size_t node) { s.after_node(node); };
    tg::backward(loss, o);
  }
  s.finish_dense();
  s.finish_sparse();
  ++stats_.steps;
}

void GradientSync::contribute_nothing() {
  Impl& s = *impl_;
  if (size() == 1) return;
  for (Tensor& p : s.params) p.zero_grad();
  if (!s.planned) s.plan(std::vector<long>(s.params.size(), -1));
  s.share = 0.0;
  s.finish_dense();
  s.finish_sparse();
  ++stats_.steps;
}

#else  // built without MPI: one process, nothing to exchange

struct GradientSync::Impl {
  std::vector<Tensor> params;
};

GradientSync::GradientSync(std::vector<Tensor> params, SyncOptions)
    : impl_(std::make_unique<Impl>()) {
  impl_->params = std::move(params);
}
GradientSync::~GradientSync() = default;
void GradientSync::backward(const Tensor& loss, double) {
  tg::backward(loss);
}
void GradientSync::contribute_nothing() {
  for (Tensor& p : impl_->params) p.zero_grad();
}

#endif

}  // namespace tg::distributed
