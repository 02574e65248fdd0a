#include "sweep/sweep_plan.hpp"

#include "scenario/yaml_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdio>

namespace skyfabric::sweep {

using scenario::ScenarioError;

namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
}

// Shortest text that reads back as the same double.
std::string number_text(double x) {
    char buffer[64];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, x);
    return std::string(buffer, r.ptr);
}

// A YAML node as the text --set would take for it.
std::string node_text(const YAML::Node& node) {
    if (node.IsScalar()) return node.Scalar();
    YAML::Emitter out;
    out << YAML::Flow << node;
    return out.c_str();
}

std::string safe_name(const std::string& s) {
    std::string out;
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '_' || c == '-' || c == '=' || c == '+';
        out += ok ? c : '_';
    }
    return out;
}

std::string last_component(const std::string& key) {
    const auto dot = key.rfind('.');
    return dot == std::string::npos ? key : key.substr(dot + 1);
}

// Empty when `key` can be swept; else what is wrong with it. A word close to a pseudo-key is taken
// for a misspelt one (no top-level scenario key is near `satellites`): the points would otherwise
// only fail when loaded, as an unknown scenario key.
std::string key_problem(const std::string& key) {
    if (key == satellites_key) return {};
    if (key.find('.') == std::string::npos) {
        const std::string near = scenario::nearest_key(key, {satellites_key});
        if (!near.empty()) return "unknown key (did you mean the sweep's pseudo-key '" + near + "'?)";
    }
    // parse_override validates the path; the value is irrelevant here.
    try {
        (void)scenario::parse_override(key + "=0");
    } catch (const ScenarioError&) {
        return "not a key path (expected e.g. formation.radius_m)";
    }
    return {};
}

}  // namespace

Axis parse_vary_argument(const std::string& argument) {
    const auto eq = argument.find('=');
    if (eq == std::string::npos || eq == 0) {
        throw ScenarioError("--vary " + argument + ": expected key.path=v1,v2,..., e.g. --vary formation.radius_m=500,1000");
    }
    Axis axis;
    axis.key = trim(argument.substr(0, eq));
    if (const std::string problem = key_problem(axis.key); !problem.empty())
        throw ScenarioError("--vary " + argument + ": '" + axis.key + "': " + problem);
    const std::string list = argument.substr(eq + 1);
    int depth = 0;
    std::string current;
    for (char c : list) {
        if (c == '[' || c == '{') ++depth;
        if (c == ']' || c == '}') --depth;
        if (c == ',' && depth == 0) {
            axis.values.push_back(trim(current));
            current.clear();
        } else {
            current += c;
        }
    }
    axis.values.push_back(trim(current));
    for (const auto& v : axis.values) {
        if (v.empty()) throw ScenarioError("--vary " + argument + ": an empty value in the list");
    }
    return axis;
}

SweepSpec read_sweep_block(const std::string& yaml_text, const std::string& source_name) {
    SweepSpec spec;
    YAML::Node root;
    try {
        root = YAML::Load(yaml_text);
    } catch (const YAML::Exception&) {
        return spec;  // the scenario loader reports syntax errors
    }
    if (!root.IsMap() || !root["sweep"].IsDefined() || root["sweep"].IsNull()) return spec;
    const scenario::SourceInfo source{source_name, {}};
    scenario::Section sweep(root["sweep"], "sweep", &source);
    spec.zip = sweep.boolean("zip", false);
    if (!sweep.has("vary")) sweep.fail("vary", "required: a mapping of key.path to a list of values");
    const YAML::Node vary = root["sweep"]["vary"];
    scenario::Section vary_section(vary, "sweep.vary", &source);  // checks it is a mapping
    sweep.allow("vary");
    for (const auto& entry : vary) {
        Axis axis;
        // A list or mapping as the key (`[a, b]: [1, 2]`) is no key path.
        if (!entry.first.IsScalar()) {
            vary_section.fail_at(entry.first, "sweep.vary",
                                 "expected a key path (e.g. formation.radius_m) before each list of values, got " +
                                     std::string(entry.first.IsSequence() ? "a list" : "a mapping"));
        }
        axis.key = entry.first.Scalar();
        const std::string path = "sweep.vary." + axis.key;
        if (const std::string problem = key_problem(axis.key); !problem.empty()) vary_section.fail_at(entry.first, path, problem);
        const YAML::Node values = entry.second;
        if (values.IsSequence()) {
            for (const auto& v : values) {
                if (!v.IsDefined() || v.IsNull()) vary_section.fail_at(v, path, "a value in the list is empty");
                axis.values.push_back(node_text(v));
            }
        } else if (values.IsScalar()) {
            axis.values.push_back(values.Scalar());
        } else {
            vary_section.fail_at(entry.second, path, "expected a list of values, e.g. [500, 1000]");
        }
        if (axis.values.empty()) vary_section.fail_at(entry.second, path, "the list of values is empty");
        for (const auto& a : spec.axes) {
            if (a.key == axis.key) vary_section.fail_at(entry.first, path, "given twice");
        }
        spec.axes.push_back(std::move(axis));
    }
    sweep.finish();
    return spec;
}

SweepSpec merge(SweepSpec spec, const std::vector<Axis>& cli, bool zip_flag) {
    for (std::size_t i = 0; i < cli.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (cli[j].key == cli[i].key)
                throw ScenarioError("--vary " + cli[i].key + " is given twice; give every value in one list: --vary " +
                                    cli[i].key + "=V1,V2,...");
        }
    }
    for (const auto& axis : cli) {
        bool replaced = false;
        for (auto& a : spec.axes) {
            if (a.key == axis.key) {
                a = axis;
                replaced = true;
            }
        }
        if (!replaced) spec.axes.push_back(axis);
    }
    spec.zip = spec.zip || zip_flag;
    return spec;
}

