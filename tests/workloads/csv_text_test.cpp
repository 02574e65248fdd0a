// The CSV cells of the workloads' small inputs (csv_text.hpp): trimming, splitting, columns for
// messages, and what a number cell accepts and refuses.
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/csv_text.hpp>

namespace csv = skyfabric::workloads::csv;

TEST(CsvText, CellsAreSplitTrimmedAndLocatedByColumn) {
    EXPECT_EQ(csv::trim(" \t 12 \r"), "12");
    EXPECT_EQ(csv::trim("   "), "");
    const std::vector<std::string_view> cells = csv::split("a, b ,,  c", ',');
    ASSERT_EQ(cells.size(), 4u);
    EXPECT_EQ(cells[0], "a");
    EXPECT_EQ(cells[1], " b ");
    EXPECT_EQ(cells[2], "");
    EXPECT_EQ(cells[3], "  c");
    // 1-based columns of each cell's first non-blank character: a at 1, b at 4, the empty cell at its
    // start (7), c at 10.
    EXPECT_EQ(csv::cell_columns(cells), (std::vector<std::size_t>{1, 4, 7, 10}));
    EXPECT_EQ(csv::split("", ',').size(), 1u);  // one empty cell
    EXPECT_EQ(csv::without_bom("\xEF\xBB\xBFsource,target"), "source,target");
    EXPECT_EQ(csv::without_bom("source"), "source");
}

TEST(CsvText, NumbersAreFiniteDecimalsAndNothingElse) {
    EXPECT_EQ(csv::to_number(" 2.5e3 "), 2500.0);
    EXPECT_EQ(csv::to_number("+7"), 7.0);
    EXPECT_EQ(csv::to_number("-0.25"), -0.25);
    for (const char* bad : {"", " ", "1.5x", "x", "nan", "inf", "1e400", "0x10", "1,5", "++1"})
        EXPECT_FALSE(csv::to_number(bad).has_value()) << bad;
    EXPECT_EQ(csv::to_integer("42"), 42);
    EXPECT_EQ(csv::to_integer("-3"), -3);
    EXPECT_EQ(csv::to_integer("1e3"), 1000);
    EXPECT_FALSE(csv::to_integer("1.5").has_value());
    EXPECT_FALSE(csv::to_integer("3e9").has_value());  // beyond a node id's 2e9
    EXPECT_EQ(csv::to_integer("3e9", 1e10), 3000000000);
    EXPECT_EQ(csv::to_number_in("5", 0.0, 10.0), 5.0);
    EXPECT_EQ(csv::to_number_in("10", 0.0, 10.0), 10.0);  // the bounds are inside
    EXPECT_FALSE(csv::to_number_in("10.5", 0.0, 10.0).has_value());
    EXPECT_FALSE(csv::to_number_in("1e300", 0.0, 1e7).has_value());
    EXPECT_EQ(csv::range_text(1e-6, 1e7), "[1e-06, 1e+07]");
}
