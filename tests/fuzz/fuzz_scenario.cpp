// libFuzzer target over the scenario loader, the --set parser, the scenario's `sweep:` block
// (as `sweep` and `validate` read it), the edge-list CSV parser (`--topology file:`) and the
// request-trace CSV parser (`workload.inference.arrivals.trace`) and the options of
// `link-budget` (its lines, in order: --distances entry, --aperture-m, --power-w, --wavelength-nm,
// --efficiency, --losses-db, --grid-ghz, --rate-gbps, --margin-db, --pointing-jitter-urad,
// --pointing-error-urad; what the range check accepts is put through the budget) and what `oem`
// reads from a run's result.h5 (fuzz_oem: the arrays' checks, --satellites, the epoch, the writer).
//
// Input: YAML text, optionally followed by a line "#--set" and then one `--set`
// argument per line (key.path=value). Every argument goes through parse_override, the
// ones it accepts are applied, and the result goes through load_scenario_text and, when
// it loads, node_count / initial_formation / initial_chief_state.
//
// The contract under test: hostile input ends in a ScenarioError (exit 2 in the CLI) —
// never a crash, a hang, a sanitizer report or any other exception (which the CLI would
// report as a run failure, exit 1). Anything else escaping aborts, and libFuzzer saves
// the input.
#include "cli/link_budget_ranges.hpp"
#include "cli/oem_checks.hpp"
#include "output/oem.hpp"
#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"
#include "sweep/sweep_plan.hpp"

#include <skyfabric/links/budget.hpp>
#include <skyfabric/workloads/serving.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using skyfabric::scenario::Override;
using skyfabric::scenario::ScenarioError;

constexpr std::string_view source_name = "/nonexistent/fuzz.yaml";

// Every refusal names where: "file:line:column: " or "--set key.path...".
bool has_location(const std::string& message) {
    if (message.rfind("--set ", 0) == 0) return true;
    if (message.rfind(source_name, 0) != 0) return false;
    std::size_t i = source_name.size();
    auto digits = [&] {
        const std::size_t start = ++i;  // skips the ':'
        while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) ++i;
        return i > start;
    };
    return i < message.size() && message[i] == ':' && digits() && i < message.size() && message[i] == ':' && digits() &&
           message.compare(i, 2, ": ") == 0;
}

// A refusal quotes at most ~80 characters of the input, escaped: short, and no control byte in it.
void check_quoted(std::string_view message, const char* what) {
    const bool control = std::any_of(message.begin(), message.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7F;
    });
    if (message.size() > 1000 || control) {
        std::fprintf(stderr, "fuzz_scenario: a %s refusal longer than 1000 bytes or with a control byte (%zu bytes)\n", what,
                     message.size());
        std::abort();
    }
}

