#pragma once
// Splitting and reading the cells of the small CSV inputs the workloads parse (edge lists, request
// traces): one way to trim, split and read a number, so that every file refuses the same things.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
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

// The text without a leading UTF-8 byte-order mark (spreadsheets save CSV with one).
inline std::string_view without_bom(std::string_view s) {
    if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
    return s;
}

// 1-based column of each cell's first non-blank character, for messages (file:line:column).
inline std::vector<std::size_t> cell_columns(const std::vector<std::string_view>& cells) {
    std::vector<std::size_t> out;
    std::size_t offset = 1;
    for (const auto c : cells) {
        const auto lead = c.find_first_not_of(" \t");
        out.push_back(offset + (lead == std::string_view::npos ? 0 : lead));
        offset += c.size() + 1;
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

// A whole number of magnitude at most max_magnitude (2e9: a node id).
inline std::optional<std::int64_t> to_integer(std::string_view s, double max_magnitude = 2e9) {
    const auto v = to_number(s);
    if (!v || *v != std::floor(*v) || std::fabs(*v) > max_magnitude) return std::nullopt;
    return static_cast<std::int64_t>(*v);
}

// A finite decimal number in [min, max]: the one range check of every number a CSV input holds,
// so that no value whose derived quantities overflow (1e300 Gbit/s, 1e300 tokens) gets in.
inline std::optional<double> to_number_in(std::string_view s, double min, double max) {
    const auto v = to_number(s);
    if (!v || *v < min || *v > max) return std::nullopt;
    return v;
}

// "[1e-06, 1e+07]": a range as the scenario loader writes it.
inline std::string range_text(double min, double max) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "[%g, %g]", min, max);
    return buf;
}

}  // namespace skyfabric::workloads::csv
