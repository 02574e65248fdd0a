#pragma once
// "Did you mean ...?": the valid word nearest a misspelt one, for the scenario reader and the
// fabric spec alike.
#include <string>
#include <string_view>
#include <vector>

namespace skyfabric::workloads {

// Whose length bounds a plausible typo, at most max(2, length / 3) edits: the word as typed
// (scenario keys and values) or the candidate (fabric kinds, keys and columns). Each caller
// keeps the bound it had, so each suggests what it did.
enum class TypoBound { typed_word, candidate };

// The first candidate at the least edit distance (Levenshtein) from `word`, or "" when that one
// is too far.
std::string nearest_word(std::string_view word, const std::vector<std::string>& candidates, TypoBound bound);

}  // namespace skyfabric::workloads
