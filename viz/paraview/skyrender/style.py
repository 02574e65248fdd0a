"""The style table: colours, sizes, legend words and screen layout, read by both the frames
(scene.py) and the ParaView state (state.py), so the two cannot drift apart.

The satellite status names come from the frames (field data status_names, written from the C++
table links::satellite_status_names); STATUS_NAMES is only for frames written before they carried
them, and tests/viz/pvd_writer_test.cpp fails when it differs from that table.
"""

STATUS_NAMES = ["ok", "faulted", "rebooting", "spare"]   # index = SatelliteStatus value
STATUS_COLOUR = {
    "ok": (0.20, 0.80, 0.30),          # green
    "faulted": (0.90, 0.15, 0.15),     # red
    "rebooting": (1.00, 0.70, 0.00),   # amber
    "spare": (0.55, 0.55, 0.60),       # grey
}
UNKNOWN_STATUS_COLOUR = (1.0, 1.0, 1.0)   # a status this style does not know yet: white
# Drawn large, inside a halo, and counted on the clock.
EVENT_STATUS_NAMES = ("faulted", "rebooting")


def status_colours(names):
    """The colour of each status value (index = value), flat r, g, b as ParaView's IndexedColors."""
    return [c for name in names for c in STATUS_COLOUR.get(name, UNKNOWN_STATUS_COLOUR)]


def event_statuses(names):
    """The status values drawn as events."""
    return tuple(k for k, name in enumerate(names) if name in EVENT_STATUS_NAMES)
# --color-by: the link cell array, its words in the legend, its unit.
LINK_QUANTITIES = {
    "capacity": ("capacity_bps", "capacity", "bit/s"),
    "utilisation": ("utilisation", "utilisation", "1"),
    "distance": ("distance_m", "length", "m"),
    "margin": ("margin_db", "margin", "dB"),
}
# Display units for the colour bar of the frames, largest first (ParaView's bar shows raw values).
UNIT_PREFIXES = {
    "bit/s": (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)),
    "m": (("km", 1e3),),
}
LINK_DOWN_COLOUR = [0.95, 0.35, 0.80]   # magenta: not on the viridis scale
BACKGROUND = [0.08, 0.09, 0.13]
TEXT_COLOUR = [1.0, 1.0, 1.0]
GRID_COLOUR = [0.33, 0.35, 0.42]   # opaque: translucent grid lines z-fight and blend by draw order
VIRIDIS = [  # matplotlib's viridis at 9 stops (the frames' transfer function)
    (0.000, 0.267004, 0.004874, 0.329415), (0.125, 0.282623, 0.140926, 0.457517),
    (0.250, 0.253935, 0.265254, 0.529983), (0.375, 0.206756, 0.371758, 0.553117),
    (0.500, 0.163625, 0.471133, 0.558148), (0.625, 0.127568, 0.566949, 0.550556),
    (0.750, 0.134692, 0.658636, 0.517649), (0.875, 0.266941, 0.748751, 0.440573),
    (1.000, 0.993248, 0.906157, 0.143936),
]
VIRIDIS_PRESET = "Viridis (matplotlib)"   # the same map, by its ParaView preset name
BAR_LABEL_FORMAT = "%-#.3g"
LINK_WIDTH_PX = 2.0     # the thinnest link tube
AXIS_TITLES = {
    "lvlh": ["x radial [m]", "y along-track [m]", "z orbit normal [m]"],
    "eci": ["x ECI [m]", "y ECI [m]", "z ECI [m]"],
}
# Screen layout (fractions of the image) kept for the formation and its grid when the
# labels are drawn: the legend and colour bar take the right, title and clock the edges.
SCENE_BOX = (0.14, 0.10, 0.81, 0.90)    # x0, y0, x1, y1 (room for the axis titles)
PLAIN_BOX = (0.04, 0.04, 0.96, 0.96)


def point_px(height):
    """A satellite's sphere diameter in pixels for an image `height` pixels high."""
    return max(6, int(round(height / 55.0)))


def link_title(plan, unit, unit_sep=" "):
    """The colour bar's heading: "link capacity [bit/s]" (no unit for a ratio)."""
    return "%s %s%s" % ("gateway" if plan.get("clusters") else "link",
                        plan.get("link_words", "capacity"),
                        "%s[%s]" % (unit_sep, unit) if unit != "1" else "")


def legend_title(plan):
    return "constellation" if plan.get("clusters") else "satellite status"
