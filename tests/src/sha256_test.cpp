// SHA-256 against the FIPS 180-4 examples (NIST's "Examples with intermediate values", SHA-256:
// one block "abc", two blocks "abcdbcde…nopq") and the empty string, plus the padding's edges:
// 55 bytes fit one block with the length, 56 need a second (checked against coreutils' sha256sum).
#include "output/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

namespace so = skyfabric::output;

TEST(Sha256, FipsExamples) {
    EXPECT_EQ(so::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(so::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(so::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, PaddingAcrossTheBlockEdge) {
    // printf 'a%.0s' $(seq 55) | sha256sum, and the same for 56 and 64 bytes.
    EXPECT_EQ(so::sha256_hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    EXPECT_EQ(so::sha256_hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    EXPECT_EQ(so::sha256_hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}
