/* NRLMSISE-00 reference densities for skyfabric's density-model test. */
#include "nrlmsise-00.h"
#include <math.h>
#include <stdio.h>

static const double PI = 3.14159265358979323846;
static double deg(double r) { return r * 180.0 / PI; }
static double rad(double d) { return d * PI / 180.0; }

static double rho(int drag, int doy, double sec, double alt, double lat, double lon, double lst,
                  double f107, double f107a, double ap) {
    struct nrlmsise_flags fl = {0};
    struct nrlmsise_input in = {0};
    struct nrlmsise_output out;
    fl.switches[0] = 0;
    for (int i = 1; i < 24; ++i) fl.switches[i] = 1;
    in.year = 2027; in.doy = doy; in.sec = sec; in.alt = alt; in.g_lat = lat; in.g_long = lon; in.lst = lst;
    in.f107 = f107; in.f107A = f107a; in.ap = ap;
    if (drag) gtd7d(&in, &fl, &out); else gtd7(&in, &fl, &out);
    return out.d[5] * 1000.0; /* g/cm^3 -> kg/m^3 */
}

static double wrap24(double h) { h = fmod(h, 24.0); return h < 0 ? h + 24.0 : h; }
static double wrap360(double d) { d = fmod(d, 360.0); return d < 0 ? d + 360.0 : d; }

int main(void) {
    const double presets[3][3] = {{70, 70, 4}, {150, 150, 15}, {250, 250, 25}};
    const double alts[] = {400, 450, 500, 550, 600, 650, 700, 750, 800, 850, 900};
    const double jd0 = 2461484.5; /* 2027-03-20T00:00Z, the default scenario epoch */
    const int doy = 79;
    /* Sun (Astronomical Almanac low-precision formulae) at the epoch */
    const double d0 = jd0 - 2451545.0;
    const double L = wrap360(280.460 + 0.9856474 * d0), g = rad(wrap360(357.528 + 0.9856003 * d0));
    const double lam = rad(L + 1.915 * sin(g) + 0.020 * sin(2 * g)), eps = rad(23.439 - 0.0000004 * d0);
    const double ra_sun = deg(atan2(cos(eps) * sin(lam), cos(lam)));
    const double R = 6378.137, mu = 398600.4418, inc = rad(97.99);
    printf("# NRLMSISE-00 (Brodowski C release 20041227, gtd7d effective mass density incl. anomalous O)\n");
    printf("# epoch 2027-03-20T00:00Z (doy 79), Sun RA %.3f deg\n", ra_sun);
    printf("# global: area-weighted mean over latitude (5 deg) and local time (0.5 h) at 00:00 UT\n");
    printf("# dawn_dusk: circular orbit, i = 97.99 deg, ascending node at 06:00 local time, 1-day mean, 10 s steps\n");
    printf("# f107 f107a ap alt_km global_kg_m3 dawn_dusk_kg_m3 dawn_dusk_gtd7_kg_m3\n");
    for (int p = 0; p < 3; ++p) {
        for (unsigned k = 0; k < sizeof alts / sizeof alts[0]; ++k) {
            const double f = presets[p][0], fa = presets[p][1], ap = presets[p][2], h = alts[k];
            double sum = 0, wsum = 0;
            for (double lat = -87.5; lat < 90; lat += 5)
                for (double lst = 0.25; lst < 24; lst += 0.5) {
                    const double w = cos(rad(lat));
                    sum += w * rho(1, doy, 0.0, h, lat, wrap360(lst * 15.0), lst, f, fa, ap);
                    wsum += w;
                }
            const double global = sum / wsum;
            const double n = sqrt(mu / pow(R + h, 3)), raan = rad(ra_sun - 90.0);
            double s1 = 0, s2 = 0; int cnt = 0;
            for (double t = 0; t < 86400.0; t += 10.0) {
                const double u = n * t;
                const double x = cos(raan) * cos(u) - sin(raan) * sin(u) * cos(inc);
                const double y = sin(raan) * cos(u) + cos(raan) * sin(u) * cos(inc);
                const double z = sin(u) * sin(inc);
                const double lat = deg(asin(z)), ra = deg(atan2(y, x));
                const double gmst = wrap360(280.46061837 + 360.98564736629 * (d0 + t / 86400.0));
                const double lon = wrap360(ra - gmst);
                const double lst = wrap24(12.0 + (ra - ra_sun) / 15.0);
                s1 += rho(1, doy, t, h, lat, lon, lst, f, fa, ap);
                s2 += rho(0, doy, t, h, lat, lon, lst, f, fa, ap);
                ++cnt;
            }
            printf("%g %g %g %g %.4e %.4e %.4e\n", f, fa, ap, h, global, s1 / cnt, s2 / cnt);
        }
    }
    /* Boundary of skyfabric's diffusion profile: global means at 120 km (gtd7, number densities cm^-3). */
    printf("# 120 km global means: f107 ap  He O N2 O2 Ar H (cm^-3)  T (K)\n");
    for (int p = 0; p < 3; ++p) {
        double s[9] = {0}, temp = 0, w = 0;
        for (double lat = -87.5; lat < 90; lat += 5)
            for (double lst = 0.25; lst < 24; lst += 0.5) {
                struct nrlmsise_flags fl = {0};
                struct nrlmsise_input in = {0};
                struct nrlmsise_output o;
                for (int i = 1; i < 24; ++i) fl.switches[i] = 1;
                in.doy = doy; in.alt = 120.0; in.g_lat = lat; in.g_long = wrap360(lst * 15.0); in.lst = lst;
                in.f107 = presets[p][0]; in.f107A = presets[p][1]; in.ap = presets[p][2];
                gtd7(&in, &fl, &o);
                const double c = cos(rad(lat));
                for (int i = 0; i < 9; ++i) s[i] += c * o.d[i];
                temp += c * o.t[1];
                w += c;
            }
        printf("#120 %g %g  %.4e %.4e %.4e %.4e %.4e %.4e  %.1f\n", presets[p][0], presets[p][2], s[0] / w, s[1] / w,
               s[2] / w, s[3] / w, s[4] / w, s[6] / w, temp / w);
    }
    return 0;
}