BaseFormation base_formation(const scenario::Scenario& base) {
    BaseFormation b;
    b.satellites = scenario::initial_formation(base).size();
    b.radius_m = base.formation.radius_m;
    b.layout = base.formation.layout;
    b.radial_pitch_m = base.formation.radial_pitch_m;
    b.along_track_pitch_m = base.formation.along_track_pitch_m;
    b.pitch_m = base.formation.pitch_m;
    return b;
}

std::string axis_column(const Axis& axis) {
    return axis.key == satellites_key ? std::string("satellites_requested") : axis.key;
}

std::vector<Point> expand(const SweepSpec& spec, const BaseFormation& base) {
    if (spec.axes.empty()) {
        throw ScenarioError("nothing to sweep: give --vary key.path=v1,v2,... or a sweep: { vary: {...} } block");
    }
    std::size_t count = 1;
    if (spec.zip) {
        count = spec.axes.front().values.size();
        for (const auto& a : spec.axes) {
            if (a.values.size() != count) {
                std::string sizes;
                for (const auto& b : spec.axes) {
                    sizes += (sizes.empty() ? "" : ", ") + b.key + " has " + std::to_string(b.values.size());
                }
                throw ScenarioError("--zip needs lists of equal length: " + sizes);
            }
        }
    } else {
        for (const auto& a : spec.axes) count *= a.values.size();
    }
    if (count > 1000000) throw ScenarioError("the sweep has " + std::to_string(count) + " points; at most 1,000,000");

    int satellites_axis = -1, radius_axis = -1;
    for (std::size_t i = 0; i < spec.axes.size(); ++i) {
        if (spec.axes[i].key == satellites_key) satellites_axis = static_cast<int>(i);
        if (spec.axes[i].key == "formation.radius_m") radius_axis = static_cast<int>(i);
    }
    if (satellites_axis >= 0) {
        if (base.layout == scenario::FormationLayout::explicit_states) {
            throw ScenarioError("--vary satellites: the base scenario's formation is an explicit list; "
                                "satellites can be swept with layout suncatcher_lattice or hexagonal");
        }
        if (base.satellites == 0) throw ScenarioError("--vary satellites: the base formation has no satellites");
    }

    const std::size_t width = std::max<std::size_t>(4, std::to_string(count - 1).size());
    std::vector<Point> points(count);
    for (std::size_t p = 0; p < count; ++p) {
        Point& point = points[p];
        point.index = p;
        // Cartesian order: the last axis varies fastest, like nested loops.
        std::size_t rest = p;
        std::vector<std::size_t> pick(spec.axes.size());
        for (std::size_t i = spec.axes.size(); i-- > 0;) {
            const std::size_t n = spec.axes[i].values.size();
            pick[i] = spec.zip ? p : rest % n;
            if (!spec.zip) rest /= n;
        }
        for (std::size_t i = 0; i < spec.axes.size(); ++i) point.values.push_back(spec.axes[i].values[pick[i]]);

        if (satellites_axis >= 0) {
            const std::string& text = point.values[static_cast<std::size_t>(satellites_axis)];
            double n = 0.0;
            const auto r = std::from_chars(text.data(), text.data() + text.size(), n);
            if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !(n >= 1.0) || !std::isfinite(n) ||
                n != std::floor(n)) {
                point.error = "satellites: expected a whole number of satellites >= 1, got '" + text + "'";
            } else {
                const double scale = std::sqrt(n / static_cast<double>(base.satellites));
                if (radius_axis < 0) {
                    point.derived.push_back({"formation.radius_m", number_text(base.radius_m * scale)});
                } else {
                    // The radius is given: pack the lattice tighter instead, N ∝ (R/pitch)².
                    const std::string& rtext = point.values[static_cast<std::size_t>(radius_axis)];
                    double radius = 0.0;
                    const auto rr = std::from_chars(rtext.data(), rtext.data() + rtext.size(), radius);
                    if (rr.ec != std::errc() || rr.ptr != rtext.data() + rtext.size() || !(radius > 0.0)) {
                        point.error = "satellites: formation.radius_m '" + rtext +
                                      "' is not a positive number, so the pitch cannot be scaled";
                    } else {
                        const double k = (radius / base.radius_m) / scale;
                        if (base.layout == scenario::FormationLayout::hexagonal) {
                            point.derived.push_back({"formation.pitch_m", number_text(base.pitch_m * k)});
                        } else {
                            point.derived.push_back({"formation.radial_pitch_m", number_text(base.radial_pitch_m * k)});
                            point.derived.push_back(
                                {"formation.along_track_pitch_m", number_text(base.along_track_pitch_m * k)});
                        }
                    }
                }
            }
        }
        point.overrides = point.derived;
        for (std::size_t i = 0; i < spec.axes.size(); ++i) {
            if (static_cast<int>(i) == satellites_axis) continue;
            point.overrides.push_back({spec.axes[i].key, point.values[i]});
        }

        char prefix[32];
        std::snprintf(prefix, sizeof prefix, "%0*zu", static_cast<int>(width), p);
        std::string name = prefix;
        for (std::size_t i = 0; i < spec.axes.size(); ++i) {
            name += "-" + safe_name(last_component(spec.axes[i].key) + "=" + point.values[i]);
        }
        if (name.size() > 96) name.resize(96);
        point.name = name;
    }
    return points;
}

}  // namespace skyfabric::sweep
