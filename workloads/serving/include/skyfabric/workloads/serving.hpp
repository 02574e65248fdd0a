#pragma once
// Serving a model with disaggregated prefill and decode (docs/inference.md): requests arrive as a
// Poisson process, are prefilled on a prefill instance (compute-bound roofline), their KV cache
// moves to a decode instance as flows over the run's links (max-min fair, re-solved whenever a
// transfer starts or ends and whenever the topology changes), and decode instances generate the
// output tokens with continuous batching (memory-bound roofline). Satellite outages (crashes) take
// instances down and requeue what they held; a compute throttle (power) stretches their work. Pure: no I/O.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/physics/settings_problem.hpp>
#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/job.hpp>

namespace skyfabric::workloads {

enum class AttentionKind : std::uint8_t {
    dense = 0,   // every layer keeps K and V of every KV head (GQA: the KV heads, not the query heads)
    hybrid = 1,  // only full_attention_layers keep a per-token cache (sliding-window/linear layers: constant state, left out)
    mla = 2,     // multi-head latent attention: one compressed latent (kv_lora_rank) plus the decoupled RoPE key per layer
};
inline constexpr auto attention_kind_names = physics::enum_names<AttentionKind>({
    {AttentionKind::dense, "dense"}, {AttentionKind::hybrid, "hybrid"}, {AttentionKind::mla, "mla"}});

struct ServingModel {
    double parameters = 8e9;             // weights read per decode step
    double active_parameters = 0.0;      // a mixture of experts' parameters per token: 2·this FLOPs per token (0: parameters)
    double bytes_per_parameter = 2.0;    // bf16 weights
    std::int32_t layers = 32;
    std::int32_t kv_heads = 8;
    std::int32_t head_dim = 128;
    double bytes_per_element = 2.0;      // of the KV cache
    AttentionKind attention = AttentionKind::dense;
    std::int32_t full_attention_layers = 0;  // hybrid
    std::int32_t kv_lora_rank = 512;          // mla (DeepSeek-V3: 512)
    std::int32_t rope_dim = 64;               // mla (DeepSeek-V3: 64)
    bool operator==(const ServingModel&) const = default;
};

// KV-cache bytes per token:
//   dense   2 · layers · kv_heads · head_dim · bytes_per_element
//   hybrid  2 · full_attention_layers · kv_heads · head_dim · bytes_per_element
//   mla     layers · (kv_lora_rank + rope_dim) · bytes_per_element
double kv_bytes_per_token(const ServingModel& model);
double weight_bytes(const ServingModel& model);

enum class LengthKind : std::uint8_t { fixed = 0, lognormal = 1 };
inline constexpr auto length_kind_names = physics::enum_names<LengthKind>({
    {LengthKind::fixed, "fixed"}, {LengthKind::lognormal, "lognormal"}});

// The most tokens one request's prompt or output may have (a trace's cells, a draw): far above
// any model's context, and exact in a double, so counts and their sums stay within 64 bits.
inline constexpr std::int64_t max_request_tokens = 1'000'000'000'000;

// Token counts. lognormal: mean_tokens is the distribution's mean, sigma the standard deviation of
// its logarithm (μ = ln mean − σ²/2); draws are rounded to the nearest integer, at least 1 and at
// most max_request_tokens (a far tail of a wide lognormal would otherwise overflow 64 bits).
struct LengthDistribution {
    LengthKind kind = LengthKind::fixed;
    double mean_tokens = 1024.0;
    double sigma = 0.0;
    bool operator==(const LengthDistribution&) const = default;
};

struct RequestStream {
    double rate_per_s = 1.0;                // Poisson arrivals
    LengthDistribution prompt;
    LengthDistribution output{LengthKind::fixed, 256.0, 0.0};  // output tokens, the first one included
    double cached_prefix_fraction = 0.0;    // of each prompt, already in the prefill instance's prefix cache
    std::uint64_t seed = 42;
    bool operator==(const RequestStream&) const = default;
};

struct Request {
    std::int64_t id = 0;
    double arrival_s = 0.0;
    std::int64_t prompt_tokens = 0;
    std::int64_t cached_tokens = 0;   // floor(cached_prefix_fraction · prompt_tokens)
    std::int64_t output_tokens = 0;
    std::int64_t uncached_tokens() const { return prompt_tokens - cached_tokens; }
    bool operator==(const Request&) const = default;
};

// A bad row of a request trace: "name:line:column: column 'prompt_tokens': expected ..., got '...'".
struct RequestTraceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A request trace as CSV text: a header naming the columns arrival_s, prompt_tokens, output_tokens and
// optionally cached_tokens (any order), then one request per row; blank lines and lines starting with
// '#' are skipped. Arrival times must not decrease; prompt and output at least 1 token; cached tokens
// from 0 to the prompt. Ids follow the rows. Throws RequestTraceError naming the row and column.
std::vector<Request> parse_request_trace_csv(std::string_view text, std::string_view name);

// The stream's requests in arrival order, from start_s: request k is a pure function of (seed, k)
// (counter-based draws, physics/random.hpp), so any run of the same seed sees the same requests.
class RequestGenerator {
public:
    RequestGenerator(const RequestStream& stream, double start_s);
    Request next();

private:
    RequestStream stream_;
    double last_arrival_s_ = 0.0;
    std::int64_t index_ = 0;
};

struct EngineGroup {
    std::int32_t instances = 1;
    std::int32_t satellites_per_instance = 1;
    std::optional<Accelerator> accelerator;  // this role's chips (mixed hardware); none: the run's accelerator
    bool operator==(const EngineGroup&) const = default;
};

struct ServingEngines {
    EngineGroup prefill;
    EngineGroup decode;
    std::int32_t chips_per_satellite = 1;  // the instance's chips: satellites × this
    double mfu = 0.4;                      // achieved fraction of peak FLOP/s (prefill; decode's compute bound)
    std::int32_t max_batch = 64;           // sequences decoded together
    // KV tokens a decode instance holds (its running sequences' prompt + output, reserved on admission);
    // 0: what its HBM holds beside the weights (kv_capacity_tokens).
    std::int64_t max_tokens = 0;
    // prfaas's dedicated prefill instances (the first dedicated_prefill_instances of the prefill ones, in either
    // routing: hardware does not change with the routing); none: the prefill role's accelerator.
    std::optional<Accelerator> dedicated_prefill_accelerator;
    bool operator==(const ServingEngines&) const = default;
};

// FLOPs per token's pass: 2 · active parameters (attention's context-length term left out, docs/inference.md).
double flops_per_token(const ServingModel& model);
// prefill_s = flops_per_token · uncached_tokens / (chips · peak · mfu)
double prefill_time_s(const ServingModel& model, const Accelerator& accelerator, std::int64_t chips, double mfu,
                      std::int64_t uncached_tokens);
// One decode step of `batch` sequences holding `context_tokens` tokens of KV in total:
// max((weights + kv_bytes_per_token · context_tokens) / (chips · HBM bandwidth),
//     flops_per_token · batch / (chips · peak · mfu)).
double decode_step_time_s(const ServingModel& model, const Accelerator& accelerator, std::int64_t chips, double mfu,
                          std::int64_t batch, double context_tokens);
// floor((chips · hbm_bytes − weights) / kv_bytes_per_token), 0 when the weights do not fit.
std::int64_t kv_capacity_tokens(const ServingModel& model, const Accelerator& accelerator, std::int64_t chips);

enum class ServingRouting : std::uint8_t {
    local = 0,   // every prefill instance serves every request (homogeneous PD)
    prfaas = 1,  // uncached length > threshold: the dedicated prefill group; otherwise the others
};
inline constexpr auto serving_routing_names = physics::enum_names<ServingRouting>({
    {ServingRouting::local, "local"}, {ServingRouting::prfaas, "prfaas"}});

inline const char* to_string(ServingRouting routing) { return serving_routing_names.name(routing); }
inline const char* to_string(AttentionKind attention) { return attention_kind_names.name(attention); }

// A satellite down over [start_s, end_s) (end_s +inf: for good), e.g. a chip or host crash and its reboot
// (faults.hpp fault_crashes). An instance is down while any of its satellites is: it loses the requests it
// holds (requeued, ServingSummary::requeued_requests) and takes no work until it is up again.
struct SatelliteOutage {
    double start_s = 0.0;
    double end_s = std::numeric_limits<double>::infinity();
    std::int32_t satellite = 0;  // node
    bool operator==(const SatelliteOutage&) const = default;
};

// Each satellite's compute share in [0, 1] (e.g. what the power policy allows in eclipse) over
// [start_s + j·step_s, start_s + (j+1)·step_s), row-major [sample][satellite]; before start_s the first sample,
// after the last one its value holds. An instance runs at its slowest satellite's share, and its prefill and
// decode work stretches by 1/share (the share integrated over time).
struct ComputeThrottle {
    double start_s = 0.0;
    double step_s = 1.0;
    std::int64_t sample_count = 0;  // 0: full speed throughout
    std::int32_t satellite_count = 0;
    std::vector<double> share;
    bool operator==(const ComputeThrottle&) const = default;
};

struct Percentiles {
    double p50 = 0.0, p90 = 0.0, p99 = 0.0;  // nearest rank; 0 with no values
};

// A 95 % confidence interval; NaN bounds where the run cannot give one.
struct Interval95 {
    double low = std::numeric_limits<double>::quiet_NaN();
    double high = std::numeric_limits<double>::quiet_NaN();
};
struct PercentileIntervals {
    Interval95 p50, p90, p99;
};

// The sections of a serving run's intervals (docs/inference.md "Intervals"): the run cut into this
// many equal spans of arrival time, each span's estimate taken alone.
inline constexpr std::int32_t serving_interval_sections = 20;

// A training job sharing the serving fabric (docs/inference.md "Serving beside training"): steps of
// compute_s of compute, then its collective, whose phases run one after another as flows in the same
// max-min solve as the KV caches (a phase ends when its last transfer's last bit has landed, a path
// latency after it drained). The jobs slow each other only where their flows share links.
struct SharedTraining {
    Schedule collective;                     // one step's collective over ranks 0 … p−1 (e.g. build_schedule)
    std::vector<std::int32_t> rank_nodes;    // node of each rank (p of them)
    double compute_s = 0.0;                  // per step, before the collective; > 0
    bool operator==(const SharedTraining&) const = default;
};

struct SharedTrainingSummary {
    std::int64_t steps = 0;          // steps completed within the run
    double mean_step_s = 0.0;        // of the completed steps (0 with none)
    Percentiles step_s;              // nearest rank
    double mean_collective_s = 0.0;  // step − compute: the collective with its stalls
    double bytes_sent = 0.0;         // transfers drained within the run
};

struct ServingConfig {
    ServingModel model;
    RequestStream requests;
    // Non-empty: exactly these requests (ids 0, 1, ... in arrival order) instead of the Poisson stream.
    std::vector<Request> trace;
    ServingEngines engines;
    double ttft_slo_s = 2.0;
    double tpot_slo_s = 0.1;
    ServingRouting routing = ServingRouting::local;
    std::int64_t threshold_tokens = 0;              // prfaas
    std::int32_t dedicated_prefill_instances = 0;   // prfaas: the first ones of the prefill instances
    // Nodes of the instances in order (prefill instances first, then decode), satellites_per_instance
    // each; empty: nodes 0, 1, 2, ...
    std::vector<std::int32_t> nodes;
    RoutingPolicy network_routing = RoutingPolicy::shortest_latency;
    double start_s = 0.0;
    double end_s = 0.0;  // arrivals in [start_s, end_s); requests still in flight then are unfinished
    std::vector<SatelliteOutage> outages;  // any order; satellites holding no instance are ignored
    ComputeThrottle throttle;
    // Cluster of each node (a constellation); links between clusters are the gateway layer, whose
    // egress is reported; -1: a node on the ground (docs/inference.md "Ground data centres"), never a gateway.
    // Empty: one cluster, no gateway figures.
    std::vector<std::int32_t> cluster_of;
    double egress_bin_s = 0.0;  // > 0: the gateway egress as a series of bins this long from start_s
    // A training job on the same fabric (empty rank_nodes: none). With requests.rate_per_s 0 and no trace,
    // the training runs alone on the engine: the baseline of the interference.
    SharedTraining training;
    // The most requests held at once: admitted and not yet final (waiting for or in a prefill, their KV
    // cache in transfer, waiting for or in a decode batch). A request arriving while this many are held is
    // dropped: counted (ServingSummary::dropped), never queued, never a record. So what the run holds is
    // bounded by this, not by the arrivals, however far they outpace the engines. The default is far above
    // what the shipped scenarios hold at once (a few hundred): they drop nothing.
    std::int64_t max_queued_requests = 10000;
    bool operator==(const ServingConfig&) const = default;
};

// The chips each role runs on (mixed hardware, docs/inference.md): prefill instance `instance`'s (the
// dedicated group's, the prefill role's or the run's `accelerator`), and the decode instances' (theirs or the run's).
const Accelerator& prefill_accelerator(const ServingConfig& config, std::int32_t instance, const Accelerator& accelerator);
const Accelerator& decode_accelerator(const ServingConfig& config, const Accelerator& accelerator);

// What the serving run refuses in its engines, by field name ("engines.prefill.instances"): groups
// of at least one instance of at least one satellite; with prfaas at least two prefill instances, of
// which 1 .. all but one are dedicated. (Whether the network has the satellites is the run's to say.)
physics::SettingsProblems check(const ServingConfig& config);

// What cannot be served at all on `accelerator`, by field name: the weights must fit a prefill
// instance's HBM ("engines.prefill.satellites_per_instance") and leave a decode instance room for KV
// ("engines.decode.satellites_per_instance"), and the decode instance's KV capacity (max_tokens or
// the HBM's) must hold the smallest request the stream or the trace can give ("engines.max_tokens"
// when it was set, else "engines.decode.satellites_per_instance"): otherwise every request would be
// unservable and the run would measure nothing.
physics::SettingsProblems check_fits(const ServingConfig& config, const Accelerator& accelerator);

// The requests per second the engines finish in steady state, for a request of the stream's mean
// lengths (or the trace's): the lesser of the prefill instances' rate (the prefill roofline) and the
// decode instances' (a batch of min(max_batch, KV capacity / (prompt + output)) sequences, each step
// at the decode roofline with the batch's context half generated). Arrivals above it queue: the run
// then holds the backlog, which the run-size estimate counts.
double sustainable_request_rate_per_s(const ServingConfig& config, const Accelerator& accelerator);

enum class RequestStatus : std::uint8_t {
    completed = 0,
    unfinished = 1,   // still in flight at the end of the run
    unservable = 2,   // prompt + output exceed every decode instance's KV capacity: refused on arrival
    lost = 3,         // every instance of a role it needed was down (on arrival, or when its instance crashed)
};
inline constexpr auto request_status_names = physics::enum_names<RequestStatus>({
    {RequestStatus::completed, "completed"},
    {RequestStatus::unfinished, "unfinished"},
    {RequestStatus::unservable, "unservable"},
    {RequestStatus::lost, "lost"},
});

// Times absent (not reached by the end) are NaN.
struct RequestRecord {
    Request request;
    RequestStatus status = RequestStatus::unfinished;
    std::int32_t prefill_instance = -1;
    std::int32_t decode_instance = -1;
    double prefill_start_s = std::numeric_limits<double>::quiet_NaN();
    double prefill_end_s = std::numeric_limits<double>::quiet_NaN();
    double kv_bytes = 0.0;
    double first_token_s = std::numeric_limits<double>::quiet_NaN();  // the KV cache arrived at decode
    double finish_s = std::numeric_limits<double>::quiet_NaN();
    std::int64_t tokens_generated = 0;
    std::int32_t requeues = 0;  // times an instance holding it crashed and it moved to another
    double ttft_s() const { return first_token_s - request.arrival_s; }
    double kv_transfer_s() const { return first_token_s - prefill_end_s; }
    // (finish − first token) / (output − 1); NaN for one output token or when unfinished.
    double tpot_s() const;
};

struct ServingSummary {
    std::int64_t arrived = 0;
    std::int64_t completed = 0;
    std::int64_t unfinished = 0;
    std::int64_t unservable = 0;
    std::int64_t lost = 0;
    std::int64_t dropped = 0;            // arrived while max_queued_requests were held: no record, a miss for the SLO
    // arrived = completed + unfinished + unservable + lost + dropped
    std::int64_t peak_queued_requests = 0;  // the most held at once (max_queued_requests' count)
    std::int64_t requeued_requests = 0;  // requests moved off a crashed instance at least once
    std::int64_t instance_crashes = 0;   // an instance going down (a satellite of it crashing while it was up)
    double instance_down_s = 0.0;        // instance-seconds down within the run
    double instance_throttled_s = 0.0;   // instance-seconds at a compute share below 1 within the run
    double requests_per_s = 0.0;       // completed / run length
    double output_tokens_per_s = 0.0;  // tokens generated in the run / run length
    Percentiles ttft_s;                // requests with a first token
    Percentiles tpot_s;                // completed requests of more than one output token
    // Completed requests meeting both objectives, over the requests whose outcome is known: unservable, lost
    // and dropped ones are misses; unfinished ones count as misses once past their TTFT objective without a
    // first token or with a late one, and are left out while still undecided.
    double slo_attainment = 0.0;
    // 95 % intervals of the figures above by sectioning (Asmussen & Glynn, Stochastic Simulation, 2007,
    // III.5): each of serving_interval_sections spans of arrival time gives its own estimate; the
    // interval is the whole run's ± t(0.975, n−1) · their standard deviation / √n, over the n spans with
    // a value (NaN below 2). Requests of nearby arrival share queues, so spans, not requests, are the
    // (nearly) independent samples.
    PercentileIntervals ttft_ci95, tpot_ci95;
    Interval95 slo_attainment_ci95;
    std::int32_t interval_sections = 0;  // the spans with a TTFT (the interval's n for TTFT)
    double kv_bytes_moved = 0.0;       // transfers completed
    Percentiles kv_transfer_s;         // transfers completed (prefill end to arrival at decode)
    std::int64_t kv_capacity_tokens = 0;  // per decode instance (max_tokens or the HBM's)
    std::int64_t prefill_routed_dedicated = 0;  // prfaas: requests prefilled on the dedicated group
    std::int64_t decode_steps = 0;
    std::int64_t rate_solves = 0;
    std::int64_t topology_epochs = 0;
    double stalled_transfer_s = 0.0;   // transfer time with some shard without a path
    // KV caches on gateway links (between clusters), each link a cache crosses counted: bytes, and the
    // rate over the run (mean) and at its busiest instant (peak, rates being constant between solves).
    double gateway_bytes = 0.0;
    double gateway_egress_mean_bps = 0.0;
    double gateway_egress_peak_bps = 0.0;
};

struct ServingResult {
    // In arrival order, dropped requests left out (their ids are missing); empty when a RequestSink took them.
    std::vector<RequestRecord> requests;
    ServingSummary summary;
    // With cluster_of and egress_bin_s: the mean gateway rate in each bin [start_s + k·bin, ...),
    // the last bin cut at end_s (bit/s).
    std::vector<double> gateway_egress_bps;
    double gateway_egress_bin_s = 0.0;
    SharedTrainingSummary training;  // ServingConfig::training's steps (zeros without one)
    bool stopped = false;            // simulate_serving's stop ended the run before end_s (at stopped_at_s)
    double stopped_at_s = std::numeric_limits<double>::quiet_NaN();
};

// Takes the requests' records while the run goes on, instead of ServingResult::requests: each record once, in
// arrival (id) order, once it and every earlier one is final (completed, unservable or lost), in blocks of at
// least block_records; at the end the rest, the unfinished ones included. The run then holds only the requests
// from the oldest one not final to the newest (those in flight and a block), not the whole run. Dropped
// requests (ServingConfig::max_queued_requests) have no record. The results
// (summary, records, their order) are the same as without it. Without `receive`: no sink.
struct RequestSink {
    std::function<void(std::span<const RequestRecord>)> receive;
    std::size_t block_records = 4096;
};

// Throws std::invalid_argument when the instances need more nodes than the network has, the
// routing's groups are empty, or a shared training job's ranks, nodes or compute_s are invalid.
// `stop` is polled every few hundred events (a user's Ctrl-C; the library reads it, never sets it): once
// set, the run ends at the current event, what is in flight unfinished, and ServingResult::stopped says so.
ServingResult simulate_serving(const ServingConfig& config, const Accelerator& accelerator, TopologySource source,
                               const RequestSink& sink = {}, const std::atomic<bool>* stop = nullptr);

}  // namespace skyfabric::workloads
