// Facts about the machine a program runs on, for the checks made before allocating.
#pragma once

#include <cstdint>
#include <string>

namespace tg::base {

// Installed memory in bytes (0 if the system does not say).
uint64_t physical_memory();
// "1.5 GiB", "340 MiB": a size as the refusals quote it.
std::string bytes_text(double bytes);
// The processor's name ("AMD EPYC 9B45", "Intel(R) Xeon(R) Platinum 8488C"; "" if the system
// does not say) and which of the instruction sets the products can use it has ("avx2 fma
// avx512f avx512_bf16 amx_bf16"), from /proc/cpuinfo: what a run file records of its machine.
std::string cpu_model();
std::string cpu_instruction_sets();

}  // namespace tg::base
