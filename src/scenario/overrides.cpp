// --set overrides: parsed from the command line and applied to the document before it is read.
#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/random.hpp>
#include <skyfabric/workloads/input_text.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <optional>
#include <regex>
#include <sstream>

namespace skyfabric::scenario {

Override parse_override(const std::string& argument) {
    const auto eq = argument.find('=');
    // Keys, and list indices after the first key (workloads.1.all_reduce).
    static const std::regex path_pattern(R"([A-Za-z_][A-Za-z0-9_]*(\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*)");
    if (eq == std::string::npos || eq == 0 || !std::regex_match(argument.substr(0, eq), path_pattern)) {
        throw ScenarioError("--set " + argument + ": expected key.path=value, e.g. --set orbit.altitude_km=550");
    }
    return {argument.substr(0, eq), argument.substr(eq + 1)};
}

std::vector<Override> overrides_replacing_orbit(const std::string& yaml_text, const std::string& source_name,
                                                std::vector<std::string>& ignored) {
    check_document(yaml_text, source_name);
    YAML::Node loaded;
    try {
        loaded = YAML::Load(yaml_text);
    } catch (const YAML::Exception&) {
        return {};
    }
    const YAML::Node& root = loaded;
    if (!root.IsMap()) return {};
    std::vector<Override> out;
    auto drop = [&](const std::string& path) {
        out.push_back({path, "", true});
        ignored.push_back(path);
    };
    for (const char* key : {"orbit", "formation", "dynamics", "station_keeping", "metrics", "links", "radiation", "power"})
        if (root[key]) drop(key);
    if (root["duration_orbits"]) {
        out.push_back({"duration_s", "0"});
        ignored.push_back("duration_orbits");
    }
    // A missing key reads as an invalid node, which only operator bool may be asked.
    const auto map_at = [](const YAML::Node& node, const char* key) {
        return node && node.IsMap() && node[key] && node[key].IsMap() ? node[key] : YAML::Node();
    };
    if (map_at(map_at(root, "workload"), "parallelism")["data"]) drop("workload.parallelism.data");
    return out;
}

}  // namespace skyfabric::scenario

namespace skyfabric::scenario::detail {
namespace {

void remove_key(YAML::Node root, const std::vector<std::string>& keys) {
    YAML::Node node = root;
    for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
        const YAML::Node& at = node;
        if (!at.IsMap() || !at[keys[i]]) return;
        node.reset(at[keys[i]]);
    }
    if (node.IsMap()) node.remove(keys.back());
}

}  // namespace

void apply_override(YAML::Node root, const Override& o) {
    std::vector<std::string> keys;
    std::stringstream parts(o.path);
    for (std::string k; std::getline(parts, k, '.');) keys.push_back(k);
    if (o.remove) {
        remove_key(root, keys);
        return;
    }
    check_utf8(o.value, "--set " + o.path);
    check_document(o.value, "--set " + o.path);
    YAML::Node value;
    try {
        value = YAML::Load(o.value);
    } catch (const YAML::Exception& e) {
        throw ScenarioError("--set " + o.path + ": cannot parse value " + workloads::quoted_input(o.value) + ": " + e.msg);
    }
    // A numeric key into a list is an entry of it (workloads.1 is the second job), never a new map key.
    const auto list_index = [&](const YAML::Node& list, const std::string& key) -> std::optional<std::size_t> {
        if (!list.IsSequence() || !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return std::nullopt;
        const auto index = key.size() > 9 ? list.size() : static_cast<std::size_t>(std::stoull(key));
        if (index >= list.size())
            throw ScenarioError("--set " + o.path + ": the list has " + std::to_string(list.size()) + " entries, numbered from 0; no entry " + key);
        return index;
    };
    YAML::Node node = root;
    const auto not_an_index = [&](const YAML::Node& list, std::size_t i) {
        throw ScenarioError("--set " + o.path + ": '" + (i > 0 ? keys[i - 1] : keys[i]) + "' is a list: give an entry's number, e.g. " +
                            (i > 0 ? keys[i - 1] : keys[i]) + ".0" + (list.size() > 0 ? "" : " (it is empty)"));
    };
    for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
        if (const auto index = list_index(node, keys[i])) {
            node.reset(node[*index]);
            continue;
        }
        if (node.IsSequence()) not_an_index(node, i);
        YAML::Node child = node[keys[i]];
        if (child.IsSequence()) {  // the next key must be one of its entries
            node.reset(child);
            continue;
        }
        if (child.IsDefined() && !child.IsNull() && !child.IsMap()) {
            throw ScenarioError("--set " + o.path + ": '" + keys[i] + "' is a value, not a section");
        }
        if (!child.IsDefined() || child.IsNull()) {
            node[keys[i]] = YAML::Node(YAML::NodeType::Map);
        }
        node.reset(node[keys[i]]);  // reset() re-points; operator= would overwrite the parent's content
    }
    if (const auto index = list_index(node, keys.back())) node[*index] = value;
    else if (node.IsSequence()) not_an_index(node, keys.size() - 1);
    else node[keys.back()] = value;
    // Keys that replace each other: overriding one removes the file's other, so
    // `--set duration_s=86400` works on a file that says duration_orbits.
    static const std::vector<std::pair<std::string, std::string>> alternatives = {
        {"duration_s", "duration_orbits"},
        {"orbit.altitude_km", "orbit.semi_major_axis_km"},
        {"orbit.ltan_h", "orbit.raan_deg"},
    };
    for (const auto& [a, b] : alternatives) {
        const std::string* other = o.path == a ? &b : o.path == b ? &a : nullptr;
        if (!other) continue;
        const auto dot = other->rfind('.');
        YAML::Node parent = root;
        if (dot != std::string::npos) parent.reset(root[other->substr(0, dot)]);
        if (parent.IsMap()) parent.remove(dot == std::string::npos ? *other : other->substr(dot + 1));
    }
}

}  // namespace skyfabric::scenario::detail
