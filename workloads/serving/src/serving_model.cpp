// The serving model's pieces outside the event loop (workloads/serving.hpp): KV bytes per token,
// the rooflines' FLOPs and capacity, the Poisson request stream and the arrival-trace reader, and
// what a serving configuration must hold (check).
#include <skyfabric/workloads/serving.hpp>

#include <skyfabric/physics/random.hpp>

#include <skyfabric/workloads/csv_text.hpp>

#include <skyfabric/workloads/input_text.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace skyfabric::workloads {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Philox streams of one serving seed: one per quantity drawn, so that changing one distribution
// leaves the others' draws alone.
constexpr std::uint64_t stream_gap = 1, stream_prompt = 2, stream_output = 3;
constexpr std::uint64_t serving_seed_tag = 0x5345525645ull;  // "SERVE"

std::int64_t draw_length(const LengthDistribution& d, std::uint64_t seed, std::uint64_t stream, std::int64_t index) {
    double x = d.mean_tokens;
    if (d.kind == LengthKind::lognormal && d.sigma > 0.0) {
        // Box–Muller from two uniforms in (0, 1].
        const auto i = static_cast<std::uint64_t>(index);
        const double u1 = physics::rng::uniform01(seed, stream, 2 * i);
        const double u2 = physics::rng::uniform01(seed, stream, 2 * i + 1);
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
        const double mu = std::log(d.mean_tokens) - 0.5 * d.sigma * d.sigma;
        x = std::exp(mu + d.sigma * z);
    }
    return std::llround(std::clamp(x, 1.0, static_cast<double>(max_request_tokens)));
}

}  // namespace

double kv_bytes_per_token(const ServingModel& m) {
    switch (m.attention) {
        case AttentionKind::dense:
            return 2.0 * m.layers * static_cast<double>(m.kv_heads) * m.head_dim * m.bytes_per_element;
        case AttentionKind::hybrid:
            return 2.0 * m.full_attention_layers * static_cast<double>(m.kv_heads) * m.head_dim * m.bytes_per_element;
        case AttentionKind::mla:
            return static_cast<double>(m.layers) * (m.kv_lora_rank + m.rope_dim) * m.bytes_per_element;
    }
    return 0.0;
}

double weight_bytes(const ServingModel& m) { return m.parameters * m.bytes_per_parameter; }

RequestGenerator::RequestGenerator(const RequestStream& stream, double start_s)
    : stream_(stream), last_arrival_s_(start_s) {
    stream_.seed = physics::rng::derive_seed(stream.seed, serving_seed_tag);
}

Request RequestGenerator::next() {
    const auto i = static_cast<std::uint64_t>(index_);
    Request r;
    r.id = index_;
    // Exponential gaps: −ln(u)/λ with u in (0, 1].
    last_arrival_s_ += -std::log(physics::rng::uniform01(stream_.seed, stream_gap, i)) / stream_.rate_per_s;
    r.arrival_s = last_arrival_s_;
    r.prompt_tokens = draw_length(stream_.prompt, stream_.seed, stream_prompt, index_);
    r.output_tokens = draw_length(stream_.output, stream_.seed, stream_output, index_);
    r.cached_tokens = static_cast<std::int64_t>(std::floor(stream_.cached_prefix_fraction * static_cast<double>(r.prompt_tokens)));
    ++index_;
    return r;
}

