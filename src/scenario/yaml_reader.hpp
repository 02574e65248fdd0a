#pragma once
// Schema-checked reading of a YAML tree. Every value is read through here so that
// each error names file:line:column, the dotted key path and what was expected, and
// every key a section does not read is reported (with the nearest valid key).
#include <skyfabric/physics/enum_names.hpp>

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace skyfabric::scenario {

// A user's input error; the CLI prints what() and exits with status 2.
struct ScenarioError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Where a value came from, for messages: the file, or a --set override.
struct SourceInfo {
    std::string file_name;
    std::set<std::string> overridden_paths;  // dotted paths set with --set
};

class Section {
public:
    Section(YAML::Node node, std::string path, const SourceInfo* source);

    // Present with a value. A key given with no value (`mfu:`) is an error, reported by the
    // typed readers and by finish(): it never silently means the default.
    bool has(const std::string& key) const;
    // Fails when key is present with no value (null), saying what was expected; for keys that
    // has() decides between (alternatives) before a typed reader sees them.
    void refuse_empty(const std::string& key, const std::string& expected) const;
    bool is_scalar(const std::string& key) const { return has(key) && value(key).IsScalar(); }
    // Marks key as valid here without reading it (it was read another way).
    void allow(const std::string& key) { read_.insert(key); }
    const std::string& path() const { return path_; }

    double number(const std::string& key, double min, double max, std::optional<double> fallback = std::nullopt,
                  const char* unit = "");
    std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max,
                         std::optional<std::int64_t> fallback = std::nullopt);
    bool boolean(const std::string& key, std::optional<bool> fallback = std::nullopt);
    std::string text(const std::string& key, std::optional<std::string> fallback = std::nullopt);
    // One of `choices`; the message lists them.
    std::string choice(const std::string& key, const std::vector<std::string>& choices,
                       std::optional<std::string> fallback = std::nullopt);
    // The same over an enum's name table: its names, in its order, are the choices (or those of
    // `among` only, in that order).
    template <class Enum, std::size_t N>
    Enum choice(const std::string& key, const physics::EnumNames<Enum, N>& names,
                std::type_identity_t<std::optional<Enum>> fallback = std::nullopt) {
        return choice(key, names, names.values(), fallback);
    }
    template <class Enum, std::size_t N>
    Enum choice(const std::string& key, const physics::EnumNames<Enum, N>& names,
                std::type_identity_t<std::span<const Enum>> among, std::type_identity_t<std::optional<Enum>> fallback) {
        const auto name = fallback ? std::optional<std::string>(names.name(*fallback)) : std::nullopt;
        return *names.value(choice(key, names.names(among), name));
    }
    // A nested mapping (empty section if absent and optional).
    Section section(const std::string& key, bool required = false);
    // A sequence of nested nodes (for explicit lists).
    std::vector<YAML::Node> sequence(const std::string& key);
    std::vector<double> numbers(const std::string& key, std::size_t count, const char* unit = "");
    // A section over one item of a sequence, sharing this file's source information.
    Section item(const YAML::Node& node, const std::string& item_path) const { return Section(node, item_path, source_); }

    // Throws for every key present that nothing read, suggesting the nearest valid one.
    void finish();

    [[noreturn]] void fail(const std::string& key, const std::string& message) const;
    [[noreturn]] void fail_at(const YAML::Node& node, const std::string& key_path, const std::string& message) const;
    // A whole section that does not belong here: names its first leaf (the key the user wrote,
    // `workload.inference.model.layers`), not only the section, then the message.
    [[noreturn]] void fail_first_leaf(const std::string& key, const std::string& message) const;

private:
    // A required key is missing: fail(key, message), or, when a key present here looks like a
    // misspelling of it (`formaton:`), name that key at its position with the suggestion.
    [[noreturn]] void fail_missing(const std::string& key, const std::string& message) const;
    YAML::Node value(const std::string& key) const;
    std::string key_path(const std::string& key) const;

    YAML::Node node_;
    std::string path_;
    const SourceInfo* source_;
    std::set<std::string> read_;
};

// "file:line:col: " for a node (1-based), or "--set key: " for an overridden value.
std::string location(const YAML::Node& node, const std::string& key_path, const SourceInfo& source);

// Limits on what a scenario text may hold, checked before yaml-cpp builds its nodes (a node
// costs it hundreds of bytes): a file of a million explicit satellites is refused in a
// fraction of a second instead of after gigabytes.
struct DocumentLimits {
    std::size_t max_nodes = 3000000;            // about 200,000 explicit satellites with velocities
    std::size_t max_sequence_items = 200000;    // the satellite limit
};

// Checks the text before it is loaded: valid UTF-8 (YAML text is Unicode; a Latin-1 byte would
// otherwise fail only when the outputs are written), unique keys in every mapping (YAML requires
// it; yaml-cpp keeps the first silently) and the limits above. Throws ScenarioError naming
// file:line:column. A syntax error is left for YAML::Load to report.
void check_document(const std::string& yaml_text, const std::string& source_name, const DocumentLimits& limits = {});

// Throws ScenarioError("`what`: ...") unless text is valid UTF-8; `what` is the location prefix.
void check_utf8(const std::string& text, const std::string& what);

// Reads a whole input file, refusing what is not a regular file (a FIFO would block, /dev/zero
// never ends) and files over max_bytes, before reading them. Throws ScenarioError naming the path.
std::string read_input_file(const std::filesystem::path& path, std::size_t max_bytes, const std::string& what);

// Nearest of `candidates` to `word` by edit distance, or empty if none is close.
std::string nearest_key(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace skyfabric::scenario
