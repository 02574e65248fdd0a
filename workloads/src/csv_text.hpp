#pragma once
// Splitting and reading the cells of the small CSV inputs the workloads parse (edge lists, request
// traces): one way to trim, split and read a number, so that every file refuses the same things.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace skyfabric::workloads::csv {

inline std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

inline std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (;;) {
        const auto at = s.find(sep);
        out.push_back(s.substr(0, at));
        if (at == std::string_view::npos) break;
        s.remove_prefix(at + 1);
    }
    return out;
}

// A finite decimal number (a leading '+' allowed), nothing else in the cell.
inline std::optional<double> to_number(std::string_view s) {
    s = trim(s);
    if (s.empty()) return std::nullopt;
    if (s.front() == '+') s.remove_prefix(1);
    double v = 0.0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

// A whole number of magnitude at most 2e9.
inline std::optional<std::int64_t> to_integer(std::string_view s) {
    const auto v = to_number(s);
    if (!v || *v != std::floor(*v) || std::fabs(*v) > 2e9) return std::nullopt;
    return static_cast<std::int64_t>(*v);
}

}  // namespace skyfabric::workloads::csv
