#pragma once
// One name table per enum, beside the enum in the library that owns it: to_string, the scenario
// loader's choices and its messages, and the HDF5 `*_names` attributes all read it, so a name is
// written once. Here, in the lowest library, so that every library can use it.
//
//   inline constexpr auto backend_names = physics::enum_names<Backend>({
//       {Backend::automatic, "auto"}, {Backend::cpu, "cpu"}, {Backend::cuda, "cuda"}});
//
// The entries are in the order the names are listed to a user (choices, "expected one of ...").
// Their values must be 0 .. N-1, each once, and their names distinct and not empty: a table that
// breaks this does not compile (the constexpr construction throws).
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace skyfabric::physics {

template <class Enum>
struct EnumName {
    Enum value;
    const char* name;  // a literal: callers that return const char* hand it on
};

template <class Enum, std::size_t N>
struct EnumNames {
    std::array<EnumName<Enum>, N> entries;  // in listing order

    static constexpr std::size_t size() { return N; }

    // "unknown" for a value outside the table (a cast from a bad integer).
    constexpr const char* name(Enum value) const {
        for (const auto& e : entries)
            if (e.value == value) return e.name;
        return "unknown";
    }
    constexpr std::optional<Enum> value(std::string_view name) const {
        for (const auto& e : entries)
            if (name == e.name) return e.value;
        return std::nullopt;
    }
    constexpr std::array<Enum, N> values() const {
        std::array<Enum, N> out{};
        for (std::size_t i = 0; i < N; ++i) out[i] = entries[i].value;
        return out;
    }
    // The names in listing order; of `subset` only, in its order, when given.
    std::vector<std::string> names() const { return names(values()); }
    std::vector<std::string> names(std::span<const Enum> subset) const {
        std::vector<std::string> out;
        for (const Enum v : subset) out.emplace_back(name(v));
        return out;
    }
    // "a, b, c", or "a, b or c" with last_separator " or ".
    std::string joined(std::string_view separator = ", ", std::string_view last_separator = ", ") const {
        std::string out;
        for (std::size_t i = 0; i < N; ++i) {
            if (i > 0) out += i + 1 == N ? last_separator : separator;
            out += entries[i].name;
        }
        return out;
    }
    // "0=a,1=b,..." in value order: the HDF5 `*_names` attributes (docs/output-format.md).
    std::string numbered() const {
        std::string out;
        for (std::size_t v = 0; v < N; ++v)
            out += (v ? "," : "") + std::to_string(v) + "=" + name(static_cast<Enum>(v));
        return out;
    }
};

template <class Enum, std::size_t N>
constexpr EnumNames<Enum, N> enum_names(const EnumName<Enum> (&entries)[N]) {
    EnumNames<Enum, N> table{};
    std::array<bool, N> seen{};
    for (std::size_t i = 0; i < N; ++i) {
        const auto v = static_cast<std::size_t>(entries[i].value);
        if (v >= N || seen[v]) throw std::logic_error("enum_names: values must be 0 .. N-1, each once");
        seen[v] = true;
        const std::string_view name = entries[i].name;
        if (name.empty()) throw std::logic_error("enum_names: an empty name");
        for (std::size_t j = 0; j < i; ++j)
            if (name == entries[j].name) throw std::logic_error("enum_names: a name twice");
        table.entries[i] = entries[i];
    }
    return table;
}

}  // namespace skyfabric::physics
