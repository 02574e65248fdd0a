#pragma once
// A year of sunlight and power, one orbit per day: the eclipse season and the compute the orbit can
// sustain (`skyfabric season`). Orbit-averaged, not a run: each day's orbit is the mean orbit (node at
// the secular J2 rate) sampled around, with the Sun fixed over that orbit.
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/power.hpp>

#include <vector>

namespace skyfabric::physics {

struct SeasonDay {
    int day = 0;                        // days after the epoch
    double julian_date = 0.0;
    double beta_rad = 0.0;
    double shadow_s = 0.0;              // per orbit, Sun's disk at least partly hidden (penumbra + umbra)
    double umbra_s = 0.0;               // per orbit, fully hidden
    double period_s = 0.0;              // nodal period
    double generated_wh = 0.0;          // array output over the orbit
    double load_full_wh = 0.0;          // loads over the orbit at full compute
    // Largest steady accelerator utilisation the orbit supports: what the array gives in excess of the
    // load refills (through charge and discharge efficiencies) what the shadow takes, and the shadow's
    // draw fits between a full battery and its state-of-charge limit.
    double sustainable_compute = 0.0;
};

struct SeasonOptions {
    int days = 365;
    int samples_per_orbit = 720;
    int active_links = 8;               // terminals carrying links (their power is a base load)
};

std::vector<SeasonDay> eclipse_season(const KeplerianElements& chief_mean, double epoch_julian_date, double j2,
                                      const PowerParameters& power, const SeasonOptions& options = {});

}  // namespace skyfabric::physics
