#pragma once
// Text from outside (a cell of a trace, a scenario value, a path) as messages and JSON may show
// it: at most ~80 visible characters, every byte that is not printable ASCII escaped, and byte
// strings that are not UTF-8 made so. Header-only: the scenario loader, the CLI and the parsers
// of the model libraries all quote bad input the same way.
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace skyfabric::workloads {

// Length of the well-formed UTF-8 sequence at s[i], or 0 when the byte there starts none.
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (no overlongs, surrogates, > U+10FFFF)
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return 0;
    if (i + n > s.size()) return 0;
    if (b(i + 1) < lo || b(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
    return n;
}

// Offset of the first byte that is not part of well-formed UTF-8, if any.
inline std::optional<std::size_t> first_invalid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_sequence_length(s, i);
        if (n == 0) return i;
        i += n;
    }
    return std::nullopt;
}

// s as valid UTF-8: well-formed sequences kept, every other byte written as the text \xNN.
inline std::string utf8_escaped(std::string_view s) {
    if (!first_invalid_utf8(s)) return std::string(s);
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_sequence_length(s, i);
        if (n == 0) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(s[i]));
            out += hex;
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

// s in single quotes for a message: printable ASCII as it is, every other byte (control
// characters, a byte-order mark, binary) as \xNN, at most max_visible characters of s, then
// "…" and how many bytes there were.
inline std::string quoted_input(std::string_view s, std::size_t max_visible = 80) {
    std::string out = "'";
    std::size_t shown = 0, i = 0;
    for (; i < s.size() && shown < max_visible; ++i, ++shown) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            out += static_cast<char>(c);
        } else if (c == '\\') {
            out += "\\\\";
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02X", c);
            out += hex;
        }
    }
    out += "'";
    if (i < s.size()) out += "… (" + std::to_string(s.size()) + " bytes)";
    return out;
}

}  // namespace skyfabric::workloads
