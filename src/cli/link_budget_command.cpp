// `skyfabric link-budget`: the optical link budget over distance, as a table, CSV or JSON.
// Defaults are the Suncatcher paper's Eq. 1 values, so the paper's 1.6 µW at
// 5000 km is one command away.
#include "cli/link_budget_command.hpp"
#include "cli/link_budget_ranges.hpp"

#include "scenario/yaml_reader.hpp"

#include <skyfabric/links/budget.hpp>
#include <skyfabric/workloads/input_text.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace skyfabric::cli {
namespace {

CLI::Validator finite_in(const NumberRange& r) {
    return CLI::Validator([r](std::string& text) { return number_error(text, r); }, "in " + range_text(r));
}

struct Options {
    std::vector<double> distance_m;
    std::string distances = "100,200,500,1km,10km,100km,300km,1000km,5000km";
    links::OpticalTerminalParameters p;
    double wavelength_nm = 1550.0;
    double grid_ghz = 100.0;
    double rate_gbps = 0.0;
    std::string transceiver = "400zr";
    double pointing_jitter_urad = 0.0;
    double pointing_error_urad = 0.0;
    std::string format = "table";
};

// One distance's budget in SI units, named as in the CSV header and the JSON rows.
struct Row {
    const char* name;
    double value;
};
std::vector<Row> row_at(const links::LinkBudgetModel& model, const links::OpticalTerminalParameters& p, double d) {
    const auto b = model.at(d);
    const auto f = links::friis_budget(d, p);
    return {{"distance_m", d},
            {"beam_radius_m", b.beam_radius_m},
            {"coupling_db", b.coupling_db},
            {"received_power_w", b.received_power_w},
            {"friis_received_power_w", f.received_power_w},
            {"channel_power_dbm", b.received_power_per_channel_dbm},
            {"channel_power_w", b.received_power_per_channel_uw * 1e-6},
            {"margin_db", b.margin_db},
            {"channels_closing", static_cast<double>(b.channels_closing)},
            {"channels_planned", static_cast<double>(b.channels_planned)},
            {"spatial_modes", b.spatial_modes},
            {"spatial_channels", static_cast<double>(b.spatial_channels)},
            {"capacity_bps", b.capacity_bps},
            {"pointing_loss_db", b.pointing_loss_db},
            {"overload_attenuation_db", b.overload_attenuation_db}};
}

// CSV and JSON: the same figures as the table, SI units, full precision (%.17g round-trips).
void print_machine_readable(const Options& o, const links::LinkBudgetModel& model, const std::vector<double>& distances) {
    const auto& p = o.p;
    if (o.format == "csv") {
        for (std::size_t i = 0; i < distances.size(); ++i) {
            const auto row = row_at(model, p, distances[i]);
            std::string header, line;
            for (const Row& r : row) {
                char value[32];
                std::snprintf(value, sizeof value, "%.17g", r.value);
                header += (header.empty() ? "" : ",") + std::string(r.name);
                line += (line.empty() ? "" : ",") + std::string(value);
            }
            if (i == 0) std::cout << header << "\n";
            std::cout << line << "\n";
        }
        return;
    }
    nlohmann::json j;
    j["parameters"] = {{"aperture_m", p.aperture_m},
                       {"tx_power_w", p.tx_power_w},
                       {"wavelength_m", p.wavelength_m},
                       {"aperture_efficiency", p.aperture_efficiency},
                       {"other_losses_db", p.other_losses_db},
                       {"transceiver", p.transceiver.name},
                       {"transceiver_rate_bps", p.transceiver.rate_bps},
                       {"transceiver_sensitivity_dbm", p.transceiver.sensitivity_dbm},
                       {"transceiver_overload_dbm", p.transceiver.overload_dbm},
                       {"dwdm_grid_hz", p.dwdm.grid_spacing_hz},
                       {"dwdm_channels", links::dwdm_channel_count(p.dwdm)},
                       {"spatial_channels_built", p.spatial_channels_built},
                       {"required_margin_db", p.required_margin_db},
                       {"pointing_jitter_rad", p.pointing_jitter_rad},
                       {"pointing_static_error_rad", p.pointing_static_error_rad},
                       {"full_capacity_reach_m", model.full_capacity_reach_m()},
                       {"far_field_half_angle_rad", model.far_field_half_angle_rad()}};
    j["rows"] = nlohmann::json::array();
    for (double d : distances) {
        nlohmann::json row;
        for (const Row& r : row_at(model, p, d)) row[r.name] = r.value;
        j["rows"].push_back(row);
    }
    std::cout << j.dump(2) << "\n";
}

int run(const Options& o_in) {
    Options o = o_in;
    auto& p = o.p;
    p.wavelength_m = o.wavelength_nm * 1e-9;
    p.dwdm.grid_spacing_hz = o.grid_ghz * 1e9;
    p.pointing_jitter_rad = o.pointing_jitter_urad * 1e-6;
    p.pointing_static_error_rad = o.pointing_error_urad * 1e-6;
    const auto preset = links::transceiver_preset(o.transceiver);
    if (!preset) throw scenario::ScenarioError("--transceiver: expected 400zr or 800zr, got " + workloads::quoted_input(o.transceiver));
    p.transceiver = *preset;
    if (o.rate_gbps > 0.0) p.transceiver.rate_bps = o.rate_gbps * 1e9;

    std::vector<double> distances = o.distance_m;
    if (distances.empty()) {
        std::size_t start = 0;
        while (start <= o.distances.size()) {
            const auto comma = o.distances.find(',', start);
            const auto item = o.distances.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            if (!item.empty()) distances.push_back(parse_distance_m(item));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    if (distances.empty()) throw scenario::ScenarioError("--distances: no distance given");

    const links::LinkBudgetModel model(p);
    if (o.format != "table") {
        print_machine_readable(o, model, distances);
        return 0;
    }
    const auto friis_gain = links::friis_budget(distances.front(), p);
    std::printf("Optical link budget: D = %.3g m, P_T = %.3g W, lambda = %.0f nm, eta = %.2f, losses %.1f dB, "
                "%s (%.0f Gbit/s, %.1f dBm), %d x %.0f GHz DWDM, %d spatial channel(s) built\n",
                p.aperture_m, p.tx_power_w, o.wavelength_nm, p.aperture_efficiency, p.other_losses_db,
                p.transceiver.name.c_str(), p.transceiver.rate_bps / 1e9, p.transceiver.sensitivity_dbm,
                links::dwdm_channel_count(p.dwdm), o.grid_ghz, p.spatial_channels_built);
    std::printf("Far field (Friis, paper Eq. 1): gain %.2f dB each end; full-capacity reach %.1f km\n",
                friis_gain.gain_db, model.full_capacity_reach_m() / 1e3);
    std::printf("Pointing (both ends): clipped-beam far-field 1/e^2 half-angle %.2f urad, jitter %.3g urad rms/axis, "
                "bias %.3g urad; receiver overload %.1f dBm per channel\n\n",
                model.far_field_half_angle_rad() * 1e6, o.pointing_jitter_urad, o.pointing_error_urad,
                p.transceiver.overload_dbm);
    std::printf("%12s %10s %9s %12s %12s %10s %10s %8s %9s %10s %8s %14s %9s %9s\n", "distance_m", "beam_r_m", "coupl_dB",
                "P_rx_uW", "Friis_uW", "P_ch_dBm", "P_ch_uW", "margin", "channels", "modes", "spatial", "capacity_Tbps",
                "point_dB", "atten_dB");
    for (double d : distances) {
        const auto b = model.at(d);
        const auto f = links::friis_budget(d, p);
        std::printf("%12.1f %10.4g %9.2f %12.4g %12.4g %10.2f %10.4g %8.2f %5d/%-3d %10.3g %8d %14.3f %9.3f %9.2f\n", d,
                    b.beam_radius_m, b.coupling_db, b.received_power_w * 1e6, f.received_power_w * 1e6,
                    b.received_power_per_channel_dbm, b.received_power_per_channel_uw, b.margin_db, b.channels_closing,
                    b.channels_planned, b.spatial_modes, b.spatial_channels, b.capacity_bps / 1e12, b.pointing_loss_db,
                    b.overload_attenuation_db);
    }
    std::printf("\nP_rx: total received power of one spatial channel (near/far-field Fresnel model); Friis: paper Eq. 1, "
                "which ignores near-field saturation.\nP_ch: per lit DWDM channel into the transceiver (the amplifier output is "
                "shared by the lit channels; above the overload ceiling a channel is attenuated to it, atten_dB); "
                "capacity is per direction.\npoint_dB: mean pointing loss, both ends (included in P_rx).\n");
    return 0;
}

}  // namespace

std::function<int()> add_link_budget_command(CLI::App& app, CLI::App*& command) {
    auto o = std::make_shared<Options>();
    command = app.add_subcommand("link-budget", "Print the optical link budget over distance (defaults: Suncatcher paper Eq. 1)");
    command->add_option("--distance-m", o->distance_m, "Distance(s) in metres (repeatable)")
        ->check(finite_in(distance_m_range));
    command->add_option("--distances", o->distances, "Comma-separated distances, with m or km, e.g. 100,200,5000km")
        ->capture_default_str();
    command->add_option("--aperture-m", o->p.aperture_m, "Aperture diameter, both ends")->capture_default_str()->check(finite_in(aperture_m_range));
    command->add_option("--power-w", o->p.tx_power_w, "Amplifier output power per spatial channel")->capture_default_str()->check(finite_in(power_w_range));
    command->add_option("--wavelength-nm", o->wavelength_nm, "Wavelength")->capture_default_str()->check(finite_in(wavelength_nm_range));
    command->add_option("--efficiency", o->p.aperture_efficiency, "Aperture efficiency")->capture_default_str()->check(finite_in(efficiency_range));
    command->add_option("--losses-db", o->p.other_losses_db, "Other losses (optics, pointing margin)")->capture_default_str()->check(finite_in(losses_db_range));
    command->add_option("--grid-ghz", o->grid_ghz, "DWDM grid spacing")->capture_default_str()->check(finite_in(grid_ghz_range));
    command->add_option("--channels", o->p.dwdm.transceivers_fitted, "Transceivers fitted (DWDM channels)")->capture_default_str()->check(CLI::Range(1, 1024));
    command->add_option("--transceiver", o->transceiver, "Transceiver preset: 400zr or 800zr")->capture_default_str();
    command->add_option("--rate-gbps", o->rate_gbps, "Override the transceiver line rate")->check(finite_in(rate_gbps_range));
    command->add_option("--spatial-channels", o->p.spatial_channels_built, "Apertures / spatial channels built per terminal")->capture_default_str()->check(CLI::Range(1, 4096));
    command->add_option("--margin-db", o->p.required_margin_db, "Required margin per channel")->capture_default_str()->check(finite_in(margin_db_range));
    command->add_option("--pointing-jitter-urad", o->pointing_jitter_urad, "RMS pointing jitter per axis")->check(finite_in(pointing_urad_range));
    command->add_option("--pointing-error-urad", o->pointing_error_urad, "Static pointing error")->check(finite_in(pointing_urad_range));
    command
        ->add_option("--format", o->format,
                     "table, csv or json (SI units, full precision: distance_m, received_power_w, channel_power_w, "
                     "capacity_bps, ...; json adds the parameters)")
        ->capture_default_str()
        ->check(CLI::IsMember({"table", "csv", "json"}));
    return [o] { return run(*o); };
}

}  // namespace skyfabric::cli
