#include "common/stop_signal.hpp"

#include <csignal>

namespace skyfabric::common {

namespace {
std::atomic<int> signal_number{0};
std::atomic<bool> stop_flag{false};
// The number first: whoever sees the flag set also sees which signal set it.
extern "C" void on_stop_signal(int sig) {
    signal_number.store(sig);
    stop_flag.store(true);
}
}  // namespace

void install_stop_handlers(InterruptedCalls calls) {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = calls == InterruptedCalls::restart ? SA_RESTART : 0;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

std::atomic<bool>& stop_requested() { return stop_flag; }

int stop_signal() { return signal_number.load(); }

}  // namespace skyfabric::common
