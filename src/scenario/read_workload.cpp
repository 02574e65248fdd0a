// workload (training or inference) and a synthetic topology: the job, its accelerator and its fabric.
#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

namespace skyfabric::scenario::detail {

namespace {

workloads::LengthDistribution read_lengths(Section s, workloads::LengthDistribution d) {
    d.kind = s.choice("distribution", workloads::length_kind_names, d.kind);
    d.mean_tokens = s.number("mean", 1.0, 1e8, d.mean_tokens, "tokens");
    d.sigma = s.number("sigma", 0.0, 10.0, d.kind == workloads::LengthKind::lognormal ? 1.0 : 0.0);
    if (d.kind == workloads::LengthKind::fixed && d.sigma != 0.0) s.fail("sigma", "applies to distribution: lognormal only");
    s.finish();
    return d;
}

workloads::EngineGroup read_engine_group(Section& s, const workloads::Accelerator& workload) {
    workloads::EngineGroup g;
    g.instances = static_cast<std::int32_t>(s.integer("instances", 1, max_satellites, {}));
    g.satellites_per_instance = static_cast<std::int32_t>(s.integer("satellites_per_instance", 1, max_satellites, g.satellites_per_instance));
    g.accelerator = read_optional_accelerator(s, workload);
    return g;
}

// workload.power_policy: what the compute does when the power section's battery or radiator limits it.
physics::PowerPolicy read_power_policy(Section& s, physics::PowerPolicy fallback) {
    return s.choice("power_policy", physics::power_policy_names, fallback);
}

}  // namespace

// workload.accelerator and its overrides, shared by both kinds of workload, the serving roles
// (engines.prefill / decode / prefill.dedicated), a constellation's clusters and the ground data centres.
workloads::Accelerator read_accelerator(Section& s, workloads::Accelerator base) {
    workloads::Accelerator a = base;
    if (s.has("accelerator")) {
        const std::string name = s.choice("accelerator", {"tpu_v6e", "h200", "h20", "custom"});
        if (name != "custom") a = workloads::accelerator_preset(name);
        else a.name = "custom";
    }
    a.peak_flops = 1e12 * s.number("peak_tflops", 1e-3, 1e6, a.peak_flops / 1e12, "TFLOP/s");
    a.hbm_bytes = 1e9 * s.number("hbm_gb", 0.001, 1e6, a.hbm_bytes / 1e9, "GB");
    a.hbm_bandwidth_Bps = 1e9 * s.number("hbm_bandwidth_gbs", 1e-3, 1e7, a.hbm_bandwidth_Bps / 1e9, "GB/s");
    return a;
}

// A role's (or a cluster's) own accelerator: given when any accelerator key is; its peak_tflops, hbm_gb and
// hbm_bandwidth_gbs alone override `base`.
std::optional<workloads::Accelerator> read_optional_accelerator(Section& s, const workloads::Accelerator& base) {
    if (!s.has("accelerator") && !s.has("peak_tflops") && !s.has("hbm_gb") && !s.has("hbm_bandwidth_gbs")) return std::nullopt;
    return read_accelerator(s, base);
}

// workload.kind: inference (docs/inference.md). `s` is the workload section.
InferenceConfig read_inference(Section s, const std::string& source_name) {
    InferenceConfig c;
    c.enabled = s.boolean("enabled", true);
    c.accelerator = read_accelerator(s);
    Section in = s.section("inference", true);
    auto& v = c.serving;
    {
        Section m = in.section("model", true);
        auto& model = v.model;
        model.parameters = m.number("parameters", 1.0, 1e15, {});
        model.active_parameters = m.number("active_parameters", 0.0, 1e15, model.active_parameters);
        if (model.active_parameters > model.parameters) m.fail("active_parameters", "must not exceed parameters");
        model.bytes_per_parameter = m.number("bytes_per_parameter", 0.125, 16.0, model.bytes_per_parameter, "B");
        model.layers = static_cast<std::int32_t>(m.integer("layers", 1, 100000, {}));
        model.attention = m.choice("attention", workloads::attention_kind_names, workloads::AttentionKind::dense);
        model.bytes_per_element = m.number("bytes_per_element", 0.125, 16.0, model.bytes_per_element, "B");
        if (model.attention == workloads::AttentionKind::mla) {
            model.kv_lora_rank = static_cast<std::int32_t>(m.integer("kv_lora_rank", 1, 1000000, model.kv_lora_rank));
            model.rope_dim = static_cast<std::int32_t>(m.integer("rope_dim", 0, 1000000, model.rope_dim));
        } else {
            model.kv_heads = static_cast<std::int32_t>(m.integer("kv_heads", 1, 100000, {}));
            model.head_dim = static_cast<std::int32_t>(m.integer("head_dim", 1, 100000, {}));
        }
        if (model.attention == workloads::AttentionKind::hybrid) {
            model.full_attention_layers = static_cast<std::int32_t>(m.integer("full_attention_layers", 1, model.layers, {}));
        }
        m.finish();
    }
    {
        Section a = in.section("arrivals", true);
        if (a.has("rate_per_s") == a.has("trace"))
            a.fail(a.has("trace") ? "trace" : "rate_per_s", "give either rate_per_s (Poisson arrivals) or trace (a CSV file), not both");
        if (a.has("seed"))  // absent: the scenario's seed (resolve)
            c.arrivals_seed = static_cast<std::uint64_t>(a.integer("seed", 0, std::numeric_limits<std::int64_t>::max(), {}));
        else
            a.allow("seed");
        // Both alternatives are valid keys here, whichever is given: an unknown key's message lists them.
        a.allow("rate_per_s");
        a.allow("trace");
        if (a.has("rate_per_s")) {
            v.requests.rate_per_s = a.number("rate_per_s", 1e-9, 1e6, {}, "1/s");
        } else {
            std::filesystem::path path = a.text("trace");
            if (path.is_relative()) path = std::filesystem::path(source_name).parent_path() / path;
            std::string text;
            try {
                text = read_input_file(path, max_edge_list_bytes, "request trace");
                v.trace = workloads::parse_request_trace_csv(text, path.string());
            } catch (const ScenarioError& e) {
                a.fail("trace", e.what());
            } catch (const workloads::RequestTraceError& e) {
                a.fail("trace", e.what());
            }
            if (v.trace.empty()) a.fail("trace", path.string() + ": no requests (only a header)");
            c.trace_file = path.string();
        }
        a.finish();
    }
    v.requests.prompt = read_lengths(in.section("prompt_tokens"), {workloads::LengthKind::fixed, 4096.0, 0.0});
    v.requests.output = read_lengths(in.section("output_tokens"), {workloads::LengthKind::fixed, 256.0, 0.0});
    v.requests.cached_prefix_fraction = in.number("cached_prefix_fraction", 0.0, 1.0, v.requests.cached_prefix_fraction);
    if (!v.trace.empty() && in.has("prompt_tokens")) in.fail("prompt_tokens", "comes from the trace (arrivals.trace); leave it out");
    if (!v.trace.empty() && in.has("output_tokens")) in.fail("output_tokens", "comes from the trace (arrivals.trace); leave it out");
    if (!v.trace.empty() && in.has("cached_prefix_fraction"))
        in.fail("cached_prefix_fraction", "comes from the trace (its cached_tokens column); leave it out");
    {
        Section slo = in.section("slo");
        v.ttft_slo_s = slo.number("ttft_s", 1e-6, 1e6, v.ttft_slo_s, "s");
        v.tpot_slo_s = slo.number("tpot_s", 1e-6, 1e6, v.tpot_slo_s, "s");
        slo.finish();
    }
    {
        Section e = in.section("engines", true);
        Section prefill = e.section("prefill", true);
        v.engines.prefill = read_engine_group(prefill, c.accelerator);
        c.prefill_site = prefill.text("site", "orbit");  // a ground data centre (GroundConfig::placement) by resolve
        if (prefill.has("dedicated")) {  // prfaas's dedicated group on its own chips; checked against the routing below
            Section d = prefill.section("dedicated");
            v.engines.dedicated_prefill_accelerator = read_optional_accelerator(d, c.accelerator);
            if (!v.engines.dedicated_prefill_accelerator) d.fail("accelerator", "the dedicated prefill instances' accelerator is missing");
            d.finish();
        }
        prefill.finish();
        Section decode = e.section("decode", true);
        v.engines.decode = read_engine_group(decode, c.accelerator);
        c.decode_site = decode.text("site", "orbit");
        decode.finish();
        v.engines.chips_per_satellite = static_cast<std::int32_t>(e.integer("chips_per_satellite", 1, 1024, v.engines.chips_per_satellite));
        v.engines.mfu = e.number("mfu", 1e-4, 1.0, v.engines.mfu);
        v.engines.max_batch = static_cast<std::int32_t>(e.integer("max_batch", 1, 1000000, v.engines.max_batch));
        v.engines.max_tokens = e.integer("max_tokens", 0, std::numeric_limits<std::int64_t>::max() / 4, v.engines.max_tokens);
        e.finish();
    }
    v.max_queued_requests = in.integer("max_queued_requests", 1, std::int64_t{1000000000000}, v.max_queued_requests);
    v.routing = in.choice("routing", workloads::serving_routing_names, v.routing);
    c.compare_routing = in.boolean("compare_routing", c.compare_routing);
    const bool dedicated = v.routing == workloads::ServingRouting::prfaas || c.compare_routing;
    if (dedicated) {
        v.threshold_tokens = in.integer("threshold_tokens", 0, std::numeric_limits<std::int32_t>::max(), {});
        v.dedicated_prefill_instances = static_cast<std::int32_t>(
            in.integer("dedicated_prefill_instances", 1, std::max(1, v.engines.prefill.instances - 1), 1));
    } else {
        for (const char* key : {"threshold_tokens", "dedicated_prefill_instances"})
            if (in.has(key)) in.fail(key, "applies to routing: prfaas (or compare_routing: true) only");
        if (v.engines.dedicated_prefill_accelerator)
            in.section("engines").section("prefill").fail("dedicated", "applies to routing: prfaas (or compare_routing: true) only");
    }
    {  // compare_routing runs prfaas too
        auto checked = v;
        if (dedicated) checked.routing = workloads::ServingRouting::prfaas;
        fail_on_problems(in, workloads::check(checked), serving_keys);
        // check_fits once the chips of where the instances stand are known (check_across_sections).
    }
    v.network_routing = in.choice("network_routing", workloads::routing_policy_names, v.network_routing);
    in.finish();
    // A training key beside kind: inference is a mistake, not an unknown key.
    for (const char* key : {"model_parameters", "active_parameters", "tokens_per_step", "parallelism", "moe", "mfu",
                            "all_reduce", "placement", "replan_on_topology_change", "routing", "sync", "local_steps", "outer_bytes_per_element", "gradient_buckets",
                            "bytes_per_gradient_element", "paths_per_transfer", "per_message_overhead_us", "on_rank_loss",
                            "backend", "stragglers"})
        if (s.has(key)) s.fail(key, "is a training key; workload.kind is inference (its keys go under workload.inference)");
    c.power_policy = read_power_policy(s, c.power_policy);
    s.allow("kind");
    s.finish();
    return c;
}

WorkloadConfig read_workload(Section s, bool present) {
    WorkloadConfig w;
    w.enabled = s.boolean("enabled", present);
    s.allow("kind");
    if (s.has("inference")) s.fail_first_leaf("inference", "is a serving key; it applies with workload.kind: inference only");
    w.accelerator = read_accelerator(s);
    auto& j = w.job;
    j.mfu = s.number("mfu", 1e-4, 1.0, j.mfu);
    j.parameters = s.number("model_parameters", 1.0, 1e15, j.parameters);
    j.active_parameters = s.number("active_parameters", 0.0, 1e15, j.active_parameters);
    j.tokens_per_step = s.number("tokens_per_step", 1.0, 1e12, j.tokens_per_step);
    j.bytes_per_gradient_element = s.number("bytes_per_gradient_element", 0.125, 16.0, j.bytes_per_gradient_element, "B");
    Section parallelism = s.section("parallelism");
    j.data_parallel = static_cast<std::int32_t>(parallelism.integer("data", 0, max_satellites, 0));
    j.tensor_parallel = static_cast<std::int32_t>(parallelism.integer("tensor", 1, 1024, j.tensor_parallel));
    j.moe.expert_parallel = static_cast<std::int32_t>(parallelism.integer("expert", 1, max_satellites, j.moe.expert_parallel));
    w.experts_across_clusters = parallelism.choice("expert_placement", {"within_cluster", "across_clusters"}, w.experts_across_clusters ? "across_clusters" : "within_cluster") ==
                                "across_clusters";
    parallelism.finish();
    // A mixture of experts (absent: a dense model); docs/collectives.md "Mixture of experts".
    if (s.has("moe")) {
        Section moe = s.section("moe");
        auto& m = j.moe;
        m.experts_per_token = static_cast<std::int32_t>(moe.integer("experts_per_token", 1, 1024, m.experts_per_token));
        m.hidden_size = moe.number("hidden_size", 1.0, 1e7, m.hidden_size);
        m.bytes_per_activation = moe.number("bytes_per_activation", 0.125, 16.0, m.bytes_per_activation, "B");
        m.expert_parameters = moe.number("expert_parameters", 0.0, 1e15, m.expert_parameters);
        m.load_imbalance = moe.number("load_imbalance", 1.0, 1e3, m.load_imbalance);
        // Read last: a bad value of another key is named before the missing count of layers.
        m.layers = static_cast<std::int32_t>(moe.integer("layers", 1, 100000, {}));
        moe.finish();
    }
    j.gradient_buckets = static_cast<std::int32_t>(s.integer("gradient_buckets", 1, 4096, j.gradient_buckets));
    j.sync = s.choice("sync", workloads::sync_mode_names, j.sync);
    // Local SGD's H and outer gradients, for every replica: the ranks under sync: local_steps, the
    // clusters under a constellation's diloco and noloco (workloads/job.hpp).
    j.local_steps = static_cast<std::int32_t>(s.integer("local_steps", 1, 1000000, j.local_steps));
    j.outer_bytes_per_element = s.number("outer_bytes_per_element", 0.125, 16.0, j.outer_bytes_per_element, "B");
    auto& o = w.options;
    o.all_reduce = s.choice("all_reduce", workloads::algorithm_names, workloads::all_reduce_algorithms, o.all_reduce);
    o.placement = s.choice("placement", workloads::placement_policy_names, o.placement);
    o.replan_on_topology_change = s.boolean("replan_on_topology_change", o.replan_on_topology_change);
    // ucmp: weighted multipath, a transfer split over edge-disjoint shortest paths in proportion to
    // their capacity (eBGP UCMP); 4 paths unless paths_per_transfer says otherwise. The other
    // choices are the routing policies' names.
    std::vector<std::string> routings = workloads::routing_policy_names.names();
    routings.emplace_back("ucmp");
    const std::string routing = s.choice("routing", routings, workloads::routing_policy_names.name(o.flow.routing));
    const bool ucmp = routing == "ucmp";
    o.flow.routing = ucmp ? workloads::RoutingPolicy::shortest_latency : *workloads::routing_policy_names.value(routing);
    if (ucmp) o.flow.split = workloads::MultipathSplit::capacity;
    o.flow.paths_per_transfer = static_cast<std::int32_t>(s.integer("paths_per_transfer", 1, 16, ucmp ? 4 : o.flow.paths_per_transfer));
    o.flow.per_message_overhead_s = 1e-6 * s.number("per_message_overhead_us", 0.0, 1e7, 1e6 * o.flow.per_message_overhead_s, "us");
    if (s.has("stragglers")) {  // docs/scenario-reference.md "workload.stragglers"
        Section st = s.section("stragglers");
        o.stragglers.probability = st.number("probability", 0.0, 1.0, o.stragglers.probability);
        o.stragglers.slowdown = st.number("slowdown", 1.0, 1000.0, 2.0);
        st.finish();
    }
    w.backend = s.choice("backend", workloads::backend_names, w.backend);
    if (s.has("on_rank_loss"))
        w.on_rank_loss = s.choice("on_rank_loss", workloads::rank_loss_policy_names);
    w.power_policy = read_power_policy(s, w.power_policy);
    s.finish();
    return w;
}

// `topology:` as a spec string ("ring:p=64,bw_gbps=400,latency_ns=500") or a mapping
// with the same keys plus `kind`; `file:` paths are relative to the scenario's folder.
std::optional<workloads::FabricSpec> read_fabric(Section& top, const std::string& source_name) {
    if (!top.has("topology")) {
        top.allow("topology");
        return std::nullopt;
    }
    workloads::FabricSpec spec;
    try {
        if (top.is_scalar("topology")) {
            spec = workloads::parse_fabric_spec(top.text("topology"));
        } else {
            Section t = top.section("topology");
            spec.kind = t.choice("kind", workloads::fabric_kind_names);
            spec.p = static_cast<std::int32_t>(t.integer("p", 0, max_satellites, 0));
            spec.x = static_cast<std::int32_t>(t.integer("x", 0, 100000, 0));
            spec.y = static_cast<std::int32_t>(t.integer("y", 0, 100000, 0));
            spec.leaf = static_cast<std::int32_t>(t.integer("leaf", 0, max_satellites, 0));
            if (t.has("uplink_gbps"))
                spec.uplink_bps = 1e9 * t.number("uplink_gbps", workloads::min_fabric_bw_gbps, workloads::max_fabric_bw_gbps, {}, "Gbit/s");
            spec.bandwidth_bps = 1e9 * t.number("bw_gbps", workloads::min_fabric_bw_gbps, workloads::max_fabric_bw_gbps,
                                                spec.bandwidth_bps / 1e9, "Gbit/s");
            spec.latency_s = 1e-9 * t.number("latency_ns", 0.0, workloads::max_fabric_latency_ns, spec.latency_s * 1e9, "ns");
            spec.file_path = t.text("file", "");
            t.finish();
        }
        // Refuse fabrics too large to build before building them (ranks and links).
        // (An edge list is sized below, once its file is read.)
        const bool edge_list = spec.kind == workloads::FabricKind::edge_list;
        const std::int64_t ranks = spec.kind == workloads::FabricKind::torus2d ? static_cast<std::int64_t>(spec.x) * spec.y
                                   : edge_list                                ? 0
                                                                              : spec.p;
        const std::int64_t fabric_links = edge_list ? 0 : workloads::fabric_link_count(spec);
        if (ranks > max_satellites || fabric_links > max_fabric_links) {
            top.fail("topology", "a " + std::string(workloads::to_string(spec.kind)) + " fabric of " + std::to_string(ranks) +
                                     " ranks and " + std::to_string(fabric_links) + " links is too large; at most " +
                                     std::to_string(max_satellites) + " ranks and " + std::to_string(max_fabric_links) +
                                     " links are supported");
        }
        if (edge_list) {
            std::filesystem::path path = spec.file_path;
            if (path.is_relative()) path = std::filesystem::path(source_name).parent_path() / path;
            try {
                spec.csv_text = read_input_file(path, max_edge_list_bytes, "edge-list file");
            } catch (const ScenarioError& e) {
                top.fail("topology", e.what());
            }
            spec.csv_name = path.string();
            const auto edges = workloads::parse_edge_list_csv(spec.csv_text, spec.csv_name);
            if (edges.node_count > max_satellites || static_cast<std::int64_t>(edges.links.size()) > max_fabric_links) {
                top.fail("topology", spec.csv_name + ": " + std::to_string(edges.node_count) + " nodes and " +
                                         std::to_string(edges.links.size()) + " links; at most " +
                                         std::to_string(max_satellites) + " nodes and " +
                                         std::to_string(max_fabric_links) + " links are supported");
            }
        }
        // The counts now, with a location (an edge list was checked as it was parsed above);
        // the links are built only by the run that needs them.
        if (!edge_list) workloads::check_fabric_spec(spec);
    } catch (const workloads::FabricSpecError& e) {
        top.fail("topology", e.what());
    }
    return spec;
}

namespace {

std::vector<YAML::Node> workloads_items(Section& top) {
    auto items = top.sequence("workloads");
    if (items.size() != 2)
        top.fail("workloads", "expected a list of two jobs sharing the fabric, one of kind: training and one of kind: inference "
                              "(one job alone goes under workload:)");
    return items;
}

std::string item_path(std::size_t i) { return "workloads[" + std::to_string(i) + "]"; }

}  // namespace

SharedWorkloads read_workloads_list(Section& top, const Scenario& sc, const std::string& source_name) {
    SharedWorkloads jobs;
    if (top.has("workload")) top.fail("workload", "give workload (one job) or workloads (a training and a serving job), not both");
    const auto items = workloads_items(top);
    for (std::size_t i = 0; i < items.size(); ++i) {
        Section w = top.item(items[i], item_path(i));
        const bool inference = w.choice("kind", {"training", "inference"}) == "inference";
        if ((inference && jobs.inference.enabled) || (!inference && jobs.training.enabled))
            w.fail("kind", std::string("a second ") + (inference ? "serving" : "training") + " job; give one of each kind");
        if (inference) {
            if (w.has("clusters")) w.fail("clusters", "applies to the training job; the serving instances' places follow its engines");
            jobs.inference = read_inference(w, source_name);
            continue;
        }
        if (!sc.constellation.enabled) w.fail("clusters", "two jobs share the fabric of a constellation: add a constellation section");
        const auto cluster_count = static_cast<std::int64_t>(sc.constellation.clusters.size());
        std::vector<std::int32_t> clusters;
        for (const auto& node : w.sequence("clusters")) {
            std::int64_t k = -1;
            std::size_t used = 0;
            try {
                if (node.IsScalar()) k = std::stoll(node.Scalar(), &used);
            } catch (const std::exception&) {
                k = -1;
            }
            if (!node.IsScalar() || used != node.Scalar().size() || k < 0 || k >= cluster_count)
                w.fail_at(node, w.path() + ".clusters", "expected a cluster index from 0 to " + std::to_string(cluster_count - 1));
            if (std::find(clusters.begin(), clusters.end(), k) != clusters.end())
                w.fail_at(node, w.path() + ".clusters", "lists cluster " + std::to_string(k) + " twice");
            clusters.push_back(static_cast<std::int32_t>(k));
        }
        if (clusters.empty()) w.fail("clusters", "the training job needs the clusters it runs on, e.g. clusters: [1, 2]");
        jobs.training = read_workload(w, true);
        jobs.training.clusters = std::move(clusters);
    }
    return jobs;
}

Section workload_section(Section& top, bool inference) {
    if (!top.has("workloads")) return top.section("workload");
    const auto items = workloads_items(top);
    for (std::size_t i = 0; i < items.size(); ++i) {
        Section w = top.item(items[i], item_path(i));
        if (w.has("kind") && (w.text("kind") == "inference") == inference) return w;
    }
    return top.item(items.front(), item_path(0));
}

}  // namespace skyfabric::scenario::detail
