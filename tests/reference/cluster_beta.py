"""Each cluster's beta angle (the Sun's elevation above its chief's orbit plane) from a constellation
run's result.h5, with the Sun from the Astronomical Almanac's low-precision formula (about 0.01 deg),
apart from skyfabric's own illumination.hpp; the plane from consecutive chief positions.

    skyfabric run scenarios/constellation-4x81-stress.yaml -o /tmp/beta --set output_step_s=60 \
        --set radiation.enabled=false --set workload.enabled=false --set output.vtk=false
    /usr/bin/python3 tests/reference/cluster_beta.py /tmp/beta/result.h5

The epoch is the scenario's (2027-03-20T00:00Z); pass another Julian date as a second argument.
"""
import h5py, numpy as np, sys
f = h5py.File(sys.argv[1], 'r')
t = f['/constellation/time_s'][()]
P = f['/constellation/chief_position_eci_m'][()]  # [T, C, 3]
jd0 = float(sys.argv[2]) if len(sys.argv) > 2 else 2461484.5  # 2027-03-20T00:00Z
def sun(jd):
    n = jd - 2451545.0
    L = np.radians((280.460 + 0.9856474 * n) % 360); g = np.radians((357.528 + 0.9856003 * n) % 360)
    lam = L + np.radians(1.915) * np.sin(g) + np.radians(0.020) * np.sin(2 * g)
    eps = np.radians(23.439 - 4e-7 * n)
    return np.array([np.cos(lam), np.cos(eps) * np.sin(lam), np.sin(eps) * np.sin(lam)])
for c in range(P.shape[1]):
    betas = []
    for k in range(len(t) - 1):
        h = np.cross(P[k, c], P[k + 1, c]); h /= np.linalg.norm(h)
        betas.append(np.degrees(np.arcsin(sun(jd0 + t[k] / 86400.0) @ h)))
    print(f"cluster {c}: beta {np.mean(betas):.2f} deg (min {min(betas):.2f}, max {max(betas):.2f})")
