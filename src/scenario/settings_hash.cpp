// Canonical JSON of a scenario's settings (settings_hash.hpp). Each settings struct is listed field by
// field (settings_fields.hpp): a field missing from its line stops the build.
#include "scenario/settings_hash.hpp"

#include "output/sha256.hpp"
#include "scenario/settings_fields.hpp"

#include <optional>

// The two library types nlohmann has no conversion for.
namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
    static void to_json(json& j, const std::optional<T>& value) {
        if (value) j = *value;
        else j = nullptr;
    }
};
template <>
struct adl_serializer<Eigen::Vector3d> {
    static void to_json(json& j, const Eigen::Vector3d& v) { j = json::array({v.x(), v.y(), v.z()}); }
};
}  // namespace nlohmann

namespace skyfabric::physics {
SKYFABRIC_SETTINGS_FIELDS(UtcEpoch, year, month, day, hour, minute, second)
SKYFABRIC_SETTINGS_FIELDS(RelativeState, position_m, velocity_m_s)
SKYFABRIC_SETTINGS_FIELDS(SolarActivity, f107_daily_sfu, f107_81day_mean_sfu, ap)
SKYFABRIC_SETTINGS_FIELDS(DragSettings, enabled, solar_activity, ballistic_coefficient_kg_m2, dispersion, seed)
SKYFABRIC_SETTINGS_FIELDS(StationKeepingSettings, enabled, tolerance_m)
SKYFABRIC_SETTINGS_FIELDS(Geodetic, latitude_rad, longitude_rad, altitude_m)
SKYFABRIC_SETTINGS_FIELDS(CloudClimate, cloud_free_fraction, mean_cloudy_spell_s)
SKYFABRIC_SETTINGS_FIELDS(SolarParticleEvent, start_s, duration_s, flux_factor)
SKYFABRIC_SETTINGS_FIELDS(ShieldingTable, thickness_mm_al, dose_rad_per_yr)
SKYFABRIC_SETTINGS_FIELDS(EnvironmentParameters, epoch_julian_date_days, saa_latitude_deg, saa_longitude_deg,
                          saa_reference_year, saa_longitude_drift_deg_per_yr, saa_latitude_drift_deg_per_yr,
                          saa_sigma_latitude_deg, saa_sigma_longitude_deg, saa_flag_threshold, reference_altitude_m,
                          trapped_scale_height_m, dipole_pole_latitude_deg, dipole_pole_longitude_deg,
                          stormer_constant_gv, gcr_polar_dose_rate_rad_per_yr, gcr_rigidity_scale_gv,
                          gcr_spectral_index, solar_particle_events, spe_rigidity_scale_gv, solar_protons,
                          shielding_mm_al, shielding_table, reference_shielding_mm_al, target_dose_rad_per_yr,
                          reference_orbit_altitude_m, reference_orbit_inclination_rad,
                          calibration_samples_along_orbit, calibration_node_longitudes)
SKYFABRIC_SETTINGS_FIELDS(SolarArray, area_m2, efficiency, degradation_per_year, years_in_orbit, attitude)
SKYFABRIC_SETTINGS_FIELDS(Battery, capacity_wh, charge_efficiency, discharge_efficiency, min_state_of_charge,
                          initial_state_of_charge)
SKYFABRIC_SETTINGS_FIELDS(Loads, accelerators, accelerator_w, host_w, terminal_w, housekeeping_w)
SKYFABRIC_SETTINGS_FIELDS(Radiator, area_m2, emissivity, sink_temperature_k, heat_capacity_j_k, max_temperature_k,
                          initial_temperature_k)
SKYFABRIC_SETTINGS_FIELDS(PowerParameters, array, battery, loads, radiator)
}  // namespace skyfabric::physics