// The input's lines as link-budget options: an accepted value is finite and in its range, and the
// budget over accepted values has a finite capacity and 0..planned channels closing.
void fuzz_link_budget(const std::string& input) {
    namespace cli = skyfabric::cli;
    std::vector<std::string> lines;
    for (std::size_t start = 0; start <= input.size() && lines.size() < 11;) {
        const auto end = input.find('\n', start);
        lines.push_back(input.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    double distance_m = 5e6;
    try {
        if (!lines.empty()) distance_m = cli::parse_distance_m(lines[0]);
    } catch (const ScenarioError&) {
    }
    skyfabric::links::OpticalTerminalParameters p;
    p.transceiver = *skyfabric::links::transceiver_preset("400zr");
    const std::pair<const cli::NumberRange*, double*> options[] = {
        {&cli::aperture_m_range, &p.aperture_m},         {&cli::power_w_range, &p.tx_power_w},
        {&cli::wavelength_nm_range, &p.wavelength_m},    {&cli::efficiency_range, &p.aperture_efficiency},
        {&cli::losses_db_range, &p.other_losses_db},     {&cli::grid_ghz_range, &p.dwdm.grid_spacing_hz},
        {&cli::rate_gbps_range, &p.transceiver.rate_bps}, {&cli::margin_db_range, &p.required_margin_db},
        {&cli::pointing_urad_range, &p.pointing_jitter_rad}, {&cli::pointing_urad_range, &p.pointing_static_error_rad}};
    const double scale[] = {1.0, 1.0, 1e-9, 1.0, 1.0, 1e9, 1e9, 1.0, 1e-6, 1e-6};  // to the SI field
    p.wavelength_m /= 1e-9;  // the defaults in the options' units, scaled back below
    p.dwdm.grid_spacing_hz /= 1e9;
    p.transceiver.rate_bps /= 1e9;
    p.pointing_jitter_rad /= 1e-6;
    p.pointing_static_error_rad /= 1e-6;
    for (std::size_t k = 0; k < std::size(options); ++k) {
        const auto& [range, field] = options[k];
        if (k + 1 < lines.size() && cli::number_error(lines[k + 1], *range).empty()) {
            const double x = std::stod(lines[k + 1]);
            if (!std::isfinite(x) || x < range->min || x > range->max) {
                std::fprintf(stderr, "fuzz_scenario: link-budget option %zu accepted %g outside its range\n", k, x);
                std::abort();
            }
            *field = x;
        }
        *field *= scale[k];
    }
    const auto b = skyfabric::links::LinkBudgetModel(p).at(distance_m);
    if (!(b.capacity_bps >= 0.0) || !std::isfinite(b.capacity_bps) || b.channels_closing < 0 ||
        b.channels_closing > b.channels_planned) {
        std::fprintf(stderr, "fuzz_scenario: link budget at %g m: capacity %g, channels %d/%d\n", distance_m, b.capacity_bps,
                     b.channels_closing, b.channels_planned);
        std::abort();
    }
}

// The input as what `oem` reads from a (damaged or tampered) result.h5: line 1 the --satellites
// text, line 2 the epoch_utc attribute, then one byte giving the satellites (1..4) and raw float64s:
// the times, then positions and velocities [T x N x 3]. The arrays go through oem's checks; what they
// accept (finite, in range, times increasing: checked again here) is written as an OEM with no
// nan or inf in it. A refusal names the file or --satellites and quotes at most ~80 characters; the
// writer refuses only an epoch that does not parse ("OEM: ...").
void fuzz_oem(const std::string& input) {
    namespace cli = skyfabric::cli;
    const auto first = input.find('\n');
    if (first == std::string::npos) return;
    const auto second = input.find('\n', first + 1);
    if (second == std::string::npos || second + 1 >= input.size()) return;
    const std::string satellites_text = input.substr(0, first), epoch = input.substr(first + 1, second - first - 1);
    const std::string_view raw = std::string_view(input).substr(second + 1);
    const std::int64_t n = 1 + static_cast<unsigned char>(raw[0]) % 4;
    std::vector<double> values((raw.size() - 1) / sizeof(double));
    if (!values.empty()) std::memcpy(values.data(), raw.data() + 1, values.size() * sizeof(double));
    const auto t = std::min<std::size_t>(values.size() / static_cast<std::size_t>(1 + 6 * n), 64);
    if (t == 0) return;
    const std::vector<double> time_s(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(t));
    const auto states = static_cast<std::ptrdiff_t>(t * static_cast<std::size_t>(3 * n));
    const std::vector<double> position(values.begin() + static_cast<std::ptrdiff_t>(t),
                                       values.begin() + static_cast<std::ptrdiff_t>(t) + states);
    const std::vector<double> velocity(values.begin() + static_cast<std::ptrdiff_t>(t) + states,
                                       values.begin() + static_cast<std::ptrdiff_t>(t) + 2 * states);
    std::vector<std::int64_t> satellites;
    try {
        cli::check_values("fuzz.h5", "/time_s", time_s, cli::oem_time_limit_s, "s", true);
        cli::check_values("fuzz.h5", "/formation/position_eci_m", position, cli::oem_position_limit_m, "m");
        cli::check_values("fuzz.h5", "/formation/velocity_eci_m_s", velocity, cli::oem_velocity_limit_m_s, "m/s");
        if (!satellites_text.empty()) satellites = cli::parse_satellites(satellites_text, n);
    } catch (const ScenarioError& e) {
        const std::string_view message = e.what();
        if (message.rfind("fuzz.h5: ", 0) != 0 && message.rfind("--satellites: ", 0) != 0) {
            std::fprintf(stderr, "fuzz_scenario: an oem refusal that names neither the file nor --satellites: %s\n", e.what());
            std::abort();
        }
        check_quoted(message.substr(0, std::min<std::size_t>(message.size(), 400)), "oem");
        if (message.size() > 400) {
            std::fprintf(stderr, "fuzz_scenario: an oem refusal of %zu bytes\n", message.size());
            std::abort();
        }
        return;
    }
    for (std::size_t i = 0; i < t; ++i)
        if (!std::isfinite(time_s[i]) || std::fabs(time_s[i]) > cli::oem_time_limit_s || (i > 0 && !(time_s[i] > time_s[i - 1]))) {
            std::fprintf(stderr, "fuzz_scenario: oem accepted time %g at %zu\n", time_s[i], i);
            std::abort();
        }
    for (const auto& [a, limit] : {std::pair{&position, cli::oem_position_limit_m}, std::pair{&velocity, cli::oem_velocity_limit_m_s}})
        for (const double v : *a)
            if (!std::isfinite(v) || std::fabs(v) > limit) {
                std::fprintf(stderr, "fuzz_scenario: oem accepted the state value %g\n", v);
                std::abort();
            }
    for (const auto s : satellites)
        if (s < 0 || s >= n) {
            std::fprintf(stderr, "fuzz_scenario: --satellites accepted %lld of %lld\n", static_cast<long long>(s), static_cast<long long>(n));
            std::abort();
        }
    skyfabric::output::OemInput in;
    in.epoch_utc = epoch;
    in.object_prefix = "FUZZ";
    in.creation_utc = "2027-01-01T00:00:00Z";
    in.time_s = time_s;
    in.position_m = position;
    in.velocity_m_s = velocity;
    in.satellite_count = n;
    in.satellites = satellites;
    std::ostringstream out;
    try {
        if (!skyfabric::output::write_oem(out, in)) std::abort();  // no stop flag: always whole
    } catch (const std::invalid_argument& e) {
        const std::string_view message = e.what();
        if (message.rfind("OEM: epoch '", 0) != 0 || message.size() > 400) {
            std::fprintf(stderr, "fuzz_scenario: write_oem refused with: %.400s\n", e.what());
            std::abort();
        }
        check_quoted(message, "oem epoch");
        return;
    }
    const std::string text = out.str();
    if (text.find("nan") != std::string::npos || text.find("inf") != std::string::npos) {
        std::fprintf(stderr, "fuzz_scenario: an OEM with nan or inf in it\n");
        std::abort();
    }
}

void run_one(const std::string& input) {
    static constexpr std::string_view marker = "#--set\n";
    std::string yaml = input;
    std::vector<Override> overrides;
    if (const auto at = input.find(marker); at != std::string::npos) {
        yaml = input.substr(0, at);
        std::string rest = input.substr(at + marker.size());
        std::size_t start = 0;
        while (start <= rest.size() && overrides.size() < 16) {
            const auto end = rest.find('\n', start);
            const std::string line = rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (!line.empty()) {
                try {
                    overrides.push_back(skyfabric::scenario::parse_override(line));
                } catch (const ScenarioError&) {
                    // a clean refusal of this argument; the rest still go on
                }
            }
            if (end == std::string::npos) break;
            start = end + 1;
        }
    }
    try {
        // A relative `topology: file:...` is resolved against this name's folder: keep
        // it somewhere that holds no edge lists.
        const auto sc = skyfabric::scenario::load_scenario_text(yaml, std::string(source_name), overrides);
        (void)skyfabric::scenario::node_count(sc);
        if (!sc.fabric) {
            (void)skyfabric::scenario::initial_chief_state(sc);
            (void)skyfabric::scenario::propagation_settings(sc);
        }
    } catch (const ScenarioError& e) {
        // The expected way to refuse input, as long as it says where.
        if (!has_location(e.what())) {
            std::fprintf(stderr, "fuzz_scenario: a ScenarioError without file:line:column or --set: %s\n", e.what());
            std::abort();
        }
    }
    try {
        (void)skyfabric::sweep::read_sweep_block(yaml, std::string(source_name));
    } catch (const ScenarioError& e) {
        if (!has_location(e.what())) {
            std::fprintf(stderr, "fuzz_scenario: a sweep-block refusal without file:line:column: %s\n", e.what());
            std::abort();
        }
    }
    try {
        // The same bytes as an edge list: a refusal names the file and the line.
        (void)skyfabric::workloads::parse_edge_list_csv(input, "fuzz.csv");
    } catch (const skyfabric::workloads::FabricSpecError& e) {
        if (std::string_view(e.what()).find("fuzz.csv") == std::string_view::npos) {
            std::fprintf(stderr, "fuzz_scenario: an edge-list refusal that does not name the file: %s\n", e.what());
            std::abort();
        }
        check_quoted(e.what(), "edge-list");
    }
    try {
        // And as a request trace: a refusal names the file, and every token count is in range.
        for (const auto& r : skyfabric::workloads::parse_request_trace_csv(input, "fuzz.csv")) {
            if (r.prompt_tokens < 1 || r.prompt_tokens > skyfabric::workloads::max_request_tokens || r.output_tokens < 1 ||
                r.output_tokens > skyfabric::workloads::max_request_tokens || r.cached_tokens < 0 ||
                r.cached_tokens > r.prompt_tokens || !(r.arrival_s >= 0.0)) {
                std::fprintf(stderr, "fuzz_scenario: a trace row out of range was accepted\n");
                std::abort();
            }
        }
    } catch (const skyfabric::workloads::RequestTraceError& e) {
        if (std::string_view(e.what()).find("fuzz.csv") == std::string_view::npos) {
            std::fprintf(stderr, "fuzz_scenario: a trace refusal that does not name the file: %s\n", e.what());
            std::abort();
        }
        check_quoted(e.what(), "trace");
    }
    fuzz_link_budget(input);
    fuzz_oem(input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 64 * 1024) return -1;  // scenarios are small; keep the search on structure
    const std::string input(reinterpret_cast<const char*>(data), size);
    try {
        run_one(input);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_scenario: an exception other than ScenarioError escaped: %s\n", e.what());
        std::abort();
    } catch (...) {
        std::fprintf(stderr, "fuzz_scenario: a non-std exception escaped\n");
        std::abort();
    }
    return 0;
}
