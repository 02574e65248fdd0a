// Text from outside as messages show it (input_text.hpp): well-formed UTF-8 found byte by byte, other
// bytes escaped, long input cut with its length.
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include <skyfabric/workloads/input_text.hpp>

namespace sw = skyfabric::workloads;

TEST(InputText, WellFormedUtf8IsKeptAndEveryOtherByteEscaped) {
    using namespace std::string_view_literals;
    EXPECT_EQ(sw::utf8_sequence_length("a", 0), 1u);
    EXPECT_EQ(sw::utf8_sequence_length("\xC3\xA9", 0), 2u);          // é
    EXPECT_EQ(sw::utf8_sequence_length("\xE2\x82\xAC", 0), 3u);      // €
    EXPECT_EQ(sw::utf8_sequence_length("\xF0\x9F\x9B\xB0", 0), 4u);  // a satellite emoji
    EXPECT_EQ(sw::utf8_sequence_length("\xC0\xAF", 0), 0u);          // overlong '/'
    EXPECT_EQ(sw::utf8_sequence_length("\xED\xA0\x80", 0), 0u);      // a UTF-16 surrogate
    EXPECT_EQ(sw::utf8_sequence_length("\xF4\x90\x80\x80", 0), 0u);  // above U+10FFFF
    EXPECT_EQ(sw::utf8_sequence_length("\xE2\x82", 0), 0u);          // cut short
    EXPECT_FALSE(sw::first_invalid_utf8("caf\xC3\xA9").has_value());
    EXPECT_EQ(sw::first_invalid_utf8("ab\xFF" "cd"), 2u);
    EXPECT_EQ(sw::utf8_escaped("ab\xFF" "c\xC3\xA9"), "ab\\xFFc\xC3\xA9");
    EXPECT_EQ(sw::utf8_escaped("plain"), "plain");
}

TEST(InputText, QuotedInputShowsPrintableAsciiAndCutsLongText) {
    EXPECT_EQ(sw::quoted_input("ring"), "'ring'");
    EXPECT_EQ(sw::quoted_input("a\tb\\c"), "'a\\x09b\\\\c'");
    EXPECT_EQ(sw::quoted_input("\xEF\xBB\xBFx"), "'\\xEF\\xBB\\xBFx'");  // a byte-order mark, as bytes
    const std::string long_text(100, 'z');
    EXPECT_EQ(sw::quoted_input(long_text, 10), "'zzzzzzzzzz'… (100 bytes)");
    EXPECT_EQ(sw::quoted_input(long_text, 100), "'" + long_text + "'");
}