namespace skyfabric::links {
SKYFABRIC_SETTINGS_FIELDS(TerminalParameters, terminals_per_satellite, max_range_m, reacquisition_time_s)
SKYFABRIC_SETTINGS_FIELDS(DwdmPlan, grid_spacing_hz, band_hz, transceivers_fitted)
SKYFABRIC_SETTINGS_FIELDS(TransceiverSpec, name, rate_bps, sensitivity_dbm, required_osnr_db, overload_dbm)
SKYFABRIC_SETTINGS_FIELDS(OpticalTerminalParameters, aperture_m, tx_power_w, wavelength_m, aperture_efficiency,
                          truncation_ratio, other_losses_db, pointing_static_error_rad, pointing_jitter_rad,
                          fade_threshold_db, amplifier_noise_figure_db, required_margin_db, spatial_channels_built,
                          adaptive_channel_count, dwdm, transceiver)
SKYFABRIC_SETTINGS_FIELDS(TopologyParameters, policy, terminals, neighbours_k, candidates_per_satellite,
                          hysteresis_fraction, initial_links_acquired, optics)
SKYFABRIC_SETTINGS_FIELDS(GatewayParameters, gateways_per_cluster, topology, optics, grazing_altitude_m, failover_s)
SKYFABRIC_SETTINGS_FIELDS(OpticalGroundLinkParameters, ground_aperture_m, space_aperture_m, tx_power_w, wavelength_m,
                          aperture_efficiency, zenith_attenuation_db, scintillation_margin_db, other_losses_db,
                          photons_per_bit, max_rate_bps, min_rate_bps)
}  // namespace skyfabric::links

