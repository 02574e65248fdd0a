// The summary table `run` prints, read from summary.json's own object (so a table and the file
// can never disagree).
#include "output/summary.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/workloads/cluster_training.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace skyfabric::output {

std::string summary_table(const nlohmann::json& j) {
    std::string out;
    char line[256];
    auto row = [&](const char* label, const std::string& value) {
        std::snprintf(line, sizeof line, "  %-34s %s\n", label, value.c_str());
        out += line;
    };
    auto num = [](const nlohmann::json& v, const char* fmt) {
        if (v.is_null()) return std::string("n/a");
        char b[64];
        std::snprintf(b, sizeof b, fmt, v.get<double>());
        return std::string(b);
    };
    // Operational faults' causes by their share of the interruptions, the largest four.
    auto top_causes = [&num](const nlohmann::json& causes) {
        std::vector<std::pair<double, std::string>> shares;
        for (const auto& [name, c] : causes.items())
            if (c["share"].get<double>() > 0.0) shares.emplace_back(c["share"].get<double>(), name);
        std::sort(shares.rbegin(), shares.rend());
        std::string top;
        for (std::size_t k = 0; k < std::min<std::size_t>(4, shares.size()); ++k)
            top += (top.empty() ? "" : ", ") + shares[k].second + " " + num(nlohmann::json(100.0 * shares[k].first), "%.1f %%");
        return top.empty() ? std::string("none interrupted") : top;
    };
    const std::string commit = j.value("git_commit", std::string("unknown")).substr(0, 12);
    out += "skyfabric " + j["skyfabric_version"].get<std::string>() + " (" + commit + (j.value("git_dirty", false) ? ", dirty" : "") +
           ") — " + j["scenario"].get<std::string>() + "\n";
    row("status", j["complete"].get<bool>() ? "complete" : "INCOMPLETE: " + j.value("stop_reason", std::string()));
    row(j.contains("fabric") ? "ranks" : "satellites", std::to_string(j["satellites"].get<std::size_t>()));
    if (!j.contains("fabric")) row("dynamics model", j["dynamics_model"].get<std::string>());
    row("simulated", num(j["simulated_s"], "%.1f s") +
                         (j.contains("fabric") ? "" : " in " + std::to_string(j["samples"].get<std::size_t>()) + " samples"));
    if (j.contains("fabric")) row("synthetic fabric", j["fabric"].get<std::string>());
    if (j.contains("formation")) {
    const auto& f = j["formation"];
    row("nearest-neighbour distance", num(f["nearest_neighbour_min_m"], "%.1f") + " – " + num(f["nearest_neighbour_max_m"], "%.1f m"));
    // The k nearest at each instant (neighbours.png plots the k nearest on average, a wider range).
    row(("satellite " + std::to_string(f["reference_satellite"].get<int>()) + "'s nearest (each t)").c_str(),
        num(f["reference_neighbours_min_m"], "%.1f") + " – " + num(f["reference_neighbours_max_m"], "%.1f m"));
    row("minimum separation", num(f["min_separation_m"], "%.2f m") + " at t = " + num(f["min_separation_time_s"], "%.0f s") +
                                  " (satellites " + std::to_string(f["min_separation_pair"][0].get<int>()) + ", " +
                                  std::to_string(f["min_separation_pair"][1].get<int>()) + ")");
    if (f["samples_below_alarm"].get<std::size_t>() > 0) {
        row("SEPARATION ALARM", std::to_string(f["samples_below_alarm"].get<std::size_t>()) + " samples below " +
                                    num(f["min_separation_alarm_m"], "%.1f m"));
    }
    // A formation's extent in its chief's LVLH frame; on a constellation the figure is cluster 0's
    // frame over every cluster (the distances between clusters), no formation's envelope: left out.
    if (!j.contains("constellation"))
        row("envelope |x|,|y|,|z| max", num(f["envelope_max_m"][0], "%.1f") + ", " + num(f["envelope_max_m"][1], "%.1f") + ", " +
                                            num(f["envelope_max_m"][2], "%.1f m"));
    }
    if (j.contains("sun")) {
        const auto& u = j["sun"];
        row("beta angle (min / max)", num(u["beta_angle_min_deg"], "%.1f") + " / " + num(u["beta_angle_max_deg"], "%.1f deg"));
        row("time in Earth's shadow", num(nlohmann::json(100.0 * u["shadow_fraction_mean"].get<double>()), "%.3g %%") +
                                          " of this run");
    }
    if (j.contains("power")) {
        const auto& p = j["power"];
        row("battery state of charge (min)", num(p["state_of_charge_min"], "%.3f"));
        row("energy per satellite (array / used)", num(p["energy_generated_kwh_per_satellite"], "%.3g") + " / " +
                                                       num(p["energy_used_kwh_per_satellite"], "%.3g kWh"));
        row("compute lost to power", num(nlohmann::json(100.0 * p["compute_lost_fraction"].get<double>()), "%.3g %%") +
                                         " of the run (" + p["policy"].get<std::string>() + ")");
        row("thermal node (max)", num(nlohmann::json(p["temperature_max_k"].get<double>() - 273.15), "%.1f C"));
    }
    if (j.contains("dynamics")) row("error vs nonlinear (max)", num(j["dynamics"]["model_error_max_m"], "%.3g m"));
    if (j.contains("station_keeping") && j["station_keeping"]["enabled"].get<bool>()) {
        const auto& k = j["station_keeping"];
        row("station-keeping delta-v (total)", num(k["delta_v_total_m_s"], "%.4g m/s"));
        const auto field = [&](const char* key) { return k.contains(key) ? k[key] : nlohmann::json(nullptr); };
        row("  acquisition (one-off, per sat.)", num(field("acquisition_delta_v_per_satellite_m_s"), "%.4g m/s"));
        const std::string window =
            num(nlohmann::json(k.value("steady_window_s", 0.0) / physics::seconds_per_day), "%.3g d");
        row("  steady, per satellite per year",
            k["delta_v_per_satellite_per_year_m_s"].is_null()
                ? "n/a (window " + window + " < 1 d)"
                : num(k["delta_v_per_satellite_per_year_m_s"], "%.4g m/s") + " (over " + window + ", excl. acquisition)");
        if (k.contains("differential_drag_minimum_per_satellite_per_year_m_s")) {
            row("  differential-drag minimum", k["differential_drag_minimum_per_satellite_per_year_m_s"].is_null()
                                                   ? std::string("n/a")
                                                   : num(k["differential_drag_minimum_per_satellite_per_year_m_s"],
                                                         "%.4g m/s per satellite per year"));
        }
        row("  max deviation from reference", num(field("deviation_max_m"), "%.3g m"));
    } else if (j.contains("station_keeping") && j["station_keeping"].contains("differential_drag_minimum_per_satellite_per_year_m_s") &&
               !j["station_keeping"]["differential_drag_minimum_per_satellite_per_year_m_s"].is_null()) {
        row("differential-drag minimum delta-v", num(j["station_keeping"]["differential_drag_minimum_per_satellite_per_year_m_s"],
                                                     "%.4g m/s per satellite per year"));
    }
    if (j.contains("links")) {
        const auto& l = j["links"];
        auto tbps = [&](const char* key) { return num(nlohmann::json(l[key].get<double>() / 1e12), "%.2f"); };
        row("links (topology)", l["topology"].get<std::string>() + ", " + num(l["links_per_satellite_mean"], "%.2f") +
                                    " per satellite (max " + std::to_string(l["links_per_satellite_max"].get<int>()) + ")");
        row("capacity per link (min/mean/max)", tbps("capacity_min_bps") + " / " + tbps("capacity_mean_bps") + " / " +
                                                    tbps("capacity_max_bps") + " Tbit/s");
        // A minimum of 0 is a link re-acquiring (pointed, carrying nothing yet): say how often, and
        // the minimum over the links that carried traffic.
        if (l.value("link_samples_acquiring", std::int64_t{0}) > 0)
            row("  capacity 0: re-acquiring", std::to_string(l["link_samples_acquiring"].get<std::int64_t>()) + " of " +
                                               std::to_string(l["link_samples"].get<std::int64_t>()) +
                                               " link-samples (pointed, not yet carrying); min over the others " +
                                               tbps("capacity_min_carrying_bps") + " Tbit/s");
        row("bisection capacity (min/mean)", tbps("bisection_capacity_min_bps") + " / " + tbps("bisection_capacity_mean_bps") + " Tbit/s");
        row("connected", l["components_max"].get<int>() == 1 ? std::string("at every sample")
                                                               : "NO: up to " + std::to_string(l["components_max"].get<int>()) + " components");
        row("link events", std::to_string(l["events"].get<std::size_t>()));
    }
    if (j.contains("constellation")) {
        const auto& c = j["constellation"];
        row("constellation", std::to_string(c["clusters"].get<int>()) + " clusters, " + c["aggregation_topology"].get<std::string>() +
                                 " gateway layer (" + std::to_string(c["gateways_per_cluster"].get<int>()) + " gateways each), " +
                                 c["routing"].get<std::string>() + " routing");
        row("gateway links (min / max)", std::to_string(c["gateway_links_min"].get<int>()) + " / " +
                                             std::to_string(c["gateway_links_max"].get<int>()) + ", Earth-blocked at most " +
                                             std::to_string(c["gateway_blocked_max"].get<int>()));
        row("gateway capacity (min / mean)", num(nlohmann::json(c["gateway_capacity_min_bps"].get<double>() / 1e12), "%.2f") + " / " +
                                                 num(nlohmann::json(c["gateway_capacity_mean_bps"].get<double>() / 1e12), "%.2f Tbit/s"));
        row("oversubscription (worst cluster)", "min " + num(c["oversubscription_min"], "%.2f") + ", mean " +
                                                    num(c["oversubscription_mean"], "%.2f") + ", max " +
                                                    num(c["oversubscription_max"], "%.2f") + " (cluster bisection : its gateway links)");
        if (!c["algorithms"].empty()) {
            std::snprintf(line, sizeof line, "  %-14s %10s %12s %6s %6s %11s %11s %9s\n", "algorithm", "step (s)", "tokens/s",
                          "MFU", "idle", "gateway TB", "intra TB", "outer (s)");
            out += line;
            for (const auto algorithm : workloads::cluster_algorithms) {
                const std::string name(workloads::to_string(algorithm));
                if (!c["algorithms"].contains(name)) continue;
                const auto& a = c["algorithms"][name];
                std::snprintf(line, sizeof line, "  %-14s %10.3f %12.4g %6.3f %6.3f %11.4g %11.4g %9s\n", name.c_str(),
                              a["step_time_mean_s"].get<double>(), a["tokens_per_s"].get<double>(), a["mfu"].get<double>(),
                              a["idle_fraction"].get<double>(), a["gateway_bytes"].get<double>() / 1e12,
                              a["intra_cluster_bytes"].get<double>() / 1e12,
                              a["outer_rounds"].get<std::int64_t>() > 0 ? num(a["outer_sync_mean_s"], "%.3f").c_str() : "-");
                out += line;
            }
            // Effective tokens/s: a model (published loss gaps), kept apart from the measured rows above.
            out += "  effective tokens/s: raw / tokens needed for data-parallel's loss (a model from published loss gaps, docs/constellations.md)\n";
            for (const auto algorithm : workloads::cluster_algorithms) {
                const std::string name(workloads::to_string(algorithm));
                if (!c["algorithms"].contains(name)) continue;
                const auto& a = c["algorithms"][name];
                std::string figure;
                if (a["effective_tokens_per_s"].is_null()) {
                    figure = "not covered: " + a["convergence_not_covered"].get<std::string>();
                } else {
                    const std::string bound = a["effective_bound"].get<std::string>();
                    figure = (bound == "at_most" ? "<= " : bound == "at_least" ? ">= " : "") + num(a["effective_tokens_per_s"], "%.4g") +
                             " (x" + num(a["token_multiplier"], "%.3f") + "; " + a["convergence_source"].get<std::string>() + ")";
                }
                out += "    " + name + std::string(name.size() < 13 ? 13 - name.size() : 1, ' ') + figure + "\n";
            }
            // "ring, diloco 12 s": the algorithms listed whose `key` holds (true, or a time above 0).
            const auto listed = [&](const char* key, bool with_value) {
                std::string names;
                for (const auto algorithm : workloads::cluster_algorithms) {
                    const std::string name(workloads::to_string(algorithm));
                    if (!c["algorithms"].contains(name)) continue;
                    const auto& a = c["algorithms"][name];
                    const bool holds = with_value ? a.value(key, 0.0) > 0.0 : a.value(key, false);
                    if (holds) names += (names.empty() ? "" : ", ") + name + (with_value ? " " + num(a[key], "%.4g s") : "");
                }
                return names;
            };
            if (const auto no_path = listed("truncated", false); !no_path.empty())
                row("stopped: no path", no_path + " (a collective or outer sync found no path; steps after it not trained)");
            if (const auto throttled = listed("compute_throttled_s", true); !throttled.empty())
                row("time lost to throttling", throttled + " (compute beyond full speed; diloco, noloco: per replica)");
            if (const auto straggled = listed("straggler_s", true); !straggled.empty())
                row("time lost to stragglers", straggled + " (diloco, noloco: per replica)");
            if (const auto moe = listed("all_to_all_per_step_s", true); !moe.empty())
                row("MoE all-to-all per step", moe + " (expert groups " + c["expert_placement"].get<std::string>() + ")");
            for (const auto algorithm : workloads::cluster_algorithms) {
                const std::string name(workloads::to_string(algorithm));
                if (!c["algorithms"].contains(name)) continue;
                const double outside = c["algorithms"][name].value("bytes_outside_own_clusters", 0.0);
                if (outside > 0.0)
                    row(("  " + name + ": detours").c_str(),
                        num(nlohmann::json(outside / 1e12), "%.4g TB") +
                            " crossed other clusters' links; their contention there is not modelled");
            }
        }
    }
    if (j.contains("workload")) {
        const auto& w = j["workload"];
        row("training", std::to_string(w["steps"].get<std::int64_t>()) + " steps, " + w["all_reduce"].get<std::string>() +
                            " all-reduce over " + std::to_string(w["data_parallel"].get<int>()) + " ranks");
        row("step time (median / p99)", num(w["step_time_median_s"], "%.3f") + " / " + num(w["step_time_p99_s"], "%.3f s") +
                                            " (compute " + num(w["compute_per_step_s"], "%.3f s") + ")");
        if (w["all_to_all_per_step_s"].get<double>() > 0.0) {
            row("step breakdown (mean)", "compute " + num(w["compute_per_step_s"], "%.3f s") + ", MoE all-to-all " +
                                            num(w["all_to_all_per_step_s"], "%.3f s") + ", exposed all-reduce " +
                                            num(w["exposed_all_reduce_per_step_s"], "%.3f s"));
        }
        row("throughput", num(w["tokens_per_s"], "%.4g tokens/s") + ", MFU " + num(w["mfu"], "%.3f"));
        row("bus bandwidth (mean / bound)", num(nlohmann::json(w["bus_bw_mean_B_s"].get<double>() / 1e9), "%.1f") + " / " +
                                                num(nlohmann::json(w["bus_bw_bound_B_s"].get<double>() / 1e9), "%.1f GB/s"));
        row("time lost to topology changes", num(w["time_lost_to_topology_s"], "%.3g s") + ", stalled " +
                                                 num(w["stalled_s"], "%.3g s"));
        if (w.value("straggler_steps", std::int64_t{0}) > 0)
            row("time lost to stragglers", num(w["straggler_s"], "%.4g s") + " over " +
                                               std::to_string(w["straggler_steps"].get<std::int64_t>()) + " of " +
                                               std::to_string(w["steps"].get<std::int64_t>()) + " steps");
    }
    if (j.contains("inference")) {
        const auto& in = j["inference"];
        const std::string arrivals = in["rate_per_s"].is_null() ? "trace " + in["arrivals"].get<std::string>()
                                                                : num(in["rate_per_s"], "%.4g requests/s (Poisson)");
        row("serving", std::to_string(in["prefill_instances"].get<int>()) + " prefill and " +
                           std::to_string(in["decode_instances"].get<int>()) + " decode instances, " + arrivals);
        row("KV cache", num(in["kv_bytes_per_token"], "%.6g B/token") + " (" + in["attention"].get<std::string>() + "), " +
                            std::to_string(in["kv_capacity_tokens_per_decode_instance"].get<std::int64_t>()) +
                            " tokens per decode instance");
        // One column per routing, side by side.
        std::vector<std::string> names;
        for (const auto& [name, r] : in["routings"].items()) names.push_back(name);
        std::sort(names.begin(), names.end());  // local, prfaas
        const auto columns = [&](const char* label, const auto& cell) {
            std::string value;
            for (const auto& name : names) {
                // Padded to 30 characters, not bytes ("±" is two).
                std::string text = cell(in["routings"][name]);
                const auto characters = std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; });
                text.append(static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, 30 - characters)) + 1, ' ');
                value += text;
            }
            row(label, value);
        };
        const auto p3 = [&](const nlohmann::json& p, double scale, const char* unit) {
            // No request reached it (a time of 0 is not one the model gives): say so, not "0 / 0 / 0".
            if (!(p["p99"].get<double>() > 0.0)) return std::string("none (no request reached it)");
            char b[96];
            std::snprintf(b, sizeof b, "%.3g / %.3g / %.3g %s", p["p50"].get<double>() * scale, p["p90"].get<double>() * scale,
                          p["p99"].get<double>() * scale, unit);
            return std::string(b);
        };
        columns("routing", [&](const nlohmann::json& r) { return std::string(r["name"].get<std::string>()); });
        columns("requests (done/arrived)", [&](const nlohmann::json& r) {
            return std::to_string(r["completed"].get<std::int64_t>()) + " / " + std::to_string(r["arrived"].get<std::int64_t>());
        });
        columns("throughput (requests/s)", [&](const nlohmann::json& r) { return num(r["requests_per_s"], "%.4g"); });
        columns("throughput (output tokens/s)", [&](const nlohmann::json& r) { return num(r["output_tokens_per_s"], "%.4g"); });
        // Each figure's 95 % interval (sectioning, docs/inference.md "Intervals") on the row below it: ± the
        // half-width, "-" where the run cannot give one (older summaries have none).
        const auto half = [&](const nlohmann::json& interval, double scale) {
            if (!interval.is_array()) return std::string("-");
            char b[32];
            std::snprintf(b, sizeof b, "±%.2g", 0.5 * (interval[1].get<double>() - interval[0].get<double>()) * scale);
            return std::string(b);
        };
        const auto p3_interval = [&](const nlohmann::json& r, const char* key, double scale, const char* unit) {
            if (!r.contains(key)) return std::string("-");
            const auto& i = r[key];
            return half(i["p50"], scale) + " / " + half(i["p90"], scale) + " / " + half(i["p99"], scale) + " " + unit;
        };
        columns("TTFT p50 / p90 / p99", [&](const nlohmann::json& r) { return p3(r["ttft_s"], 1.0, "s"); });
        columns("  95 % interval", [&](const nlohmann::json& r) { return p3_interval(r, "ttft_s_ci95", 1.0, "s"); });
        columns("TPOT p50 / p90 / p99", [&](const nlohmann::json& r) { return p3(r["tpot_s"], 1e3, "ms"); });
        columns("  95 % interval", [&](const nlohmann::json& r) { return p3_interval(r, "tpot_s_ci95", 1e3, "ms"); });
        columns("SLO attainment", [&](const nlohmann::json& r) {
            return num(nlohmann::json(100.0 * r["slo_attainment"].get<double>()), "%.1f %%");
        });
        columns("  95 % interval", [&](const nlohmann::json& r) {
            return r.contains("slo_attainment_ci95") && r["slo_attainment_ci95"].is_array() ? half(r["slo_attainment_ci95"], 100.0) + " %"
                                                                                          : std::string("-");
        });
        columns("unservable / unfinished", [&](const nlohmann::json& r) {
            return std::to_string(r["unservable"].get<std::int64_t>()) + " / " + std::to_string(r["unfinished"].get<std::int64_t>());
        });
        // Arrived while max_queued_requests were held: counted, never served (older summaries have no count).
        columns("dropped (queue full)", [&](const nlohmann::json& r) {
            const auto dropped = r.value("dropped", std::int64_t{0});
            return std::to_string(dropped) + (dropped > 0 ? num(nlohmann::json(100.0 * r.value("dropped_fraction", 0.0)), " (%.3g %%)") : "");
        });
        if (j.contains("radiation") || j.contains("power")) {
            columns("lost / requeued", [&](const nlohmann::json& r) {
                return std::to_string(r["lost"].get<std::int64_t>()) + " / " + std::to_string(r["requeued_requests"].get<std::int64_t>());
            });
            columns("instance crashes, down", [&](const nlohmann::json& r) {
                return std::to_string(r["instance_crashes"].get<std::int64_t>()) + ", " +
                       num(nlohmann::json(r["instance_down_s"].get<double>() / 3600.0), "%.3g instance-h");
            });
            columns("throttled", [&](const nlohmann::json& r) {
                return num(nlohmann::json(r["instance_throttled_s"].get<double>() / 3600.0), "%.3g instance-h");
            });
        }
        columns("KV moved", [&](const nlohmann::json& r) {
            return num(nlohmann::json(r["kv_bytes_moved"].get<double>() / 1e12), "%.4g TB");
        });
        columns("KV transfer p50 / p90 / p99", [&](const nlohmann::json& r) { return p3(r["kv_transfer_s"], 1e3, "ms"); });
        if (j.contains("constellation"))
        {
            // Two peaks: the busiest output step's mean (result.h5 /inference/gateway_egress, the figure)
            // and the busiest single interval of the flow solver, often far above it.
            columns("gateway egress mean", [&](const nlohmann::json& r) {
                return num(nlohmann::json(r["gateway_egress_mean_bps"].get<double>() / 1e9), "%.4g Gbit/s");
            });
            columns("  peak, mean of an output step", [&](const nlohmann::json& r) {
                return num(nlohmann::json(r.value("gateway_egress_step_peak_bps", 0.0) / 1e9), "%.4g Gbit/s");
            });
            columns("  peak, one solver interval", [&](const nlohmann::json& r) {
                return num(nlohmann::json(r["gateway_egress_peak_bps"].get<double>() / 1e9), "%.4g Gbit/s");
            });
        }
        if (in["routings"][names.front()].contains("ground")) {  // users on the ground (docs/inference.md "Serving from the ground")
            const auto ground = [&](const char* label, const auto& cell) {
                columns(label, [&](const nlohmann::json& r) { return cell(r["ground"]); });
            };
            ground("ground: requests up / arrived", [&](const nlohmann::json& g) {
                return std::to_string(g["uplinked"].get<std::int64_t>()) + " / " + std::to_string(g["requests"].get<std::int64_t>());
            });
            ground("ground: waited for a link", [&](const nlohmann::json& g) {
                return std::to_string(g["waited"].get<std::int64_t>()) + ", mean " +
                       num(nlohmann::json(g["uplink_wait_mean_s"].get<double>() / 60.0), "%.3g min") + ", max " +
                       num(nlohmann::json(g["uplink_wait_max_s"].get<double>() / 60.0), "%.3g min");
            });
            if (in["routings"][names.front()]["ground"].contains("kv_caches_crossing")) {  // a role on a ground data centre
                ground("ground: KV waited for a contact", [&](const nlohmann::json& g) {
                    return std::to_string(g["kv_waited_for_contact"].get<std::int64_t>()) + " of " +
                           std::to_string(g["kv_caches_crossing"].get<std::int64_t>()) + ", mean " +
                           num(nlohmann::json(g["kv_contact_wait_mean_s"].get<double>() / 60.0), "%.3g min") + ", max " +
                           num(nlohmann::json(g["kv_contact_wait_max_s"].get<double>() / 60.0), "%.3g min");
                });
            }
            ground("ground: TTFT p50 / p90 / p99", [&](const nlohmann::json& g) { return p3(g["ttft_s"], 1.0, "s"); });
            ground("  95 % interval", [&](const nlohmann::json& g) { return p3_interval(g, "ttft_s_ci95", 1.0, "s"); });
            ground("ground: SLO attainment", [&](const nlohmann::json& g) {
                return num(nlohmann::json(100.0 * g["slo_attainment"].get<double>()), "%.1f %%");
            });
            ground("  95 % interval", [&](const nlohmann::json& g) {
                return g.contains("slo_attainment_ci95") && g["slo_attainment_ci95"].is_array() ? half(g["slo_attainment_ci95"], 100.0) + " %"
                                                                                              : std::string("-");
            });
            // Per station: the sky's figures, the same for every routing, then the bytes of the first routing.
            const auto& first = in["routings"][names.front()]["ground"];
            for (const auto& st : first["stations"]) {
                const std::string label = "station " + st["name"].get<std::string>();
                row(label.c_str(),
                    num(st["passes_per_day"], "%.3g passes/day, ") + num(st["contact_min_per_day"], "%.4g contact min/day, ") +
                        num(nlohmann::json(st["bytes_up_per_day"].get<double>() / 1e9), "%.4g GB/day up, ") +
                        num(nlohmann::json(st["bytes_down_per_day"].get<double>() / 1e9), "%.4g GB/day down") +
                        (names.size() > 1 ? " (" + names.front() + ")" : ""));
            }
        }
        row("objectives", "TTFT " + num(in["ttft_slo_s"], "%.3g s") + ", TPOT " +
                              num(nlohmann::json(in["tpot_slo_s"].get<double>() * 1e3), "%.3g ms"));
        if (in.contains("beside_training")) {  // the two jobs on one fabric, and what each cost the other
            const auto& b = in["beside_training"];
            std::string clusters;
            for (const auto& c : b["clusters"]) clusters += (clusters.empty() ? "" : ", ") + std::to_string(c.get<int>());
            row("beside a training job", std::to_string(b["ranks"].get<int>()) + " ranks on clusters " + clusters + ", " +
                                             b["all_reduce"].get<std::string>() + " all-reduce of " +
                                             num(nlohmann::json(b["gradient_bytes"].get<double>() / 1e9), "%.4g GB") + " after " +
                                             num(b["compute_s"], "%.4g s") + " of compute");
            row("training step alone", num(b["alone"]["mean_step_s"], "%.4g s") + " (mean of " +
                                           std::to_string(b["alone"]["steps"].get<std::int64_t>()) + " steps)");
            const auto together = [&](const char* label, const auto& cell) {
                columns(label, [&](const nlohmann::json& r) { return cell(b["routings"][r["name"] == "PrfaaS" ? "prfaas" : "local"]); });
            };
            together("training step beside serving", [&](const nlohmann::json& r) {
                return num(r["training"]["mean_step_s"], "%.4g s") + " (" +
                       num(nlohmann::json(100.0 * r["training_step_slowdown"].get<double>()), "%+.3g %%") + ")";
            });
            together("TTFT p50 / p99 beside training", [&](const nlohmann::json& r) {
                return num(r["serving"]["ttft_s"]["p50"], "%.3g") + " / " + num(r["serving"]["ttft_s"]["p99"], "%.3g s") + " (" +
                       num(r["ttft_p99_increase_s"], "%+.3g s") + ")";
            });
            together("KV transfer p99 beside training", [&](const nlohmann::json& r) {
                return num(nlohmann::json(1e3 * r["serving"]["kv_transfer_s"]["p99"].get<double>()), "%.3g ms") + " (" +
                       num(nlohmann::json(1e3 * r["kv_transfer_p99_increase_s"].get<double>()), "%+.3g ms") + ")";
            });
            together("SLO attainment beside training", [&](const nlohmann::json& r) {
                return num(nlohmann::json(100.0 * r["serving"]["slo_attainment"].get<double>()), "%.1f %%");
            });
        }
    }
    if (j.contains("radiation")) {
        const auto& r = j["radiation"];
        row("annual dose (long-term average)", num(r["annual_dose_rad_per_yr"], "%.3g rad(Si)/yr") + " behind " +
                                                   num(r["shielding_mm_al"], "%.3g mm Al"));
        row("dose this run (mean / max)", num(r["dose_mean_rad"], "%.3g") + " / " + num(r["dose_max_rad"], "%.3g rad(Si)") +
                                              " (" + num(r["dose_rate_mean_rad_per_yr"], "%.3g rad(Si)/yr") + " over this run)");
        std::string expected, drawn;
        for (const auto& [name, count] : r["expected_events_by_kind"].items()) {
            if (name == "link_outage" && count.get<double>() == 0.0) continue;
            expected += (expected.empty() ? "" : ", ") + num(count, "%.3g") + " " + name;
        }
        for (const auto& [name, count] : r["trial0"]["events_by_kind"].items()) {
            if (name == "link_outage" && count.get<std::int64_t>() == 0) continue;
            drawn += (drawn.empty() ? "" : ", ") + std::to_string(count.get<std::int64_t>()) + " " + name;
        }
        row("fault events per trial (expected)", expected);
        row("fault events in trial 0", drawn);
        if (r.contains("operational"))
            row("operational faults beside", r["operational"]["preset"].get<std::string>() + ", interruptions by cause (top): " +
                                                 top_causes(r["operational"]["causes"]));
        row("mean time between interruptions", num(r["mean_time_between_interruptions_s"], "%.4g s") + " this run, " +
                                                   num(r["long_term_mean_time_between_interruptions_s"], "%.4g s") +
                                                   " long-term");
        if (r.contains("goodput")) {
            row("checkpoint interval", num(r["checkpoint_interval_s"], "%.0f s") +
                                           (r["checkpoint_interval_from"] == "scenario" ? " (scenario)"
                                                                                      : " (Daly, long-term interruption rate)"));
            const auto trials = r["trials"].get<std::size_t>();
            // The interval's kind in words: the trials' min and max, or nearest-rank percentiles of them.
            const auto estimate = [&](const char* key, const char* fmt) {
                std::string text = (trials > 1 ? "median " : "") + num(r[key], fmt);
                if (trials == 1) return text + " (one trial: radiation.trials 1)";
                const auto& in = r[std::string(key) + "_interval"];
                return text + " (" + (r["interval"] == "min_max" ? "min–max" : "2.5–97.5 % nearest rank") + " of " +
                       std::to_string(trials) + " trials " + num(in[0], fmt) + " – " + num(in[1], fmt) + ")";
            };
            std::string goodput = estimate("goodput", "%.4f");
            // Where the trials lie is no confidence interval: the mean's (bootstrap) 95 % one beside it.
            if (r.contains("monte_carlo") && r["monte_carlo"]["goodput"].contains("mean_ci95")) {
                const auto& m = r["monte_carlo"]["goodput"];
                goodput += "; mean " + num(m["mean"], "%.4f") + " (95 % CI " + num(m["mean_ci95"][0], "%.4f") + " – " +
                           num(m["mean_ci95"][1], "%.4f") + ")";
            }
            if (r.contains("fault_free_goodput")) goodput += "; fault-free " + num(r["fault_free_goodput"], "%.4f");
            row("goodput", goodput);
            if (r.contains("goodput_vs_fault_free")) row("goodput / fault-free goodput", estimate("goodput_vs_fault_free", "%.4f"));
            if (r.contains("daly_young_constant_rate_goodput")) {
                row("  Daly/Young model (not a bound)", num(r["daly_young_constant_rate_goodput"], "%.4f") +
                                                        " (this run's mean interruption rate held constant; checkpoints + "
                                                        "restarts only: no reboot waits, SDC, fabric)");
            }
            if (r.contains("monte_carlo")) {
                const auto& l = r["monte_carlo"]["lost_s"];
                row("time lost per trial (median)", "faults " + num(l["faults"]["median"], "%.0f s") + ", restarts " +
                                                        num(l["restarts"]["median"], "%.0f s") + ", checkpoints " +
                                                        num(l["checkpoints"]["median"], "%.0f s") + ", fabric " +
                                                        num(l["fabric"]["median"], "%.3g s") + ", shrunk ring " +
                                                        num(l["shrunk_ring"]["median"], "%.3g s"));
                const auto& gained = r["monte_carlo"]["gained_s"]["fabric"];
                if (gained["mean"].get<double>() > 0.0)
                    row("time gained per trial (median)", "fabric " + num(gained["median"], "%.3g s") +
                                                              " (re-formed smaller rings faster than the full one)");
                const auto& m = r["monte_carlo"];
                row("per trial (mean)", num(m["ranks_lost"]["mean"], "%.3g") + " ranks lost (" +
                                            num(m["spare_swaps"]["mean"], "%.3g") + " moved to spares), " +
                                            num(m["links_lost"]["mean"], "%.3g") + " links lost, " +
                                            num(m["damaged_steps"]["mean"], "%.4g") +
                                            " steps on a damaged fabric (rerouted or re-formed ring)");
            }
            const auto& f = r["fabric"];
            row("faults act on the fabric", f["coupled"].get<bool>()
                                                ? std::string("yes, rank loss: ") + r["on_rank_loss"].get<std::string>() +
                                                      ", " + std::to_string(f["keyframes"].get<std::int64_t>()) + " keyframes of " +
                                                      std::to_string(f["topologies"].get<std::int64_t>()) + " topologies, " +
                                                      std::to_string(f["damaged_steps_solved"].get<std::int64_t>()) + " damaged steps solved"
                                                : f["note"].get<std::string>());
        }
    }
    if (j.contains("faults")) {
        const auto& f = j["faults"];
        const auto trials = f["trials"].get<std::size_t>();
        const std::string spread = std::string(f["interval"] == "min_max" ? "min–max" : "2.5–97.5 % nearest rank") + " of " +
                                   std::to_string(trials) + " trials ";
        const auto estimate = [&](const char* key, const char* fmt) {
            const auto& in = f[std::string(key) + "_interval"];
            return (trials > 1 ? "median " : "") + num(f[key], fmt) +
                   (trials > 1 ? " (" + spread + num(in[0], fmt) + " – " + num(in[1], fmt) + ")" : " (one trial: faults.trials 1)");
        };
        row("operational faults", f["preset"].get<std::string>() + " on " + num(f["gpus"], "%.0f") + " accelerators (" +
                                      std::to_string(f["ranks"].get<std::int64_t>()) + " ranks), expected " +
                                      num(f["expected_events_per_day"], "%.4g") + " a day");
        if (f.contains("interruptions_per_day")) {
            row("interruptions per day", estimate("interruptions_per_day", "%.3f") + "; mean " +
                                             num(f["interruptions_per_day_mean"], "%.3f") + " (Poisson 95 % CI " +
                                             num(f["interruptions_per_day_mean_ci95"][0], "%.3f") + " – " +
                                             num(f["interruptions_per_day_mean_ci95"][1], "%.3f") + ")");
        }
        row("checkpoint interval", num(f["checkpoint_interval_s"], "%.0f s") + " (" + f["checkpoint_mode"].get<std::string>() +
                                       ", stall " + num(f["checkpoint_stall_s"], "%.3g s") +
                                       (f["checkpoint_interval_from"] == "scenario" ? ", scenario)" : ", Daly)"));
        row("goodput", estimate("goodput", "%.4f") + "; fault-free " + num(f["fault_free_goodput"], "%.4f"));
        const auto& l = f["lost_s"];
        row("time lost per trial (mean)", "faults " + num(l["faults"], "%.0f s") + ", restarts " + num(l["restarts"], "%.0f s") +
                                              ", checkpoints " + num(l["checkpoints"], "%.0f s"));
        if (f.contains("tokens_per_day")) row("tokens per day", num(f["tokens_per_day"], "%.4g") + " (fault-free " +
                                                                    num(f["tokens_per_day_fault_free"], "%.4g") + ")");
        row("interruptions by cause (top)", top_causes(f["causes"]));
    }
    if (j.contains("radiation") && j["radiation"].contains("constellation")) {
        const auto& rc = j["radiation"]["constellation"];
        // The trials' spread (min–max, or nearest-rank 2.5–97.5 % from 40 trials) is where single
        // trials lie, not a confidence interval: the mean's 95 % confidence interval is its own column.
        const std::string spread = std::string(j["radiation"]["interval"] == "min_max" ? "min–max" : "2.5–97.5 %") + " of " +
                                   std::to_string(rc.begin()->at("trials").get<int>()) + " trials";
        std::snprintf(line, sizeof line, "  %-14s %-30s %-26s %10s %10s  %-40s %8s\n", "faults", "goodput median", "mean (95 % CI)",
                      "fault-free", "tokens/s", "lost s (median): faults/restart/ckpt/fabric/wait", "gw links");
        out += line;
        std::snprintf(line, sizeof line, "  %-14s %s\n", "", ("(" + spread + ")").c_str());
        out += line;
        for (const auto algorithm : workloads::cluster_algorithms) {
            const std::string name(workloads::to_string(algorithm));
            if (!rc.contains(name)) continue;
            const auto& a = rc[name];
            const auto& g = a["goodput"];
            const auto& l = a["lost_s"];
            const std::string goodput = num(g["median"], "%.4f") + " (" + num(g["interval"][0], "%.4f") + "–" + num(g["interval"][1], "%.4f") + ")";
            const std::string mean = num(g["mean"], "%.4f") + " (" + num(g["mean_ci95"][0], "%.4f") + "–" + num(g["mean_ci95"][1], "%.4f") + ")";
            const std::string lost = num(l["faults"]["median"], "%.0f") + "/" + num(l["restarts"]["median"], "%.0f") + "/" +
                                     num(l["checkpoints"]["median"], "%.0f") + "/" + num(l["fabric"]["median"], "%.3g") + "/" +
                                     num(l["waiting_for_replicas"]["median"], "%.0f");
            std::snprintf(line, sizeof line, "  %-14s %-32s %-28s %10.4f %10.4g  %-40s %8s\n", name.c_str(), goodput.c_str(),
                          mean.c_str(), a["fault_free_goodput"].get<double>(), a["tokens_per_s_kept_median"].get<double>(), lost.c_str(),
                          num(a["gateway_links_lost"]["mean"], "%.3g").c_str());
            out += line;
        }
        std::string failover;
        for (const auto algorithm : workloads::cluster_algorithms) {
            const std::string name(workloads::to_string(algorithm));
            if (!rc.contains(name)) continue;
            const auto& a = rc[name];
            failover += (failover.empty() ? "" : ", ") + name + " " + num(a["failover_stall_s"]["mean"], "%.3g s") +
                        (a["bytes_retried"]["mean"].get<double>() > 0.0 ? " / " + num(nlohmann::json(a["bytes_retried"]["mean"].get<double>() / 1e9), "%.3g GB") : "") +
                        (a["outer_sync_p99_s"]["median"].get<double>() > 0.0 ? " (outer sync p99 " + num(a["outer_sync_p99_s"]["median"], "%.3g s") + ")" : "");
        }
        row("  gateway failover (mean)", failover + " stalled / retried per trial, detection after " +
                                             num(j["constellation"]["gateway_failover_s"], "%.3g s"));
        std::string swaps;
        bool swapped = false;
        for (const auto algorithm : workloads::cluster_algorithms) {
            const std::string name(workloads::to_string(algorithm));
            if (!rc.contains(name)) continue;
            const auto& mean = rc[name]["spare_swaps"]["mean"];
            swapped = swapped || mean.get<double>() > 0.0;
            swaps += (swaps.empty() ? "" : ", ") + name + " " + num(mean, "%.3g");
        }
        if (swapped) row("  ranks moved to spares (mean)", swaps + " per trial (each to its own cluster's hot spare)");
        row("  trials, fault model", std::to_string(rc.begin()->at("trials").get<int>()) +
                                         " trials (interval: " + j["radiation"]["interval"].get<std::string>() + "), the same draws for every algorithm, checkpoint interval " +
                                         num(rc.begin()->at("checkpoint_interval_s"), "%.0f s") +
                                         "; gw links: gateway links lost per trial (mean); diloco/noloco: replica plays composed "
                                         "(docs/constellations.md)");
    }
    if (j.contains("radiation") && j["radiation"].contains("constellation_not_played")) {
        std::string names;
        for (const auto& n : j["radiation"]["constellation_not_played"]) names += (names.empty() ? "" : ", ") + n.get<std::string>();
        row("  fault trials not played", names + ": trained no step in the run (a step outlasts it), so no trial has a step to replay");
    }
    row("wall time", num(j.value("wall_s", nlohmann::json(nullptr)), "%.2f s") + " (simulation " +
                         num(j["simulation_wall_s"], "%.2f s") + ", the rest writing the files)");
    return out;
}

}  // namespace skyfabric::output
