#include "scenario/yaml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace skyfabric::scenario {

std::string location(const YAML::Node& node, const std::string& key_path, const SourceInfo& source) {
    for (const auto& p : source.overridden_paths) {
        // An override of this key or of one of its parents.
        if (key_path == p || key_path.rfind(p + ".", 0) == 0) return "--set " + p + ": ";
    }
    std::ostringstream out;
    out << source.file_name;
    if (node.IsDefined() && node.Mark().line >= 0) {
        out << ':' << node.Mark().line + 1 << ':' << node.Mark().column + 1;
    } else {
        // A node a --set made (a new section holds no position in the file): name the
        // override under it, else the file's start.
        for (const auto& p : source.overridden_paths) {
            if (p.rfind(key_path + ".", 0) == 0) return "--set " + p + ": ";
        }
        const auto dot = key_path.find('.');
        const std::string top = key_path.substr(0, dot);
        for (const auto& p : source.overridden_paths) {
            if (p == top || p.rfind(top + ".", 0) == 0) return "--set " + p + ": ";
        }
        out << ":1:1";
    }
    out << ": ";
    return out.str();
}

std::string nearest_key(const std::string& word, const std::vector<std::string>& candidates) {
    auto distance = [](const std::string& a, const std::string& b) {
        std::vector<std::size_t> row(b.size() + 1);
        for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i) {
            std::size_t diagonal = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j) {
                const std::size_t above = row[j];
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
                diagonal = above;
            }
        }
        return row[b.size()];
    };
    std::string best;
    std::size_t best_distance = std::numeric_limits<std::size_t>::max();
    for (const auto& c : candidates) {
        const std::size_t d = distance(word, c);
        if (d < best_distance) {
            best_distance = d;
            best = c;
        }
    }
    // Only suggest when the typo is plausible: at most a third of the word wrong.
    if (best_distance <= std::max<std::size_t>(2, word.size() / 3)) return best;
    return {};
}

Section::Section(YAML::Node node, std::string path, const SourceInfo* source)
    : node_(std::move(node)), path_(std::move(path)), source_(source) {
    if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
        fail_at(node_, path_.empty() ? "(top level)" : path_, "expected a mapping of keys to values");
    }
}

std::string Section::key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

