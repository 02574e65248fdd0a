#pragma once
// A settings struct's fields by name, for its canonical JSON (settings_hash.hpp), with a compile-time
// check that the list names every field: a field added to the struct but not to its
// SKYFABRIC_SETTINGS_FIELDS line stops the build, so the settings hash cannot silently miss a setting.
//
//   SKYFABRIC_SETTINGS_FIELDS(UtcEpoch, year, month, day, hour, minute, second)
//
// defines to_json(json&, const UtcEpoch&) writing {"year": ..., ...}. It must be expanded in the
// struct's own namespace (nlohmann finds to_json by argument-dependent lookup); the functions are
// static, so each translation unit that expands a line has its own.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string_view>

namespace skyfabric::scenario::fields {

// Converts to any field type: T{field_initialiser{}, ...} compiles exactly while there are no more
// initialisers than T has fields (T an aggregate). Never called: used only in unevaluated checks.
struct field_initialiser {
    template <class T>
    constexpr operator T&() const noexcept {
        return *static_cast<T*>(nullptr);
    }
    template <class T>
    constexpr operator T&&() const noexcept {
        return static_cast<T&&>(*static_cast<T*>(nullptr));
    }
};

// The number of fields of the aggregate T (base classes and static members aside).
template <class T, class... Initialisers>
consteval std::size_t field_count() {
    if constexpr (requires { T{Initialisers{}..., field_initialiser{}}; })
        return field_count<T, Initialisers..., field_initialiser>();
    else
        return sizeof...(Initialisers);
}

// The names in a macro's stringified list "a, b, c": its commas plus one.
consteval std::size_t names_listed(std::string_view list) {
    std::size_t n = 1;
    for (const char c : list) n += c == ',' ? 1 : 0;
    return n;
}

}  // namespace skyfabric::scenario::fields

#define SKYFABRIC_SETTINGS_FIELDS(Type, ...)                                                                     \
    [[maybe_unused]] static void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {         \
        static_assert(::skyfabric::scenario::fields::field_count<Type>() ==                                     \
                          ::skyfabric::scenario::fields::names_listed(#__VA_ARGS__),                            \
                      #Type ": its SKYFABRIC_SETTINGS_FIELDS line must name every field of the struct");        \
        NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                                \
    }
