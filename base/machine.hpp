// Facts about the machine a program runs on, for the checks made before allocating.
#pragma once

#include <cstdint>
#include <string>

namespace tg::base {

// Installed memory in bytes (0 if the system does not say).
uint64_t physical_memory();
// "1.5 GiB", "340 MiB": a size as the refusals quote it.
std::string bytes_text(double bytes);

}  // namespace tg::base