bool Section::has(const std::string& key) const {
    return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

YAML::Node Section::value(const std::string& key) const {
    if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    return node_[key];
}

void Section::fail(const std::string& key, const std::string& message) const {
    const YAML::Node v = value(key);
    fail_at(v.IsDefined() ? v : node_, key_path(key), message);
}

void Section::fail_at(const YAML::Node& node, const std::string& key_path_text, const std::string& message) const {
    throw ScenarioError(location(node, key_path_text, *source_) + "key '" + key_path_text + "': " + message);
}

namespace {
std::string describe(const YAML::Node& v) {
    if (v.IsScalar()) return "'" + v.Scalar() + "'";
    if (v.IsSequence()) return "a list";
    if (v.IsMap()) return "a mapping";
    return "nothing";
}

std::string format_number(double x) {
    std::ostringstream out;
    out << x;
    return out.str();
}
}  // namespace

double Section::number(const std::string& key, double min, double max, std::optional<double> fallback,
                       const char* unit) {
    read_.insert(key);
    if (!has(key)) {
        if (fallback) return *fallback;
        fail(key, std::string("required number") + (*unit ? std::string(" in ") + unit : "") + " is missing");
    }
    const YAML::Node v = value(key);
    double x = 0.0;
    bool ok = v.IsScalar();
    if (ok) {
        const std::string& s = v.Scalar();
        std::size_t used = 0;
        try {
            x = std::stod(s, &used);
        } catch (const std::exception&) {
            ok = false;
        }
        ok = ok && used == s.size() && std::isfinite(x);
    }
    const std::string range = "[" + format_number(min) + ", " + format_number(max) + "]" +
                              (*unit ? std::string(" ") + unit : "");
    if (!ok) fail(key, "expected a finite number in " + range + ", got " + describe(v));
    if (x < min || x > max) fail(key, "value " + v.Scalar() + " is out of range " + range);
    return x;
}

std::int64_t Section::integer(const std::string& key, std::int64_t min, std::int64_t max,
                              std::optional<std::int64_t> fallback) {
    read_.insert(key);
    if (!has(key)) {
        if (fallback) return *fallback;
        fail(key, "required integer is missing");
    }
    const YAML::Node v = value(key);
    std::int64_t x = 0;
    bool ok = v.IsScalar();
    if (ok) {
        const std::string& s = v.Scalar();
        std::size_t used = 0;
        try {
            x = std::stoll(s, &used, 10);
        } catch (const std::exception&) {
            ok = false;
        }
        ok = ok && used == s.size();
    }
    const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (!ok) fail(key, "expected an integer in " + range + ", got " + describe(v));
    if (x < min || x > max) fail(key, "value " + v.Scalar() + " is out of range " + range);
    return x;
}

bool Section::boolean(const std::string& key, std::optional<bool> fallback) {
    read_.insert(key);
    if (!has(key)) {
        if (fallback) return *fallback;
        fail(key, "required true/false is missing");
    }
    const YAML::Node v = value(key);
    if (v.IsScalar()) {
        const std::string& s = v.Scalar();
        if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
        if (s == "false" || s == "False" || s == "no" || s == "off") return false;
    }
    fail(key, "expected true or false, got " + describe(v));
}

std::string Section::text(const std::string& key, std::optional<std::string> fallback) {
    read_.insert(key);
    if (!has(key)) {
        if (fallback) return *fallback;
        fail(key, "required text is missing");
    }
    const YAML::Node v = value(key);
    if (!v.IsScalar()) fail(key, "expected text, got " + describe(v));
    return v.Scalar();
}

std::string Section::choice(const std::string& key, const std::vector<std::string>& choices,
                            std::optional<std::string> fallback) {
    const std::string s = text(key, fallback);
    if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    const std::string near = nearest_key(s, choices);
    fail(key, "expected one of " + list + ", got '" + s + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

Section Section::section(const std::string& key, bool required) {
    read_.insert(key);
    if (!has(key)) {
        if (required) fail(key, "required section is missing");
        return Section(YAML::Node(YAML::NodeType::Undefined), key_path(key), source_);
    }
    return Section(value(key), key_path(key), source_);
}

std::vector<YAML::Node> Section::sequence(const std::string& key) {
    read_.insert(key);
    if (!has(key)) return {};
    const YAML::Node v = value(key);
    if (!v.IsSequence()) fail(key, "expected a list, got " + describe(v));
    return {v.begin(), v.end()};
}

std::vector<double> Section::numbers(const std::string& key, std::size_t count, const char* unit) {
    const auto items = sequence(key);
    if (items.size() != count) {
        fail(key, "expected a list of " + std::to_string(count) + " numbers" +
                      (*unit ? std::string(" in ") + unit : ""));
    }
    std::vector<double> out;
    for (const auto& item : items) {
        std::size_t used = 0;
        double x = 0.0;
        bool ok = item.IsScalar();
        if (ok) {
            try {
                x = std::stod(item.Scalar(), &used);
            } catch (const std::exception&) {
                ok = false;
            }
            ok = ok && used == item.Scalar().size() && std::isfinite(x);
        }
        if (!ok) fail_at(item, key_path(key), "expected a finite number, got " + describe(item));
        out.push_back(x);
    }
    return out;
}

void Section::finish() {
    if (!node_.IsMap()) return;
    const std::vector<std::string> valid(read_.begin(), read_.end());
    for (const auto& entry : node_) {
        // A key that is itself a list or mapping (`? [a, b]`) is no valid key either.
        const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : describe(entry.first);
        if (read_.count(key)) continue;
        const std::string near = nearest_key(key, valid);
        std::string valid_list;
        for (const auto& v : valid) valid_list += (valid_list.empty() ? "" : ", ") + v;
        fail_at(entry.first, key_path(key),
                "unknown key" + (near.empty() ? "" : " (did you mean '" + near + "'?)") + "; valid keys here: " +
                    valid_list);
    }
}

}  // namespace skyfabric::scenario
