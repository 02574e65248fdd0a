// The fault and recovery settings' constraints, each once (faults.hpp check): the fault draw and the
// recovery model throw them, the scenario loader reports them at their keys.
#include <skyfabric/workloads/faults.hpp>

#include <cmath>
#include <string>

namespace skyfabric::workloads {

physics::SettingsProblems check(const FaultModel& model) {
    physics::SettingsProblems problems;
    if (!(model.sdc_detection_probability >= 0.0 && model.sdc_detection_probability <= 1.0))
        problems.push_back({"sdc_detection_probability", "must be in [0, 1]"});
    if (!(model.link_outage_rate_per_s >= 0.0)) problems.push_back({"link_outage_rate_per_s", "must be >= 0"});
    if (!(model.gateway_outage_rate_per_s >= 0.0)) problems.push_back({"gateway_outage_rate_per_s", "must be >= 0"});
    if (!(model.rate_scale >= 0.0 && std::isfinite(model.rate_scale))) problems.push_back({"rate_scale", "must be finite and >= 0"});
    return problems;
}

physics::SettingsProblems check(const RecoveryConfig& config, std::int32_t satellite_count) {
    physics::SettingsProblems problems;
    const auto non_negative = [&](const char* key, double x) {
        if (!(x >= 0.0)) problems.push_back({key, "must be >= 0"});
    };
    non_negative("checkpoint_interval_s", config.checkpoint_interval_s);
    non_negative("checkpoint_cost_s", config.checkpoint_cost_s);
    // Daly's interval sqrt(2 delta M) needs a cost; the run failed only after the simulation.
    if (config.checkpoint_interval_s <= 0.0 && config.checkpoint_cost_s == 0.0 && config.checkpoint_mode == CheckpointMode::blocking)
        problems.push_back({"checkpoint_cost_s", "must be > 0 with checkpoint_interval: auto (Daly's interval needs a cost); "
                                                 "for free checkpoints give checkpoint_interval in seconds"});
    if (config.checkpoint_mode == CheckpointMode::async) {
        non_negative("snapshot_bytes_per_rank", config.snapshot_bytes_per_rank);
        if (!(config.snapshot_bandwidth_Bps > 0.0 && std::isfinite(config.snapshot_bandwidth_Bps)))
            problems.push_back({"snapshot_bandwidth_Bps", "must be > 0 with checkpoint_mode: async"});
        else if (config.checkpoint_interval_s <= 0.0 && !(config.snapshot_bytes_per_rank > 0.0))
            problems.push_back({"snapshot_bytes_per_rank", "must be > 0 with checkpoint_interval: auto and checkpoint_mode: async "
                                                           "(Daly's interval needs the snapshot's stall)"});
    }
    non_negative("restart_s", config.restart_s);
    non_negative("reboot_s", config.reboot_s);
    non_negative("link_outage_s", config.link_outage_s);
    non_negative("gateway_failover_s", config.gateway_failover_s);
    const std::int32_t group = config.spare_group_size > 0 ? config.spare_group_size : satellite_count;
    if (config.spare_group_size < 0) problems.push_back({"spare_group_size", "must be >= 0"});
    else if (config.spare_group_size > 0 && satellite_count % config.spare_group_size != 0)
        problems.push_back({"spare_group_size", "must divide the " + std::to_string(satellite_count) + " satellites"});
    if (config.spare_satellites < 0) problems.push_back({"spare_satellites", "must be >= 0"});
    else if (config.spare_satellites >= group)
        problems.push_back({"spare_satellites", "must leave at least one working satellite of " + std::to_string(group) +
                                                    (config.spare_group_size > 0 ? " in each group" : "")});
    if (config.rank_multiple < 1) problems.push_back({"rank_multiple", "must be at least 1"});
    return problems;
}

bool starts_as_spare(const RecoveryConfig& config, std::int32_t satellite, std::int32_t satellite_count) {
    const std::int32_t group = config.spare_group_size > 0 ? config.spare_group_size : satellite_count;
    return satellite % group >= group - config.spare_satellites;
}

std::int32_t initial_rank_count(const RecoveryConfig& config, std::int32_t satellite_count) {
    const std::int32_t groups = config.spare_group_size > 0 ? satellite_count / config.spare_group_size : 1;
    return satellite_count - groups * config.spare_satellites;
}

}  // namespace skyfabric::workloads
