#pragma once
// A sweep under mpirun: rank 0 hands out points one at a time to the ranks that ask, gathers
// their rows and runs points of its own; every rank runs its points in a Pool like a local sweep.
#include "sweep/messenger.hpp"
#include "sweep/sweep_gather.hpp"
#include "sweep/sweep_setup.hpp"

#include <cstddef>
#include <vector>

namespace skyfabric::sweep {

// True when this process was started by mpirun/mpiexec (OMPI_COMM_WORLD_SIZE, PMI_SIZE
// or PMIX_RANK in the environment).
bool launched_under_mpi();

// Rank 0: runs and hands out the points in `todo` until done or stopped, and every other rank has finished.
void run_mpi_root(const Plan& plan, const std::vector<std::size_t>& todo, Gatherer& gather, int jobs, Messenger& mpi);

// Other ranks: ask rank 0 for a point whenever a slot is free, send back each row.
void run_mpi_worker(const Plan& plan, int jobs, Messenger& mpi);

}  // namespace skyfabric::sweep
