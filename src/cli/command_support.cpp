#include "cli/command_support.hpp"

namespace skyfabric::cli {

CLI::Option* add_set_option(CLI::App& command, std::vector<std::string>& overrides, const std::string& description) {
    return command.add_option("--set", overrides, description + " (one KEY.PATH=VALUE per --set; repeat it)")
        ->type_name("KEY.PATH=VALUE")
        ->allow_extra_args(false);
}

std::vector<scenario::Override> parse_overrides(const std::vector<std::string>& arguments) {
    std::vector<scenario::Override> out;
    for (const auto& a : arguments) out.push_back(scenario::parse_override(a));
    return out;
}

CLI::Option* add_threads_option(CLI::App& command, int& threads) {
    return command
        .add_option("--threads", threads,
                    "At most N CPU threads for the propagation, the physics running ahead of a training job, the Monte Carlo "
                    "trials and a constellation's algorithms (0: every core; caps radiation.threads)")
        ->type_name("N")
        ->check(CLI::Range(0, 1024));
}

CLI::Option* add_yes_flag(CLI::App& command, bool& yes) {
    return command.add_flag("--yes", yes,
                            "Start a run even when its estimated memory or CPU time is over the limit a run starts without asking");
}

}  // namespace skyfabric::cli
