#pragma once
// The message passing a sweep needs under mpirun: ranks, tagged byte messages, a barrier.
// MPI sits behind this interface in a plugin, libskyfabric_mpi.so beside the program, loaded
// only when a sweep runs under mpirun: linking libmpi (and the ten libraries it pulls in) into
// the program cost every command, `--version` included, milliseconds of start-up.

#include <memory>
#include <optional>
#include <string>

namespace skyfabric::sweep {

class Messenger {
public:
    struct Message {
        int source = -1;
        int tag = 0;
        std::string bytes;
    };

    virtual ~Messenger() = default;  // finalizes MPI
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual void send(int destination, int tag, const std::string& bytes) = 0;
    // A message from any rank with any tag, if one has arrived; never blocks.
    virtual std::optional<Message> try_receive() = 0;
    // The next message from `source` with `tag`; blocks until it arrives.
    virtual std::string receive(int source, int tag) = 0;
    virtual void barrier() = 0;
    [[noreturn]] virtual void abort(int status) = 0;
};

// Loads the plugin from the program's own folder and initializes MPI. Throws
// std::runtime_error naming the plugin's path and the loader's reason when it cannot.
std::unique_ptr<Messenger> start_mpi();

}  // namespace skyfabric::sweep
