#pragma once
// SIGINT and SIGTERM as a request to stop, shared by the commands and the sweep: the process is not
// killed; it checks stop_requested() at its next safe point, keeps what it has done and exits 130.
#include <atomic>

namespace skyfabric::common {

// What a system call that the signal interrupts does. `run` and `collective` restart them, so that a
// file write in progress (HDF5, the trace) goes on; the sweep lets them fail with EINTR.
enum class InterruptedCalls { restart, fail };

// Installs the handler for SIGINT and SIGTERM (again: the last call's `calls` holds).
void install_stop_handlers(InterruptedCalls calls);

// Set by either signal; a command may also set it (a sweep's point whose sweep has died).
std::atomic<bool>& stop_requested();

// The signal that arrived last (the sweep passes it on to its points), 0 before any.
int stop_signal();

}  // namespace skyfabric::common