std::vector<Request> parse_request_trace_csv(std::string_view text, std::string_view name_view) {
    const std::string name = name_view.empty() ? std::string("request trace") : std::string(name_view);
    enum Column { arrival = 0, prompt = 1, cached = 2, output = 3 };
    const char* const column_names[] = {"arrival_s", "prompt_tokens", "cached_tokens", "output_tokens"};
    int at[4] = {-1, -1, -1, -1};
    std::size_t columns = 0;
    bool have_header = false;
    std::vector<Request> out;
    std::size_t line_no = 0;
    for (std::string_view line : csv::split(csv::without_bom(text), '\n')) {
        ++line_no;
        const std::string_view content = csv::trim(line);
        if (content.empty() || content.front() == '#') continue;
        const auto cells = csv::split(line, ',');
        const auto cell_column = csv::cell_columns(cells);
        const auto where = [&](std::size_t cell) {
            return name + ":" + std::to_string(line_no) + ":" + std::to_string(cell_column[cell]) + ": ";
        };
        if (!have_header) {
            // A first line naming none of the columns is not a trace (/etc/shadow by mistake): the
            // message must not echo what the file holds.
            if (std::none_of(cells.begin(), cells.end(), [&](std::string_view c) {
                    return std::find(std::begin(column_names), std::end(column_names), csv::trim(c)) != std::end(column_names);
                }))
                throw RequestTraceError(name + ":" + std::to_string(line_no) +
                                        ":1: not a request trace: its first line is not a header naming arrival_s, "
                                        "prompt_tokens, output_tokens");
            for (std::size_t i = 0; i < cells.size(); ++i) {
                const std::string_view cell = csv::trim(cells[i]);
                bool known = false;
                for (int k = 0; k < 4; ++k)
                    if (cell == column_names[k]) {
                        if (at[k] >= 0) throw RequestTraceError(where(i) + "column '" + std::string(cell) + "' given twice");
                        at[k] = static_cast<int>(i);
                        known = true;
                    }
                if (!known)
                    throw RequestTraceError(where(i) + "header: expected the columns arrival_s, prompt_tokens, output_tokens "
                                                       "and optionally cached_tokens, got " + quoted_input(cell));
            }
            for (int k : {arrival, prompt, output})
                if (at[k] < 0)
                    throw RequestTraceError(name + ":" + std::to_string(line_no) + ":1: header: column '" + column_names[k] +
                                            "' missing");
            columns = cells.size();
            have_header = true;
            continue;
        }
        if (cells.size() != columns)
            throw RequestTraceError(name + ":" + std::to_string(line_no) + ":1: expected " + std::to_string(columns) +
                                    " comma-separated cells, got " + std::to_string(cells.size()));
        const auto fail = [&](int k, const std::string& expected) {
            throw RequestTraceError(where(static_cast<std::size_t>(at[k])) + "column '" + column_names[k] + "': expected " +
                                    expected + ", got " + quoted_input(csv::trim(cells[static_cast<std::size_t>(at[k])])));
        };
        const auto tokens = [&](int k, std::int64_t min) {
            const auto v = csv::to_integer(cells[static_cast<std::size_t>(at[k])], static_cast<double>(max_request_tokens));
            if (!v || *v < min)
                fail(k, "a whole number of tokens in [" + std::to_string(min) + ", " + std::to_string(max_request_tokens) + "]");
            return *v;
        };
        Request r;
        r.id = static_cast<std::int64_t>(out.size());
        const auto t = csv::to_number(cells[static_cast<std::size_t>(at[arrival])]);
        if (!t || *t < 0.0) fail(arrival, "a time in seconds >= 0");
        if (!out.empty() && *t < out.back().arrival_s)
            fail(arrival, "a time no earlier than the previous row's " + std::to_string(out.back().arrival_s) + " s (rows sorted by arrival)");
        r.arrival_s = *t;
        r.prompt_tokens = tokens(prompt, 1);
        r.output_tokens = tokens(output, 1);
        if (at[cached] >= 0) {
            r.cached_tokens = tokens(cached, 0);
            if (r.cached_tokens > r.prompt_tokens) fail(cached, "at most the row's prompt_tokens (" + std::to_string(r.prompt_tokens) + ")");
        }
        out.push_back(r);
    }
    if (!have_header) throw RequestTraceError(name + ": empty: expected a header arrival_s,prompt_tokens,output_tokens");
    return out;
}

double flops_per_token(const ServingModel& model) {
    return 2.0 * (model.active_parameters > 0.0 ? model.active_parameters : model.parameters);
}

double prefill_time_s(const ServingModel& model, const Accelerator& a, std::int64_t chips, double mfu,
                      std::int64_t uncached_tokens) {
    return flops_per_token(model) * static_cast<double>(uncached_tokens) / (static_cast<double>(chips) * a.peak_flops * mfu);
}

double decode_step_time_s(const ServingModel& model, const Accelerator& a, std::int64_t chips, double mfu,
                          std::int64_t batch, double context_tokens) {
    const double c = static_cast<double>(chips);
    const double memory_s = (weight_bytes(model) + kv_bytes_per_token(model) * context_tokens) / (c * a.hbm_bandwidth_Bps);
    const double compute_s = flops_per_token(model) * static_cast<double>(batch) / (c * a.peak_flops * mfu);
    return std::max(memory_s, compute_s);
}

