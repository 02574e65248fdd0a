#include "cli/cli.hpp"

int main(int argc, char** argv) { return skyfabric::cli::main(argc, argv); }