namespace skyfabric::workloads {
SKYFABRIC_SETTINGS_FIELDS(Accelerator, name, peak_flops, hbm_bytes, hbm_bandwidth_Bps)
SKYFABRIC_SETTINGS_FIELDS(MixtureOfExperts, layers, expert_parallel, experts_per_token, hidden_size,
                          bytes_per_activation, expert_parameters, load_imbalance)
SKYFABRIC_SETTINGS_FIELDS(TrainingJob, parameters, active_parameters, tokens_per_step, bytes_per_gradient_element,
                          data_parallel, tensor_parallel, mfu, gradient_buckets, backward_fraction, sync, local_steps,
                          outer_bytes_per_element, moe)
SKYFABRIC_SETTINGS_FIELDS(ScheduleOptions, hierarchical_group_size, tree_chunks, dims)
SKYFABRIC_SETTINGS_FIELDS(StragglerModel, probability, slowdown, seed)
SKYFABRIC_SETTINGS_FIELDS(Transfer, source_rank, target_rank, bytes)
SKYFABRIC_SETTINGS_FIELDS(Phase, first_transfer, transfer_count, pattern, repeat, rotation_per_source, rotation_shift,
                          rotation_bytes)
SKYFABRIC_SETTINGS_FIELDS(Schedule, op, algorithm, ranks, bytes, transfers, phases)
SKYFABRIC_SETTINGS_FIELDS(ServingModel, parameters, active_parameters, bytes_per_parameter, layers, kv_heads, head_dim,
                          bytes_per_element, attention, full_attention_layers, kv_lora_rank, rope_dim)
SKYFABRIC_SETTINGS_FIELDS(LengthDistribution, kind, mean_tokens, sigma)
SKYFABRIC_SETTINGS_FIELDS(RequestStream, rate_per_s, prompt, output, cached_prefix_fraction, seed)
SKYFABRIC_SETTINGS_FIELDS(EngineGroup, instances, satellites_per_instance, accelerator)
SKYFABRIC_SETTINGS_FIELDS(ServingEngines, prefill, decode, chips_per_satellite, mfu, max_batch, max_tokens,
                          dedicated_prefill_accelerator)
SKYFABRIC_SETTINGS_FIELDS(SatelliteOutage, start_s, end_s, satellite)
SKYFABRIC_SETTINGS_FIELDS(ComputeThrottle, start_s, step_s, sample_count, satellite_count, share)
SKYFABRIC_SETTINGS_FIELDS(SharedTraining, collective, rank_nodes, compute_s)
SKYFABRIC_SETTINGS_FIELDS(GroundStation, name, site, min_elevation_rad, kind, optical, clouds, ka_band_rate_bps,
                          users_share)
SKYFABRIC_SETTINGS_FIELDS(GroundDatacentre, name, site, accelerator, accelerators, station, fibre_m, fibre_rate_bps)
SKYFABRIC_SETTINGS_FIELDS(GroundSegmentConfig, stations, datacentres, bytes_per_token, backhaul_speed_m_s, segment_s,
                          epoch_julian_date_days, seed)
SKYFABRIC_SETTINGS_FIELDS(GroundPlacement, prefill_datacentre, decode_datacentre)
SKYFABRIC_SETTINGS_FIELDS(DeviceCrossSections, name, sdc_rad_per_event, hbm_uecc_rad_per_event,
                          chip_crash_rad_per_event, host_cpu_rad_per_event, host_ram_rad_per_event)
SKYFABRIC_SETTINGS_FIELDS(OperationalCause, name, rate_per_gpu_s, effect, manual_s)
SKYFABRIC_SETTINGS_FIELDS(OperationalFaults, causes, gpus_per_rank, hot_ranks, hot_share, retry_success_probability,
                          retry_attempts, retry_interval_s, manual_recovery_s)
SKYFABRIC_SETTINGS_FIELDS(FaultModel, device, chips_per_satellite, hosts_per_satellite, link_outage_rate_per_s,
                          gateway_outage_rate_per_s, gateway_satellites, sdc_detection_probability, rate_scale,
                          operational)
SKYFABRIC_SETTINGS_FIELDS(RecoveryConfig, checkpoint_interval_s, mtbf_s, checkpoint_cost_s, restart_s, reboot_s,
                          spare_satellites, spare_group_size, on_rank_loss, link_outage_s, gateway_failover_s,
                          rank_multiple, checkpoint_mode, snapshot_bytes_per_rank, snapshot_bandwidth_Bps)
SKYFABRIC_SETTINGS_FIELDS(FabricSpec, kind, p, x, y, leaf, uplink_bps, bandwidth_bps, latency_s, csv_text, csv_name,
                          file_path)

SKYFABRIC_SETTINGS_FIELDS(FlowOptions, routing, paths_per_transfer, split, per_message_overhead_s, backend)
SKYFABRIC_SETTINGS_FIELDS(TrainingOptions, flow, schedule, all_reduce, placement, seed, rank_nodes, rank_groups,
                          expert_group_ranks, replan_on_topology_change, start_s, end_s, max_steps, stragglers)

// A request trace by its length and the SHA-256 of its rows' fields as bytes, in order: a trace of a
// million rows would otherwise make a JSON of hundreds of MB for one hash.
static nlohmann::json trace_digest(const std::vector<Request>& trace) {
    static_assert(scenario::fields::field_count<Request>() == 5, "Request: digest every field");
    std::string bytes;
    bytes.reserve(trace.size() * 5 * sizeof(double));
    const auto add = [&](const auto& value) { bytes.append(reinterpret_cast<const char*>(&value), sizeof value); };
    for (const auto& r : trace) {
        add(r.id);
        add(r.arrival_s);
        add(r.prompt_tokens);
        add(r.cached_tokens);
        add(r.output_tokens);
    }
    return {{"requests", trace.size()}, {"sha256", output::sha256_hex(bytes)}};
}
[[maybe_unused]] static void to_json(nlohmann::json& j, const ServingConfig& c) {
    static_assert(scenario::fields::field_count<ServingConfig>() == 19, "ServingConfig: list every setting");
    j = {{"model", c.model}, {"requests", c.requests}, {"trace", trace_digest(c.trace)}, {"engines", c.engines},
         {"ttft_slo_s", c.ttft_slo_s}, {"tpot_slo_s", c.tpot_slo_s}, {"routing", c.routing},
         {"threshold_tokens", c.threshold_tokens}, {"dedicated_prefill_instances", c.dedicated_prefill_instances},
         {"nodes", c.nodes}, {"network_routing", c.network_routing}, {"start_s", c.start_s}, {"end_s", c.end_s},
         {"outages", c.outages}, {"throttle", c.throttle}, {"cluster_of", c.cluster_of},
         {"egress_bin_s", c.egress_bin_s}, {"training", c.training}, {"max_queued_requests", c.max_queued_requests}};
}
}  // namespace skyfabric::workloads

