#pragma once
namespace skyfabric::cli {
// The whole command line: returns the process exit status
// (0 ok, 1 run failure, 2 bad input, 130 interrupted).
int main(int argc, char** argv);
}  // namespace skyfabric::cli
