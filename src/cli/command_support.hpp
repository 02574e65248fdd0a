#pragma once
// What the commands share: exit statuses, `--set`, `--threads`, `--yes`, and stopping on Ctrl-C.
#include "scenario/scenario.hpp"

#include <CLI/CLI.hpp>

#include <atomic>
#include <string>
#include <vector>

namespace skyfabric::cli {

constexpr int exit_ok = 0;
constexpr int exit_run_failure = 1;
constexpr int exit_bad_input = 2;
constexpr int exit_cannot_train = 3;  // run --strict: the run completed but its job could not train
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

// SIGINT and SIGTERM set stop_requested() instead of killing the process: a command checks it
// at its next safe point, keeps what it has done and exits with exit_interrupted.
void install_stop_handlers();
std::atomic<bool>& stop_requested();

}  // namespace skyfabric::cli