namespace skyfabric::scenario {
SKYFABRIC_SETTINGS_FIELDS(OrbitConfig, semi_major_axis_m, eccentricity, sun_synchronous, inclination_rad, ltan_h,
                          raan_rad, arg_perigee_rad, arg_latitude_rad, epoch, epoch_text)
SKYFABRIC_SETTINGS_FIELDS(FormationConfig, layout, radius_m, radial_pitch_m, along_track_pitch_m, pitch_m,
                          out_of_plane_amplitude_m, relative_orbits, explicit_states)
SKYFABRIC_SETTINGS_FIELDS(DynamicsConfig, model, j2, drag, relative_tolerance, absolute_tolerance, compare_to_nonlinear)
SKYFABRIC_SETTINGS_FIELDS(MetricsConfig, min_separation_alarm_m, neighbour_count, reference_satellite)
SKYFABRIC_SETTINGS_FIELDS(OutputConfig, hdf5, eci, vtk, vtk_every, vtk_frame, compression_level, trace,
                          trace_max_events, trace_window_start_s, trace_window_end_s)
SKYFABRIC_SETTINGS_FIELDS(LinksConfig, enabled, topology)
SKYFABRIC_SETTINGS_FIELDS(WorkloadConfig, enabled, accelerator, job, options, backend, power_policy, on_rank_loss,
                          experts_across_clusters, clusters)
// What was written and what resolve derives from it: only the derived value is hashed (arrivals_seed is
// in serving.requests.seed, the written causes scaled in operational.causes).
[[maybe_unused]] static void to_json(nlohmann::json& j, const InferenceConfig& c) {
    static_assert(fields::field_count<InferenceConfig>() == 8 + 1, "InferenceConfig: list every setting");
    j = {{"enabled", c.enabled}, {"accelerator", c.accelerator}, {"serving", c.serving}, {"trace_file", c.trace_file},
         {"compare_routing", c.compare_routing}, {"prefill_site", c.prefill_site}, {"decode_site", c.decode_site},
         {"power_policy", c.power_policy}};
}
SKYFABRIC_SETTINGS_FIELDS(GroundConfig, enabled, segment, placement)
SKYFABRIC_SETTINGS_FIELDS(PowerConfig, enabled, parameters)
SKYFABRIC_SETTINGS_FIELDS(RadiationConfig, enabled, environment, faults, recovery, trials, threads)
[[maybe_unused]] static void to_json(nlohmann::json& j, const FaultsConfig& c) {
    static_assert(fields::field_count<FaultsConfig>() == 7 + 1, "FaultsConfig: list every setting");
    j = {{"enabled", c.enabled}, {"preset", c.preset}, {"operational", c.operational}, {"rate_scale", c.rate_scale},
         {"recovery", c.recovery}, {"trials", c.trials}, {"threads", c.threads}};
}
SKYFABRIC_SETTINGS_FIELDS(ClusterConfig, along_track_m, raan_offset_rad, radius_m, accelerator)
SKYFABRIC_SETTINGS_FIELDS(ConstellationConfig, enabled, clusters, gateways, algorithms, routing_model)

nlohmann::json settings_json(const Scenario& s) {
    // source_file, yaml_text and threads are no settings (settings_hash.hpp); duration_orbits is in duration_s.
    static_assert(fields::field_count<Scenario>() == 19 + 4, "Scenario: list every setting");
    return {{"name", s.name}, {"seed", s.seed}, {"duration_s", s.duration_s}, {"output_step_s", s.output_step_s},
            {"orbit", s.orbit}, {"formation", s.formation}, {"dynamics", s.dynamics},
            {"station_keeping", s.station_keeping}, {"metrics", s.metrics}, {"links", s.links},
            {"workload", s.workload}, {"inference", s.inference}, {"ground", s.ground}, {"radiation", s.radiation},
            {"faults", s.faults}, {"power", s.power}, {"fabric", s.fabric}, {"constellation", s.constellation},
            {"output", s.output}};
}

std::string settings_sha256(const Scenario& scenario) { return output::sha256_hex(settings_json(scenario).dump()); }

}  // namespace skyfabric::scenario
