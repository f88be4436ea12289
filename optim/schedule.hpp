// Learning-rate schedules: lr as a function of the 0-based step.
#pragma once

#include <cmath>

#include "base/enum_names.hpp"

namespace tg::optim {

// Linear warm-up from lr/warmup to lr over `warmup` steps, then cosine decay to min_lr at
// `total` steps (and min_lr after), as in GPT-2/nanoGPT.
struct WarmupCosine {
  float lr;
  long warmup;
  long total;
  float min_lr = 0.0f;

  float operator()(long step) const {
    if (step < warmup) return lr * static_cast<float>(step + 1) / static_cast<float>(warmup);
    if (step >= total) return min_lr;
    const double progress =
        static_cast<double>(step - warmup) / static_cast<double>(std::max(1L, total - warmup));
    return min_lr + static_cast<float>(0.5 * (1.0 + std::cos(M_PI * progress))) * (lr - min_lr);
  }
};

// Bengio et al. (2003): eps_t = eps_0 / (1 + r t).
struct InverseDecay {
  float lr;
  float decay;
  float operator()(long step) const { return lr / (1.0f + decay * static_cast<float>(step)); }
};

enum class ScheduleKind { constant, cosine, inverse };
inline constexpr base::NameTable<ScheduleKind, 3> kScheduleNames{
    {{ScheduleKind::constant, "constant"},
     {ScheduleKind::cosine, "cosine"},
     {ScheduleKind::inverse, "inverse"}}};

// The schedule a training run uses: "constant" (after warm-up), "cosine" (warm-up + cosine)
// or "inverse" (Bengio).
struct Schedule {
  ScheduleKind kind = ScheduleKind::cosine;
  float lr = 1e-3f;
  long warmup = 0;
  long total = 1;
  float min_lr = 0.0f;
  float decay = 1e-8f;  // r of the inverse schedule

  float operator()(long step) const {
    switch (kind) {
      case ScheduleKind::constant:
        return step < warmup ? lr * static_cast<float>(step + 1) / static_cast<float>(warmup) : lr;
      case ScheduleKind::cosine:
        return WarmupCosine{lr, warmup, total, min_lr}(step);
      case ScheduleKind::inverse:
        return InverseDecay{lr, decay}(step);
    }
    return lr;
  }
};

}  // namespace tg::optim
