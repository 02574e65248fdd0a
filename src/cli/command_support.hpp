#pragma once
// What the commands share: exit statuses, `--set`, `--threads` and `--yes` (stopping on Ctrl-C is
// common/stop_signal.hpp, which the sweep shares).
#include "scenario/scenario.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace skyfabric::cli {

constexpr int exit_ok = 0;
constexpr int exit_run_failure = 1;
constexpr int exit_bad_input = 2;
constexpr int exit_cannot_train = 3;  // run --strict: the run completed but its job could not train, or its serving dropped requests
constexpr int exit_interrupted = 130;

// `--set KEY.PATH=VALUE`, one override per use (repeat it for more): it never takes the
// next argument as a second value, so the scenario may come before or after it.
CLI::Option* add_set_option(CLI::App& command, std::vector<std::string>& overrides,
                            const std::string& description = "Override a scenario key, e.g. --set orbit.altitude_km=550");
std::vector<scenario::Override> parse_overrides(const std::vector<std::string>& arguments);

// `--threads N`: the most CPU threads a run uses (propagation and Monte Carlo trials); 0 = every core.
CLI::Option* add_threads_option(CLI::App& command, int& threads);
// `--yes`: start a run larger than the size a run starts without asking (scenario::LoadOptions).
CLI::Option* add_yes_flag(CLI::App& command, bool& yes);

}  // namespace skyfabric::cli
