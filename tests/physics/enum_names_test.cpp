// physics::EnumNames, the name table every library's enums use (physics/enum_names.hpp).
#include <skyfabric/physics/enum_names.hpp>

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace {

using skyfabric::physics::enum_names;

enum class Colour : unsigned char { red = 0, green = 1, blue = 2 };
// Listed in another order than the values, as links::topology_policy_names is.
constexpr auto colour_names = enum_names<Colour>({{Colour::green, "green"}, {Colour::red, "red"}, {Colour::blue, "blue"}});

// Usable at compile time (the tables are constexpr).
static_assert(colour_names.size() == 3);
static_assert(std::string_view(colour_names.name(Colour::blue)) == "blue");
static_assert(colour_names.value("red") == Colour::red);
static_assert(!colour_names.value("Red"));

TEST(EnumNames, NameAndValueBothWays) {
    for (const auto c : {Colour::red, Colour::green, Colour::blue}) EXPECT_EQ(colour_names.value(colour_names.name(c)), c);
    EXPECT_STREQ(colour_names.name(static_cast<Colour>(7)), "unknown");
    EXPECT_EQ(colour_names.value(""), std::nullopt);
    EXPECT_EQ(colour_names.value("blue "), std::nullopt);
}

TEST(EnumNames, ListsInTableOrderAndNumbersInValueOrder) {
    EXPECT_EQ(colour_names.names(), (std::vector<std::string>{"green", "red", "blue"}));
    EXPECT_EQ(colour_names.values(), (std::array{Colour::green, Colour::red, Colour::blue}));
    const std::array subset{Colour::blue, Colour::red};
    EXPECT_EQ(colour_names.names(subset), (std::vector<std::string>{"blue", "red"}));
    EXPECT_EQ(colour_names.joined(), "green, red, blue");
    EXPECT_EQ(colour_names.joined(", ", " or "), "green, red or blue");
    EXPECT_EQ(colour_names.numbered(), "0=red,1=green,2=blue");
}

TEST(EnumNames, OneEntryTable) {
    enum class Only { one };
    constexpr auto only = enum_names<Only>({{Only::one, "one"}});
    EXPECT_EQ(only.joined(", ", " or "), "one");
    EXPECT_EQ(only.numbered(), "0=one");
}

// A bad table does not compile; at run time the same checks throw.
TEST(EnumNames, RefusesGapsRepeatsAndEmptyNames) {
    EXPECT_THROW(enum_names<Colour>({{Colour::red, "red"}, {Colour::blue, "blue"}}), std::logic_error);
    EXPECT_THROW(enum_names<Colour>({{Colour::red, "red"}, {Colour::red, "rouge"}}), std::logic_error);
    EXPECT_THROW(enum_names<Colour>({{Colour::red, "red"}, {Colour::green, "red"}}), std::logic_error);
    EXPECT_THROW(enum_names<Colour>({{Colour::red, ""}}), std::logic_error);
}

}  // namespace
