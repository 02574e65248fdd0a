#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: the scenario's digest in
// every output's provenance (provenance.hpp), and a sweep point's fingerprint for --resume.
#include <string>
#include <string_view>

namespace skyfabric::output {

std::string sha256_hex(std::string_view bytes);

}  // namespace skyfabric::output
