"""Orbit averages of the chief's heights from a run's result.h5 (docs/physics.md, "The chief: mean
elements"): the geodetic altitude above the WGS-84 ellipsoid (Bowring's formula), a - R_E from the
osculating state, and |r| - R_E. Geodetic latitude and height depend only on z and sqrt(x^2 + y^2), so
the ECI positions serve without an Earth-fixed frame.

    skyfabric run scenarios/suncatcher-81.yaml -o /tmp/alt --set duration_s=432000 --set output_step_s=60 \
        --set links.enabled=false --set workload.enabled=false --set radiation.enabled=false --set output.vtk=false
    /usr/bin/python3 tests/reference/orbit_average_altitude.py /tmp/alt/result.h5
"""
import h5py, numpy as np, sys
f = h5py.File(sys.argv[1], 'r')
r = f['/orbit/chief_position_eci_m'][()]; v = f['/orbit/chief_velocity_eci_m_s'][()]
a_e = 6378137.0; fl = 1 / 298.257223563; b_e = a_e * (1 - fl); e2 = fl * (2 - fl); ep2 = e2 / (1 - e2)
p = np.hypot(r[:, 0], r[:, 1]); z = r[:, 2]
th = np.arctan2(z * a_e, p * b_e)  # Bowring
lat = np.arctan2(z + ep2 * b_e * np.sin(th) ** 3, p - e2 * a_e * np.cos(th) ** 3)
N = a_e / np.sqrt(1 - e2 * np.sin(lat) ** 2)
h = np.where(np.abs(np.cos(lat)) > 1e-6, p / np.cos(lat) - N, np.abs(z) - b_e)
mu = 3.986004418e14
a = 1 / (2 / np.linalg.norm(r, axis=1) - np.einsum('ij,ij->i', v, v) / mu)
print(f"samples {len(h)}: mean geodetic altitude {h.mean()/1e3:.1f} km, mean a - R_E {(a.mean()-a_e)/1e3:.1f} km, "
      f"mean |r| - R_E {(np.linalg.norm(r,axis=1).mean()-a_e)/1e3:.1f} km")
