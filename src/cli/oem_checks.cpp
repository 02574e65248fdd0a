// `skyfabric oem`'s checks of what it reads (oem_checks.hpp).
#include "cli/oem_checks.hpp"

#include "scenario/yaml_reader.hpp"

#include <cmath>
#include <cstdio>
#include <set>

namespace skyfabric::cli {

// Bad input quoted in a message: at most 80 characters, anything not printable ASCII as \xNN.
std::string shown(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size() && i < 80; ++i) {
        const auto u = static_cast<unsigned char>(text[i]);
        if (u < 0x20 || u >= 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            out += hex;
        } else {
            out += text[i];
        }
    }
    return text.size() > 80 ? out + "..." : out;
}

// "I,J,...": each a decimal index, none empty, none twice, each a satellite of the run.
std::vector<std::int64_t> parse_satellites(const std::string& text, std::int64_t count) {
    const std::string range = " (0.." + std::to_string(count - 1) + ")";
    std::vector<std::int64_t> out;
    std::set<std::int64_t> seen;
    for (std::size_t start = 0;;) {
        const std::size_t comma = text.find(',', start);
        const std::string entry = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (entry.empty())
            throw scenario::ScenarioError("--satellites: '" + shown(text) + "' has an empty entry (expected I,J,...)");
        if (entry.find_first_not_of("0123456789") != std::string::npos)
            throw scenario::ScenarioError("--satellites: '" + shown(entry) + "' is not a satellite index" + range);
        if (entry.size() > 18 || std::stoll(entry) >= count)
            throw scenario::ScenarioError("--satellites: " + shown(entry) + " is not a satellite of this run" + range);
        const std::int64_t s = std::stoll(entry);
        if (!seen.insert(s).second) throw scenario::ScenarioError("--satellites: " + entry + " is listed twice");
        out.push_back(s);
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

// Every value finite and within ±limit; times increasing.
void check_values(const std::string& file, const std::string& dataset, const std::vector<double>& values, double limit,
                  const char* unit, bool increasing) {
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = values[i];
        if (!std::isfinite(v) || std::fabs(v) > limit || (increasing && i > 0 && !(v > values[i - 1]))) {
            char text[200];
            std::snprintf(text, sizeof text, ": %s[%zu] is %g %s; oem takes finite values within +-%g %s%s", dataset.c_str(), i,
                          v, unit, limit, unit, increasing ? ", increasing" : "");
            throw scenario::ScenarioError(file + text + " (a damaged or altered file?)");
        }
    }
}

}  // namespace skyfabric::cli
