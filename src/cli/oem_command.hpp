#pragma once
#include <CLI/CLI.hpp>

#include <functional>

namespace skyfabric::cli {
// Registers `skyfabric oem`; returns the action to run when it was parsed.
std::function<int()> add_oem_command(CLI::App& app, CLI::App*& command);
}  // namespace skyfabric::cli
