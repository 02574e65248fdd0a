// workload.kind: inference: the serving keys load into the model's config, and bad input names
// file:line:column, the key and what was expected (a request trace: its own file, line and column).
#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using skyfabric::scenario::load_scenario_file;
using skyfabric::scenario::load_scenario_text;
using skyfabric::scenario::ScenarioError;
namespace sw = skyfabric::workloads;

namespace {

// Two prefill instances (one dedicated) and two decode instances on a synthetic fabric of 8 ranks.
const std::string serving = R"(name: t
duration_s: 100
topology: "fully_connected:p=8,bw_gbps=100,latency_ns=1000"
workload:
  kind: inference
  inference:
    model: { parameters: 8.0e9, layers: 32, kv_heads: 8, head_dim: 128 }
    arrivals: { rate_per_s: 2 }
    engines:
      prefill: { instances: 2 }
      decode: { instances: 2, satellites_per_instance: 2 }
    routing: prfaas
    threshold_tokens: 1000
)";

std::string error_of(const std::string& text, const std::string& name = "test.yaml") {
    try {
        load_scenario_text(text, name);
    } catch (const ScenarioError& e) {
        return e.what();
    }
    return "(no error)";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
}

}  // namespace

TEST(InferenceScenario, ServingKeysLoadIntoTheServingConfig) {
    const auto sc = load_scenario_text(serving, "test.yaml");
    EXPECT_FALSE(sc.workload.enabled);  // no training job
    ASSERT_TRUE(sc.inference.enabled);
    const auto& v = sc.inference.serving;
    EXPECT_DOUBLE_EQ(sw::kv_bytes_per_token(v.model), 131072.0);
    EXPECT_DOUBLE_EQ(v.requests.rate_per_s, 2.0);
    EXPECT_EQ(v.routing, sw::ServingRouting::prfaas);
    EXPECT_EQ(v.threshold_tokens, 1000);
    EXPECT_EQ(v.dedicated_prefill_instances, 1);
    EXPECT_EQ(v.engines.decode.satellites_per_instance, 2);
    EXPECT_DOUBLE_EQ(sc.inference.accelerator.hbm_bandwidth_Bps, 1640e9);
    // Instances packed from node 0: 2 prefill satellites then 2 × 2 decode satellites.
    EXPECT_EQ(skyfabric::scenario::inference_nodes(sc), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(InferenceScenario, EachRoleMayHaveItsOwnAccelerator) {
    // Mixed hardware: the dedicated prefill group on H200, the other prefill instances on the workload's chip with
    // its bandwidth overridden, decode on H20 (the catalogue: docs/references.md "Accelerators").
    const auto sc = load_scenario_text(
        replaced(replaced(serving, "prefill: { instances: 2 }",
                          "prefill: { instances: 2, hbm_bandwidth_gbs: 2000, dedicated: { accelerator: h200 } }"),
                 "decode: { instances: 2,", "decode: { instances: 2, accelerator: h20,"),
        "test.yaml");
    const auto& e = sc.inference.serving.engines;
    ASSERT_TRUE(e.dedicated_prefill_accelerator && e.prefill.accelerator && e.decode.accelerator);
    EXPECT_EQ(e.dedicated_prefill_accelerator->name, "h200");
    EXPECT_DOUBLE_EQ(e.dedicated_prefill_accelerator->peak_flops, 989e12);
    EXPECT_DOUBLE_EQ(e.prefill.accelerator->peak_flops, 918e12);  // the workload's tpu_v6e ...
    EXPECT_DOUBLE_EQ(e.prefill.accelerator->hbm_bandwidth_Bps, 2000e9);  // ... at another bandwidth
    EXPECT_EQ(e.decode.accelerator->name, "h20");
    EXPECT_DOUBLE_EQ(e.decode.accelerator->peak_flops, 148e12);
    EXPECT_DOUBLE_EQ(e.decode.accelerator->hbm_bytes, 96e9);
    EXPECT_DOUBLE_EQ(e.decode.accelerator->hbm_bandwidth_Bps, 4000e9);
    // Without role keys: none, the workload's accelerator throughout.
    const auto plain = load_scenario_text(serving, "test.yaml");
    EXPECT_FALSE(plain.inference.serving.engines.prefill.accelerator || plain.inference.serving.engines.decode.accelerator ||
                 plain.inference.serving.engines.dedicated_prefill_accelerator);
    EXPECT_NE(error_of(replaced(serving, "decode: { instances: 2,", "decode: { instances: 2, accelerator: b200,"))
                  .find("key 'workload.inference.engines.decode.accelerator': expected one of tpu_v6e, h200, h20, custom, got 'b200'"),
              std::string::npos);
    // The dedicated group exists only where prfaas runs.
    EXPECT_NE(error_of(replaced(replaced(replaced(serving, "routing: prfaas", "routing: local"), "    threshold_tokens: 1000\n", ""),
                                "prefill: { instances: 2 }", "prefill: { instances: 2, dedicated: { accelerator: h200 } }"))
                  .find("key 'workload.inference.engines.prefill.dedicated': applies to routing: prfaas"),
              std::string::npos);
}

TEST(InferenceScenario, BadServingKeysAreNamedWithTheirLocation) {
    EXPECT_NE(error_of(replaced(serving, "kind: inference", "kind: serving"))
                  .find("test.yaml:5:9: key 'workload.kind': expected one of training, inference, got 'serving'"),
              std::string::npos);
    EXPECT_NE(error_of(replaced(serving, "routing: prfaas", "routing: prfaas\n    model_parameters: 3"))
                  .find("key 'workload.inference.model_parameters'"),
              std::string::npos);
    EXPECT_NE(error_of(replaced(serving, "  kind: inference", "  kind: inference\n  mfu: 0.4"))
                  .find("key 'workload.mfu': is a training key; workload.kind is inference"),
              std::string::npos);
    EXPECT_NE(error_of(replaced(serving, "rate_per_s: 2", "rate_per_s: -2"))
                  .find("test.yaml:8:29: key 'workload.inference.arrivals.rate_per_s'"),
              std::string::npos);
    EXPECT_NE(error_of(replaced(serving, "rate_per_s: 2", "rate_per_s: 2, trace: t.csv"))
                  .find("give either rate_per_s (Poisson arrivals) or trace (a CSV file), not both"),
              std::string::npos);
    EXPECT_NE(error_of(replaced(serving, "    threshold_tokens: 1000\n", "")).find("key 'workload.inference.threshold_tokens'"),
              std::string::npos);
    EXPECT_NE(error_of(replaced(serving, "routing: prfaas", "routing: local"))
                  .find("key 'workload.inference.threshold_tokens': applies to routing: prfaas"),
              std::string::npos);
    EXPECT_NE(error_of(replaced(serving, "prefill: { instances: 2 }", "prefill: { instances: 1 }"))
                  .find("prfaas needs at least 2 prefill instances"),
              std::string::npos);
    EXPECT_NE(error_of(replaced(serving, "decode: { instances: 2,", "decode: { instances: 4,"))
                  .find("key 'workload.inference.engines.prefill': the instances need 10 satellites; there are 8"),
              std::string::npos);
    EXPECT_NE(error_of(replaced(serving, "kv_heads: 8, head_dim: 128", "kv_heads: 8"))
                  .find("key 'workload.inference.model.head_dim'"),
              std::string::npos);
}

TEST(InferenceScenario, TraceFileRowsAreCheckedWithFileLineAndColumn) {
    const auto dir = std::filesystem::temp_directory_path() / ("skyfabric_trace_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir / name) << text;
        return dir / name;
    };
    const std::string with_trace = replaced(serving, "rate_per_s: 2", "trace: requests.csv");
    write("requests.csv", "arrival_s,prompt_tokens,cached_tokens,output_tokens\n0,4000,0,10\n0.5,30000,2000,20\n");
    const auto scenario = write("s.yaml", with_trace);
    const auto sc = load_scenario_file(scenario);
    ASSERT_EQ(sc.inference.serving.trace.size(), 2u);
    EXPECT_EQ(sc.inference.serving.trace[1].uncached_tokens(), 28000);
    const auto refused = [&](const std::string& csv) {
        write("requests.csv", csv);
        try {
            (void)load_scenario_file(scenario);
        } catch (const ScenarioError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    const std::string csv = (dir / "requests.csv").string();
    const std::string header = "arrival_s,prompt_tokens,output_tokens\n";
    // Negative length, unsorted times, non-numeric: each names the trace's line and column.
    EXPECT_NE(refused(header + "0,4000,10\n1,-5,10\n").find(csv + ":3:3: column 'prompt_tokens': expected a whole number"),
              std::string::npos);
    EXPECT_NE(refused(header + "2,4000,10\n1,4000,10\n").find(csv + ":3:1: column 'arrival_s': expected a time no earlier"),
              std::string::npos);
    EXPECT_NE(refused(header + "0,4000,x\n").find(csv + ":2:8: column 'output_tokens'"), std::string::npos);
    // The scenario's own location comes first.
    EXPECT_NE(refused(header + "0,4000,x\n").find("s.yaml:8:24: key 'workload.inference.arrivals.trace'"), std::string::npos);
    EXPECT_NE(refused(header).find("no requests"), std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST(InferenceScenario, ShippedServingScenariosLoadAndPlaceTheDedicatedPrefillApart) {
    const auto four = load_scenario_file(std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/serving-4x81.yaml");
    ASSERT_TRUE(four.inference.enabled && four.constellation.enabled);
    // 6 dedicated prefill satellites from cluster 0's first (node 0); the other 6 prefill and 8 decode
    // instances from the last cluster's first satellite, node 3 · 81 = 243.
    const auto nodes = skyfabric::scenario::inference_nodes(four);
    ASSERT_EQ(nodes.size(), 20u);
    EXPECT_EQ(nodes[5], 5);
    EXPECT_EQ(nodes[6], 243);
    EXPECT_EQ(nodes[19], 256);
    const auto two = load_scenario_file(std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/serving-two-datacentres.yaml");
    EXPECT_TRUE(two.fabric.has_value());
    EXPECT_DOUBLE_EQ(two.inference.accelerator.hbm_bandwidth_Bps, 4800e9);
    // The PrfaaS case study: the dedicated group on H200, everything else on the workload's H20.
    const auto prfaas = load_scenario_file(std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/prfaas-case-study.yaml");
    const auto& e = prfaas.inference.serving.engines;
    EXPECT_EQ(prfaas.inference.accelerator.name, "h20");
    ASSERT_TRUE(e.dedicated_prefill_accelerator.has_value());
    EXPECT_EQ(e.dedicated_prefill_accelerator->name, "h200");
    EXPECT_EQ(prfaas.inference.serving.dedicated_prefill_instances, 4);
    EXPECT_EQ(e.prefill.instances + e.decode.instances, 12);
}

namespace {

std::string beside_training_text() {
    std::ifstream in(std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/serving-beside-training-4x81.yaml");
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(InferenceScenario, ATrainingJobBesideServingRunsOnItsClustersFreeSatellites) {
    const auto sc = load_scenario_text(beside_training_text(), "b.yaml");
    ASSERT_TRUE(sc.inference.enabled && sc.workload.enabled);
    EXPECT_TRUE(skyfabric::scenario::workloads_share_fabric(sc));
    // Four clusters of 81 less the 20 serving satellites (0–5 in cluster 0, 243–256 in cluster 3).
    const auto nodes = skyfabric::scenario::shared_training_nodes(sc);
    ASSERT_EQ(nodes.size(), 304u);
    EXPECT_EQ(sc.workload.job.data_parallel, 304);
    EXPECT_EQ(nodes.front(), 6);
    EXPECT_EQ(nodes[75 + 81 + 81 - 1], 242);
    EXPECT_EQ(nodes[75 + 81 + 81], 257);
    // Only clusters 1 and 2: their 162 satellites, none serving.
    auto two = beside_training_text();
    two.replace(two.find("clusters: [0, 1, 2, 3]"), 22, "clusters: [2, 1]");
    EXPECT_EQ(skyfabric::scenario::shared_training_nodes(load_scenario_text(two, "b.yaml")).size(), 162u);
}

TEST(InferenceScenario, BadSharedWorkloadsAreNamedWithTheirLocation) {
    const std::string text = beside_training_text();
    const auto with = [&](const std::string& from, const std::string& to) { return error_of(replaced(text, from, to), "b.yaml"); };
    EXPECT_NE(with("clusters: [0, 1, 2, 3]", "clusters: [0, 4]").find("key 'workloads[1].clusters': expected a cluster index from 0 to 3"),
              std::string::npos);
    EXPECT_NE(with("clusters: [0, 1, 2, 3]", "clusters: [1, 1]").find("lists cluster 1 twice"), std::string::npos);
    EXPECT_NE(with("  - kind: training", "  - kind: inference").find("key 'workloads[1].kind': a second serving job"),
              std::string::npos);
    EXPECT_NE(with("    clusters: [0, 1, 2, 3]       # every satellite of them that holds no serving instance\n", "")
                  .find("key 'workloads[1].clusters': the training job needs the clusters it runs on"),
              std::string::npos);
    EXPECT_NE(with("\noutput:", "\nradiation: {}\noutput:").find("key 'radiation.enabled': radiation beside a serving job is not modelled yet"),
              std::string::npos);
    EXPECT_NE(with("  - kind: training", "  - kind: training\n    sync: local_steps").find("key 'workloads[1].sync'"),
              std::string::npos);
    EXPECT_NE(with("    all_reduce: hierarchical_ring", "    all_reduce: hierarchical_ring\n    parallelism: { data: 12 }")
                  .find("key 'workloads[1].parallelism.data': beside a serving job the training runs on its clusters' 304 free satellites"),
              std::string::npos);
    EXPECT_NE(with("\noutput:", "\nworkload: { kind: training }\noutput:").find("give workload (one job) or workloads"),
              std::string::npos);
    // One entry is not two jobs: named at the list, line:column of its first entry.
    const auto list_at = text.find("  - kind: inference");
    const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(list_at), '\n') + 1;
    const auto one = text.substr(0, text.find("  - kind: training"));
    EXPECT_NE(error_of(one, "b.yaml").find("b.yaml:" + std::to_string(line) + ":3: key 'workloads': expected a list of two jobs"),
              std::string::npos)
        << error_of(one, "b.yaml");
}

TEST(InferenceScenario, OverridesReachAnEntryOfTheWorkloadsList) {
    using skyfabric::scenario::parse_override;
    const auto text = beside_training_text();
    // workloads.1 is the second entry (the training job); its key is set, the list stays a list.
    const auto sc = load_scenario_text(text, "b.yaml", {parse_override("workloads.1.all_reduce=ring"),
                                                        parse_override("workloads.1.clusters=[1, 2]")});
    EXPECT_EQ(sc.workload.options.all_reduce, sw::Algorithm::ring);
    EXPECT_EQ(sc.workload.clusters, (std::vector<std::int32_t>{1, 2}));
    EXPECT_EQ(sc.workload.job.data_parallel, 162);
    EXPECT_TRUE(sc.inference.enabled);
    const auto refused = [&](const std::string& o) {
        try {
            load_scenario_text(text, "b.yaml", {parse_override(o)});
        } catch (const ScenarioError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    EXPECT_NE(refused("workloads.2.mfu=0.5").find("--set workloads.2.mfu: the list has 2 entries, numbered from 0; no entry 2"),
              std::string::npos);
    EXPECT_NE(refused("workloads.mfu=0.5").find("'workloads' is a list: give an entry's number, e.g. workloads.0"), std::string::npos);
    // A number that is not a list entry is a key like any other: refused as unknown where it lands.
    EXPECT_NE(refused("orbit.7=1").find("orbit.7"), std::string::npos);
}

TEST(InferenceScenario, RunEstimatesCountTheRequestsAndTheTrainingBesideThem) {
    namespace sc = skyfabric::scenario;
    // Measured on the 2-core VM (bench/serving.sh; /usr/bin/time): a day of serving-4x81 takes 32–34
    // CPU-seconds, one orbit of serving-beside-training-4x81 31–40.
    const auto day = load_scenario_file(std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/serving-4x81.yaml", {{"duration_s", "86400"}});
    EXPECT_NEAR(sc::estimate_run(day, sc::node_count(day)).cpu_s, 33.0, 0.3 * 33.0);
    const auto beside = load_scenario_text(beside_training_text(), "b.yaml");
    EXPECT_NEAR(sc::estimate_run(beside, sc::node_count(beside)).cpu_s, 35.0, 0.3 * 35.0);
    // Without the training job the same serving costs about a tenth of that.
    EXPECT_LT(sc::estimate_run(load_scenario_file(std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/serving-4x81.yaml"), 324).cpu_s, 8.0);
}

TEST(InferenceScenario, OutputEstimateCountsTheRequestTable) {
    // Issue 52 (item 15): validate estimated 0 MB of output for a serving run of a million requests,
    // whose request table is tens of MB. A million requests in 100 s at 10,000 per second, both
    // routings (serving-4x81 compares them): the request tables hold 2 × 1e6 rows of 10 float64 and
    // 8 int32 columns (src/output/request_table.cpp), 224 MB before compression, on top of the
    // samples' series (as at 1 request per second); without HDF5 output none of it. The engines serve
    // far fewer: every request is held (and written) only with a queue limit above the backlog.
    namespace sc = skyfabric::scenario;
    const std::string path = std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/serving-4x81.yaml";
    const auto busy = load_scenario_file(path, {{"duration_s", "100"}, {"workload.inference.arrivals.rate_per_s", "10000"},
                                                {"workload.inference.max_queued_requests", "10000000"}});
    const auto idle = load_scenario_file(path, {{"duration_s", "100"}, {"workload.inference.arrivals.rate_per_s", "1"}});
    ASSERT_TRUE(busy.inference.compare_routing);
    const double rows = 2.0 * (1e6 - 100.0), row_bytes = 10 * 8 + 8 * 4;
    EXPECT_NEAR(sc::estimate_run(busy, 324).output_bytes - sc::estimate_run(idle, 324).output_bytes, rows * row_bytes, 1.0);
    EXPECT_NE(sc::describe(sc::estimate_run(busy, 324)).find("of output"), std::string::npos);
    EXPECT_GT(sc::estimate_run(busy, 324).output_bytes, 224e6);
    // At the default limit (10,000 held) the arrivals beyond it are dropped, without a row: a tenth as many.
    const auto bounded = load_scenario_file(path, {{"duration_s", "100"}, {"workload.inference.arrivals.rate_per_s", "10000"}});
    EXPECT_LT(sc::estimate_run(bounded, 324).output_bytes, 0.1 * sc::estimate_run(busy, 324).output_bytes);
    const auto no_hdf5 = load_scenario_file(path, {{"duration_s", "100"}, {"workload.inference.arrivals.rate_per_s", "10000"},
                                                   {"output.hdf5", "false"}, {"output.vtk", "false"}});
    EXPECT_LT(sc::estimate_run(no_hdf5, 324).output_bytes, 1e6);
}
