#pragma once
// `mpirun -n N skyfabric run`: one run shared among MPI ranks (simulation::RunRanks: a
// constellation's fault-free algorithms and every algorithm's fault trials split among the ranks),
// over the Messenger the sweeps use (sweep/messenger.hpp: MPI in a plugin loaded only here and in
// `sweep`). Each rank sends rank 0 its part, and rank 0 sends every rank the whole, so that every
// rank computes the same summary; only rank 0 writes the output folder.
#include "simulation/simulation.hpp"
#include "sweep/messenger.hpp"

#include <span>
#include <string>
#include <vector>

namespace skyfabric::cli {

// True when this `run` was started by mpirun (sweep::launched_under_mpi) and not as a sweep's point:
// a sweep under mpirun spawns its points with its rank's environment and SKYFABRIC_PARENT_PID set.
bool run_shared_among_ranks();

// The run's callbacks over `mpi` (which must outlive them).
simulation::RunRanks run_ranks(sweep::Messenger& mpi);

// A constellation's algorithm results as bytes and back (what run_ranks sends): every field, the
// training record's steps, collectives, links and link epochs included.
std::string encode_algorithm_results(std::span<const workloads::ClusterTrainingResult> results);
std::vector<workloads::ClusterTrainingResult> decode_algorithm_results(const std::string& bytes);

}  // namespace skyfabric::cli
