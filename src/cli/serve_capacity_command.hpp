#pragma once
#include <CLI/CLI.hpp>

#include <functional>

namespace skyfabric::cli {
// Registers `skyfabric serve-capacity`; returns the action to run when it was parsed.
std::function<int()> add_serve_capacity_command(CLI::App& app, CLI::App*& command);
}  // namespace skyfabric::cli
