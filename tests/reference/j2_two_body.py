"""Two-body + J2 equations of motion in absolute ECI, written apart from skyfabric's C++ force model:
the independent reference that tests/reference/check_against_scipy.py integrates with SciPy DOP853
(and that bench/scipy_propagation.py times against the C++ propagator).

Constants: mu = 3.986004418e14 m^3/s^2 (WGS-84 / EGM96), R_E = 6378137 m, J2 = 1.08262668e-3.
Acceleration: a = -mu r / |r|^3 + K / |r|^5 [(1 - 5 z^2/r^2) x, (1 - 5 z^2/r^2) y,
(3 - 5 z^2/r^2) z] with K = -3/2 J2 mu R_E^2.
"""
import numpy as np

MU = 3.986004418e14
RE = 6378137.0
J2 = 1.08262668e-3
K_J2 = -1.5 * J2 * MU * RE * RE


def rhs_stacked(_t, y):
    """Two-body + J2 for M satellites stacked as [x y z vx vy vz] * M."""
    s = y.reshape(-1, 6)
    x, yy, z = s[:, 0], s[:, 1], s[:, 2]
    r2 = x * x + yy * yy + z * z
    r1 = np.sqrt(r2)
    c = -MU / (r2 * r1)
    k = K_J2 / (r2 * r2 * r1)
    z5 = 5.0 * z * z / r2
    out = np.empty_like(s)
    out[:, 0:3] = s[:, 3:6]
    out[:, 3] = (c + k * (1.0 - z5)) * x
    out[:, 4] = (c + k * (1.0 - z5)) * yy
    out[:, 5] = (c + k * (3.0 - z5)) * z
    return out.reshape(-1)


def rhs_one(_t, y):
    """The same for one satellite in plain floats (faster than numpy for 6 states)."""
    x, yy, z, vx, vy, vz = y
    r2 = x * x + yy * yy + z * z
    r1 = r2 ** 0.5
    c = -MU / (r2 * r1)
    k = K_J2 / (r2 * r2 * r1)
    z5 = 5.0 * z * z / r2
    a = c + k * (1.0 - z5)
    return [vx, vy, vz, a * x, a * yy, (c + k * (3.0 - z5)) * z]