std::int64_t kv_capacity_tokens(const ServingModel& model, const Accelerator& a, std::int64_t chips) {
    const double free_bytes = static_cast<double>(chips) * a.hbm_bytes - weight_bytes(model);
    const double per_token = kv_bytes_per_token(model);
    if (!(free_bytes > 0.0) || !(per_token > 0.0)) return 0;
    return static_cast<std::int64_t>(std::floor(free_bytes / per_token));
}

double RequestRecord::tpot_s() const {
    if (status != RequestStatus::completed || request.output_tokens < 2) return nan;
    return (finish_s - first_token_s) / static_cast<double>(request.output_tokens - 1);
}

physics::SettingsProblems check(const ServingConfig& c) {
    physics::SettingsProblems problems;
    const auto at_least_one = [&](const char* key, std::int32_t value) {
        if (value < 1) problems.push_back({key, "must be at least 1"});
    };
    const auto& e = c.engines;
    at_least_one("engines.prefill.instances", e.prefill.instances);
    at_least_one("engines.prefill.satellites_per_instance", e.prefill.satellites_per_instance);
    at_least_one("engines.decode.instances", e.decode.instances);
    at_least_one("engines.decode.satellites_per_instance", e.decode.satellites_per_instance);
    if (c.max_queued_requests < 1) problems.push_back({"max_queued_requests", "must be at least 1"});
    if (c.routing != ServingRouting::prfaas) return problems;
    if (e.prefill.instances < 2)
        problems.push_back({"engines.prefill.instances", "prfaas needs at least 2 prefill instances: the dedicated group and at "
                                                         "least one beside the decode instances"});
    else if (c.dedicated_prefill_instances < 1 || c.dedicated_prefill_instances >= e.prefill.instances)
        problems.push_back({"dedicated_prefill_instances", "prfaas dedicates from 1 to " + std::to_string(e.prefill.instances - 1) +
                                                               " of the " + std::to_string(e.prefill.instances) + " prefill instances"});
    return problems;
}

const Accelerator& prefill_accelerator(const ServingConfig& c, std::int32_t instance, const Accelerator& a) {
    const auto& e = c.engines;
    if (e.dedicated_prefill_accelerator && instance < c.dedicated_prefill_instances) return *e.dedicated_prefill_accelerator;
    return e.prefill.accelerator ? *e.prefill.accelerator : a;
}

const Accelerator& decode_accelerator(const ServingConfig& c, const Accelerator& a) {
    return c.engines.decode.accelerator ? *c.engines.decode.accelerator : a;
}

