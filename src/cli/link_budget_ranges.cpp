#include "cli/link_budget_ranges.hpp"

#include "scenario/yaml_reader.hpp"

#include <skyfabric/workloads/input_text.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <utility>

namespace skyfabric::cli {

namespace {

// The number text starts with and how many characters it took (0: none).
std::pair<double, std::size_t> leading_number(const std::string& text) {
    try {
        std::size_t used = 0;
        const double x = std::stod(text, &used);
        return {x, used};
    } catch (const std::exception&) {
        return {0.0, 0};
    }
}

bool within(double x, const NumberRange& r) { return std::isfinite(x) && x >= r.min && x <= r.max; }

}  // namespace

std::string range_text(const NumberRange& r) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "[%g, %g]%s%s", r.min, r.max, *r.unit ? " " : "", r.unit);
    return buf;
}

std::string number_error(const std::string& text, const NumberRange& r) {
    const auto [x, used] = leading_number(text);
    if (used == 0 || used != text.size() || !within(x, r))
        return "expected a finite number in " + range_text(r) + ", got " + workloads::quoted_input(text);
    return {};
}

double parse_distance_m(const std::string& item) {
    const auto [value, used] = leading_number(item);
    const std::string unit = used ? item.substr(used) : "";
    double scale = 0.0;
    if (unit.empty() || unit == "m") scale = 1.0;
    else if (unit == "km") scale = 1e3;
    const double metres = value * scale;
    if (used == 0 || scale == 0.0 || !within(metres, distance_m_range)) {
        throw scenario::ScenarioError("--distances: " + workloads::quoted_input(item) + " is not a distance in " +
                                      range_text(distance_m_range) + " (e.g. 200, 200m, 5000km)");
    }
    return metres;
}

}  // namespace skyfabric::cli
