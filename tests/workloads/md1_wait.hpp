#pragma once
// Erlang's M/D/1 waiting-time distribution, shared by the serving tests (the prefill queue's closed form).
#include <cmath>

namespace skyfabric_test {

// M/D/1 waiting time with D = 1 s at load ρ = λ: P(W ≤ t) = (1 − ρ) Σ_{k=0}^{⌊t⌋} [ρ(k − t)]^k / k! · e^{−ρ(k − t)}
// (Erlang 1909; Gross & Harris, Fundamentals of Queueing Theory, the M/D/1 waiting-time distribution).
inline double md1_wait_cdf(double rho, double t) {
    double sum = 0.0, factorial = 1.0;
    for (int k = 0; k <= static_cast<int>(std::floor(t)); ++k) {
        if (k > 0) factorial *= k;
        const double x = rho * (k - t);
        sum += std::pow(x, k) / factorial * std::exp(-x);
    }
    return (1.0 - rho) * sum;
}


}  // namespace skyfabric_test