physics::SettingsProblems check_fits(const ServingConfig& c, const Accelerator& a) {
    physics::SettingsProblems problems;
    const auto& e = c.engines;
    const double weights = weight_bytes(c.model);
    const auto gb = [](double bytes) {
        char text[32];
        std::snprintf(text, sizeof text, "%.4g GB", bytes / 1e9);
        return std::string(text);
    };
    const auto instance = [&](const EngineGroup& g, const Accelerator& chip) {
        return std::to_string(g.satellites_per_instance) + " satellites x " + std::to_string(e.chips_per_satellite) + " chips x " +
               gb(chip.hbm_bytes) + " = " + gb(static_cast<double>(g.satellites_per_instance) * e.chips_per_satellite * chip.hbm_bytes);
    };
    // The prefill instance with the least HBM (mixed hardware: the dedicated group's chips may differ).
    const Accelerator* prefill_chip = &prefill_accelerator(c, 0, a);
    for (std::int32_t p = 1; p < e.prefill.instances; ++p)
        if (prefill_accelerator(c, p, a).hbm_bytes < prefill_chip->hbm_bytes) prefill_chip = &prefill_accelerator(c, p, a);
    if (weights > static_cast<double>(e.prefill.satellites_per_instance) * e.chips_per_satellite * prefill_chip->hbm_bytes)
        problems.push_back({"engines.prefill.satellites_per_instance",
                            "the model's weights (" + gb(weights) + ") do not fit a prefill instance's HBM (" +
                                instance(e.prefill, *prefill_chip) + "): more satellites per instance, chips_per_satellite or a smaller model"});
    const Accelerator& decode_chip = decode_accelerator(c, a);
    const std::int64_t decode_chips = static_cast<std::int64_t>(e.decode.satellites_per_instance) * e.chips_per_satellite;
    const std::int64_t hbm_tokens = kv_capacity_tokens(c.model, decode_chip, decode_chips);
    if (hbm_tokens < 1) {
        problems.push_back({"engines.decode.satellites_per_instance",
                            "the model's weights (" + gb(weights) + ") leave no room for a KV cache in a decode instance's HBM (" +
                                instance(e.decode, decode_chip) + "): more satellites per instance, chips_per_satellite or a smaller model"});
        return problems;
    }
    // The fewest tokens (prompt + output) a request can need.
    std::int64_t smallest = 2;  // lognormal draws are at least 1 token each
    if (!c.trace.empty()) {
        smallest = std::numeric_limits<std::int64_t>::max();
        for (const auto& r : c.trace) smallest = std::min(smallest, r.prompt_tokens + r.output_tokens);
    } else {
        const auto least = [](const LengthDistribution& d) {
            return d.kind == LengthKind::fixed || d.sigma <= 0.0 ? std::max<std::int64_t>(1, std::llround(d.mean_tokens))
                                                                 : std::int64_t{1};
        };
        smallest = least(c.requests.prompt) + least(c.requests.output);
    }
    const std::int64_t capacity = e.max_tokens > 0 ? e.max_tokens : hbm_tokens;
    if (capacity < smallest)
        problems.push_back({e.max_tokens > 0 ? "engines.max_tokens" : "engines.decode.satellites_per_instance",
                            "a decode instance holds " + std::to_string(capacity) + " KV tokens" +
                                (e.max_tokens > 0 ? std::string() : " (its HBM beside the weights)") +
                                ", fewer than any request needs (prompt + output: at least " + std::to_string(smallest) +
                                "): every request would be unservable"});
    return problems;
}

double sustainable_request_rate_per_s(const ServingConfig& c, const Accelerator& a) {
    const auto& e = c.engines;
    double prompt = c.requests.prompt.mean_tokens, output = c.requests.output.mean_tokens;
    double uncached = prompt * (1.0 - c.requests.cached_prefix_fraction);
    if (!c.trace.empty()) {
        prompt = output = uncached = 0.0;
        for (const auto& r : c.trace) {
            prompt += static_cast<double>(r.prompt_tokens);
            output += static_cast<double>(r.output_tokens);
            uncached += static_cast<double>(r.uncached_tokens());
        }
        const auto n = static_cast<double>(c.trace.size());
        prompt /= n, output /= n, uncached /= n;
    }
    const std::int64_t prefill_chips = static_cast<std::int64_t>(e.prefill.satellites_per_instance) * e.chips_per_satellite;
    const std::int64_t decode_chips = static_cast<std::int64_t>(e.decode.satellites_per_instance) * e.chips_per_satellite;
    // The dedicated group's chips may differ from the other prefill instances' (mixed hardware).
    const std::int32_t own = e.dedicated_prefill_accelerator ? c.dedicated_prefill_instances : 0;
    const auto group_rate = [&](std::int32_t instances, std::int32_t first) {
        if (instances <= 0) return 0.0;
        return static_cast<double>(instances) / prefill_time_s(c.model, prefill_accelerator(c, first, a), prefill_chips, e.mfu,
                                                               std::max<std::int64_t>(1, std::llround(uncached)));
    };
    const double prefill_rate = group_rate(e.prefill.instances - own, own) + group_rate(own, 0);
    const Accelerator& decode_chip = decode_accelerator(c, a);
    const double capacity = static_cast<double>(e.max_tokens > 0 ? e.max_tokens : kv_capacity_tokens(c.model, decode_chip, decode_chips));
    const double batch = std::max(1.0, std::min(static_cast<double>(e.max_batch), std::floor(capacity / (prompt + output))));
    const double step_s = decode_step_time_s(c.model, decode_chip, decode_chips, e.mfu, static_cast<std::int64_t>(batch),
                                             batch * (prompt + 0.5 * output));
    const double decode_rate = static_cast<double>(e.decode.instances) * batch / (std::max(1.0, output) * step_s);
    return std::min(prefill_rate, decode_rate);
}

}  // namespace skyfabric::workloads
