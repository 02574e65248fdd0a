#pragma once
// What `skyfabric oem` checks of what it reads (the arrays of result.h5 and --satellites) before it
// writes anything: no HDF5 here, so the fuzz target puts arbitrary arrays through the same checks.
// A refusal is a ScenarioError (exit 2) quoting at most 80 characters of the input, escaped.
#include <cstdint>
#include <string>
#include <vector>

namespace skyfabric::cli {

// Values a run writes are far inside these; a file holding others was damaged or tampered with.
inline constexpr double oem_time_limit_s = 1e10;          // ~317 years from the epoch
inline constexpr double oem_position_limit_m = 1e12;      // beyond the Sun's distance
inline constexpr double oem_velocity_limit_m_s = 3e8;     // the speed of light

// Bad input quoted in a message: at most 80 characters, anything not printable ASCII as \xNN.
std::string shown(const std::string& text);

// "I,J,...": each a decimal index, none empty, none twice, each a satellite of the run (0..count-1).
std::vector<std::int64_t> parse_satellites(const std::string& text, std::int64_t count);

// Every value finite and within ±limit; with `increasing`, each above the one before. `file` and
// `dataset` name them in the refusal.
void check_values(const std::string& file, const std::string& dataset, const std::vector<double>& values, double limit,
                  const char* unit, bool increasing = false);

}  // namespace skyfabric::cli
