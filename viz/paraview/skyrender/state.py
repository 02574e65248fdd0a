"""The ParaView state (.pvsm) written beside the frames for GUI users: the same series,
colours, grid and first camera as the frames, built with paraview.simple from the same
style table."""

import os

from .series import new_reader, read_frame
from .style import (
    AXIS_TITLES, BACKGROUND, BAR_LABEL_FORMAT, LINK_WIDTH_PX, VIRIDIS_PRESET, legend_title,
    link_title, point_px, status_colours)


def write_state(plan, out_dir):
    """A ParaView state with the same series, colours, grid and first camera."""
    from paraview.simple import (  # noqa: F401  (pvbatch provides these)
        ColorBy, CreateView, GetColorTransferFunction, GetScalarBar, PVDReader, SaveState,
        SetActiveView, Show, Text, Threshold)
    name = plan["name"]
    reader = PVDReader(registrationName=name, FileName=plan["pvd"])
    links = Threshold(registrationName=name + "_links", Input=reader)
    links.Scalars = ["CELLS", "link_source"]
    links.LowerThreshold = 0
    links.UpperThreshold = 2 ** 31 - 1
    if hasattr(links, "ThresholdMethod"):
        links.ThresholdMethod = "Between"
    view = CreateView("RenderView")
    SetActiveView(view)
    view.ViewSize = plan["size"]
    view.Background = BACKGROUND
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0
    view.OrientationAxesVisibility = 0
    sats = Show(reader, view)
    sats.SetRepresentationType("Points")
    sats.RenderPointsAsSpheres = 1
    sats.PointSize = point_px(plan["size"][1])
    if plan.get("clusters"):   # no status on a cluster: colour the points by cluster
        ColorBy(sats, ("POINTS", "cluster"))
        sats.SetScalarBarVisibility(view, False)
    else:
        _status_colours(sats, view, plan)
    ld = Show(links, view)
    ld.SetRepresentationType("Surface")
    ld.RenderLinesAsTubes = 1
    ld.LineWidth = LINK_WIDTH_PX
    link_array = plan.get("link_array", "capacity_bps")
    ColorBy(ld, ("CELLS", link_array))
    cap = GetColorTransferFunction(link_array)
    cap.ApplyPreset(VIRIDIS_PRESET, True)
    if plan.get("capacity_range"):
        cap.RescaleTransferFunction(*plan["capacity_range"])
        cap.AutomaticRescaleRangeMode = "Never"
    cap_bar = GetScalarBar(cap, view)
    unit = plan.get("link_unit", "bit/s")
    cap_bar.Title = link_title(plan, unit)
    cap_bar.ComponentTitle = ""
    cap_bar.RangeLabelFormat = BAR_LABEL_FORMAT
    ld.SetScalarBarVisibility(view, not plan["plain"])
    title = Text(registrationName=name + "_title")
    title.Text = plan["title"]
    Show(title, view).WindowLocation = "Upper Left Corner"
    if plan["origin"] == "none":   # the grid reads the series' own coordinates
        grid = view.AxesGrid
        grid.Visibility = 1
        grid.XTitle, grid.YTitle, grid.ZTitle = AXIS_TITLES[plan["kind"]]
        grid.FacesToRender = plan["grid_faces"]
        grid.AxesToLabel = plan["grid_labels"]
        grid.UseCustomBounds = 1
        grid.CustomBounds = plan["grid_box"]
    c = plan["camera"]
    first = plan["frames"][0]
    view.ViewTime = first[1]
    focal = c["focal"]
    shift = [0.0, 0.0, 0.0]
    if plan["origin"] != "none":
        # The state shows the series in its own coordinates: aim at the first frame.
        if plan["origin"] == "centre":
            _, pts, _, _, _ = read_frame(new_reader(), first[2])
            shift = [float(v) for v in pts.mean(axis=0)] if len(pts) else shift
        else:
            shift = plan["origin"]
    view.CameraFocalPoint = [focal[k] + shift[k] for k in range(3)]
    view.CameraPosition = [c["position"][k] + shift[k] for k in range(3)]
    view.CameraViewUp = c["up"]
    view.CameraParallelProjection = 1
    view.CameraParallelScale = c["parallel_scale"]
    state = os.path.join(out_dir, name + ".pvsm")
    SaveState(state)
    print("render_formation: wrote ParaView state %s (paraview --state=%s)" % (state, state))


def _status_colours(sats, view, plan):
    from paraview.simple import ColorBy, GetColorTransferFunction, GetScalarBar
    ColorBy(sats, ("POINTS", "status"))
    lut = GetColorTransferFunction("status")
    lut.InterpretValuesAsCategories = 1
    names = plan["status_names"]
    lut.Annotations = [v for i, s in enumerate(names) for v in (str(i), s)]
    lut.IndexedColors = status_colours(names)
    status_bar = GetScalarBar(lut, view)
    status_bar.Title = legend_title(plan)
    status_bar.ComponentTitle = ""
    sats.SetScalarBarVisibility(view, not plan["plain"])
