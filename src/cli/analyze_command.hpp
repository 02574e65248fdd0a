#pragma once
// `skyfabric analyze RUN_DIR [--format table|json] [--verify]`: why the run was slow, what to change,
// and (with --verify) a rerun proving it (analysis/, docs/analysis.md).
#include <CLI/CLI.hpp>

#include <functional>

namespace skyfabric::cli {

std::function<int()> add_analyze_command(CLI::App& app, CLI::App*& command);

}  // namespace skyfabric::cli
