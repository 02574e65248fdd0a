// "Did you mean ...?" (nearest_word.hpp): the first candidate at the least Levenshtein distance,
// within max(2, length / 3) edits of the typed word or of the candidate; distances counted by hand.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/nearest_word.hpp>

namespace sw = skyfabric::workloads;
using sw::TypoBound;

TEST(NearestWord, TheCandidateFewestEditsAwayWithinTheBound) {
    const std::vector<std::string> keys{"radius_m", "radial_pitch_m", "pitch_m", "layout"};
    // radus_m: one insertion from radius_m, further from the rest.
    EXPECT_EQ(sw::nearest_word("radus_m", keys, TypoBound::typed_word), "radius_m");
    // layuot: a transposition is two substitutions in Levenshtein's count; 2 ≤ max(2, 6 / 3).
    EXPECT_EQ(sw::nearest_word("layuot", keys, TypoBound::typed_word), "layout");
    // An exact word is its own nearest.
    EXPECT_EQ(sw::nearest_word("pitch_m", keys, TypoBound::typed_word), "pitch_m");
    // Ties go to the first listed: "ab" is one edit from both "aa" and "bb".
    EXPECT_EQ(sw::nearest_word("ab", {"bb", "aa"}, TypoBound::typed_word), "bb");
    EXPECT_EQ(sw::nearest_word("ab", {"aa", "bb"}, TypoBound::typed_word), "aa");
    // Nothing near: "xyz" is 3 edits from "abc" (3 > max(2, 1)).
    EXPECT_EQ(sw::nearest_word("xyz", {"abc"}, TypoBound::typed_word), "");
    EXPECT_EQ(sw::nearest_word("anything", {}, TypoBound::typed_word), "");
}

TEST(NearestWord, TheBoundFollowsTheTypedWordOrTheCandidate) {
    // "torus" against "torus2d": 2 insertions, within 2 either way.
    EXPECT_EQ(sw::nearest_word("torus", {"torus2d"}, TypoBound::candidate), "torus2d");
    // "fully" against "fully_connected": 10 insertions. Bound by the typed word (5 letters): 2, too far;
    // by the candidate (15 letters): 5, still too far.
    EXPECT_EQ(sw::nearest_word("fully", {"fully_connected"}, TypoBound::typed_word), "");
    EXPECT_EQ(sw::nearest_word("fully", {"fully_connected"}, TypoBound::candidate), "");
    // "kin" against "kind": 1 insertion.
    EXPECT_EQ(sw::nearest_word("kin", {"kind"}, TypoBound::candidate), "kind");
    // Where the bounds differ: "abcdefghi" (9 letters) against "abcdefghiXYZ" (12): 3 insertions; typed
    // bound max(2, 3) = 3 accepts, and so does the candidate's max(2, 4) = 4; "abcdef" against
    // "abcdefXYZ": 3 insertions; typed bound max(2, 2) = 2 refuses, the candidate's max(2, 3) = 3 accepts.
    EXPECT_EQ(sw::nearest_word("abcdefghi", {"abcdefghiXYZ"}, TypoBound::typed_word), "abcdefghiXYZ");
    EXPECT_EQ(sw::nearest_word("abcdef", {"abcdefXYZ"}, TypoBound::typed_word), "");
    EXPECT_EQ(sw::nearest_word("abcdef", {"abcdefXYZ"}, TypoBound::candidate), "abcdefXYZ");
}
