"""The scene: an offscreen VTK render window (not ParaView's render view, whose extra passes
cost several times as much per frame) with a plan's satellites, links, grid and labels;
Scene.render() draws one frame into a PNG."""

import os

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy

from .series import read_frame
from .style import (
    BACKGROUND, BAR_LABEL_FORMAT, GRID_COLOUR, LINK_DOWN_COLOUR, LINK_WIDTH_PX, TEXT_COLOUR,
    UNIT_PREFIXES, VIRIDIS, event_statuses, legend_title, link_title, point_px, status_colours)


def cluster_distances_text(pd, pts):
    """A constellation's zoomed-out frame: each cluster's distance from cluster 0's centroid, in
    words ("from cluster 0: 1 at 100 km, 2 at 200 km, 3 at 4,427 km"), so that clusters drawn on
    one spot beside a far one still read apart; "" for fewer than two clusters."""
    ids = pd.GetPointData().GetArray("cluster")
    if ids is None or len(pts) < 2:
        return ""
    ids = vtk_to_numpy(ids)
    if 0 not in ids:
        return ""
    origin = pts[int(np.nonzero(ids == 0)[0][0])]
    parts = ["%d at %s km" % (int(k), "{:,.0f}".format(np.linalg.norm(p - origin) / 1e3))
             for k, p in sorted(zip(ids, pts), key=lambda kp: int(kp[0])) if int(k) != 0]
    return "from cluster 0: " + ", ".join(parts)


class Scene:
    """An offscreen render window with the formation, grid and labels of a plan; render()
    draws one frame into a PNG."""

    def __init__(self, plan):
        from vtkmodules.vtkCommonCore import vtkLookupTable
        from vtkmodules.vtkCommonDataModel import vtkPolyData, vtkCellArray
        from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
        from vtkmodules.vtkRenderingCore import (
            vtkActor, vtkPolyDataMapper, vtkRenderer, vtkRenderWindow, vtkTextActor,
            vtkWindowToImageFilter, vtkColorTransferFunction)
        from vtkmodules.vtkIOImage import vtkPNGWriter
        import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (the OpenGL factory overrides)
        import vtkmodules.vtkRenderingFreeType  # noqa: F401  (text)
        self.plan = plan
        self.PolyData, self.CellArray = vtkPolyData, vtkCellArray
        w, h = plan["size"]
        self.reader = vtkXMLPolyDataReader()

        ren = vtkRenderer()
        ren.SetBackground(*BACKGROUND)
        rw = vtkRenderWindow()
        rw.SetOffScreenRendering(1)
        rw.SetMultiSamples(0)
        rw.AddRenderer(ren)
        rw.SetSize(w, h)
        self.ren, self.rw = ren, rw

        # Satellites: every point, a shaded sphere coloured by status.
        names = plan["status_names"]
        colours = status_colours(names)
        self.event_statuses = event_statuses(names)
        status_lut = vtkLookupTable()
        status_lut.SetNumberOfTableValues(len(names))
        for k in range(len(names)):
            status_lut.SetTableValue(k, *colours[3 * k:3 * k + 3], 1.0)
        status_lut.SetTableRange(0, len(names) - 1)
        status_lut.Build()
        self.status_lut = status_lut
        # A cluster's centroid is a large sphere (the zoomed-out constellation series).
        sat_px = point_px(h) * (3 if plan.get("clusters") else 1)

        def point_actor(size, opacity=1.0):
            m = vtkPolyDataMapper()
            m.SetLookupTable(status_lut)
            m.SetScalarRange(0, len(names) - 1)
            m.SetScalarModeToUsePointData()
            m.SetColorModeToMapScalars()
            a = vtkActor()
            a.SetMapper(m)
            p = a.GetProperty()
            p.SetRepresentationToPoints()
            p.SetPointSize(size)
            p.SetRenderPointsAsSpheres(True)
            p.SetOpacity(opacity)
            p.SetAmbient(0.25)
            p.SetDiffuse(0.85)
            ren.AddActor(a)
            return m, a

        # Links: lines drawn as tubes, coloured by capacity (scaled to a readable unit).
        cap = plan.get("capacity_range") or [0.0, 1.0]
        unit, div = plan.get("link_unit", "bit/s"), 1.0
        for u, f in UNIT_PREFIXES.get(unit, ()):
            if max(abs(cap[0]), abs(cap[1])) >= f:
                unit, div = u, f
                break
        self.cap_div = div
        cap_lut = vtkColorTransferFunction()
        lo, hi = cap[0] / div, cap[1] / div
        for s, r, g, b in VIRIDIS:
            cap_lut.AddRGBPoint(lo + s * (hi - lo), r, g, b)
        self.link_mapper = vtkPolyDataMapper()
        self.link_mapper.SetLookupTable(cap_lut)
        self.link_mapper.SetScalarRange(lo, hi)
        self.link_mapper.SetScalarModeToUseCellData()
        self.link_mapper.SetColorModeToMapScalars()
        self.link_actor = vtkActor()
        self.link_actor.SetMapper(self.link_mapper)
        lp = self.link_actor.GetProperty()
        lp.SetLineWidth(max(LINK_WIDTH_PX, h / 300.0))
        lp.SetRenderLinesAsTubes(True)
        lp.SetAmbient(0.3)
        ren.AddActor(self.link_actor)

        # Links held down by a terminal outage: wider, in their own colour.
        self.down_mapper = vtkPolyDataMapper()
        self.down_mapper.ScalarVisibilityOff()
        self.down_actor = vtkActor()
        self.down_actor.SetMapper(self.down_mapper)
        dp = self.down_actor.GetProperty()
        dp.SetColor(*LINK_DOWN_COLOUR)
        dp.SetLineWidth(2.0 * lp.GetLineWidth())
        dp.SetRenderLinesAsTubes(True)
        dp.SetAmbient(0.3)
        ren.AddActor(self.down_actor)

        self.sat_mapper, self.sat_actor = point_actor(sat_px)
        self.event_mapper, self.event_actor = point_actor(2 * sat_px)
        self.halo_mapper, self.halo_actor = point_actor(4 * sat_px, opacity=0.35)
        self.actors = [self.link_actor, self.down_actor, self.sat_actor, self.event_actor,
                       self.halo_actor]

        cam = ren.GetActiveCamera()
        c = plan["camera"]
        cam.SetFocalPoint(*c["focal"])
        cam.SetPosition(*c["position"])
        cam.SetViewUp(*c["up"])
        cam.ParallelProjectionOn()
        cam.SetParallelScale(c["parallel_scale"])
        cam.SetWindowCenter(*c["window_center"])
        cam.SetClippingRange(*c["clipping"])
        ren.SetAutomaticLightCreation(True)

        self.w2i = vtkWindowToImageFilter()
        self.w2i.SetInput(rw)
        self.w2i.ReadFrontBufferOff()
        self.w2i.ShouldRerenderOff()
        self.w2i.SetInputBufferTypeToRGB()
        self.png = vtkPNGWriter()
        self.png.SetCompressionLevel(3)   # a fast zlib level: the frames are rewritten often

        self.clock = None
        self.bake_index = None
        if not plan["plain"]:
            before = self._props()
            self._labels(ren, w, h, unit, cap_lut, vtkTextActor)
            self._bake([p for p in self._props() if p not in before and p is not self.clock])
        # (The first render compiles the shaders; keep that out of the frame loop.)
        rw.Render()

    def _props(self):
        props = self.ren.GetViewProps()
        return [props.GetItemAsObject(k) for k in range(props.GetNumberOfItems())]

    def _grab(self):
        """The window's pixels, (h, w, 3) uint8, bottom row first."""
        self.w2i.Modified()
        self.w2i.Update()
        img = self.w2i.GetOutput()
        w, h, _ = img.GetDimensions()
        return vtk_to_numpy(img.GetPointData().GetScalars()).reshape(h, w, 3)

    def _bake(self, static):
        """The camera and the grid, title, colour bar and legend are the same in every
        frame: draw them once, keep the pixels they cover, and paint those pixels into each
        frame wherever the formation left the background. The grid axes alone cost ~25 ms
        a frame in llvmpipe (and a background texture ~12 ms); the paint ~1 ms."""
        dynamic = [p for p in self._props() if p not in static]
        for p in dynamic:
            p.VisibilityOff()
        self.rw.Render()
        layer = self._grab().copy()
        for p in static:
            p.VisibilityOff()
        self.rw.Render()
        bg = self._grab()[-1, -1].copy()
        flat = layer.reshape(-1, 3)
        self.bake_index = np.nonzero((flat != bg).any(axis=1))[0]
        self.bake_rgb = flat[self.bake_index]
        self.bake_bg = bg
        for p in static:
            self.ren.RemoveViewProp(p)
        for p in dynamic:
            p.VisibilityOn()

    def _labels(self, ren, w, h, unit, cap_lut, vtkTextActor):
        from vtkmodules.vtkRenderingAnnotation import vtkScalarBarActor
        from vtkmodules.vtkRenderingCore import vtkActor2D, vtkPolyDataMapper2D, vtkProperty
        from vtkmodules.vtkFiltersSources import vtkRegularPolygonSource, vtkLineSource
        from paraview.modules.vtkRemotingViews import vtkGridAxes3DActor
        plan = self.plan
        font = h / 720.0

        def text(size, colour=TEXT_COLOUR, bold=False):
            a = vtkTextActor()
            tp = a.GetTextProperty()
            tp.SetFontSize(max(8, int(round(size * font))))
            tp.SetColor(*colour)
            tp.SetBold(bold)
            tp.SetFontFamilyToArial()
            ren.AddActor2D(a)
            return a

        title = text(20, bold=True)
        title.SetInput(plan["title"])
        title.GetTextProperty().SetVerticalJustificationToTop()
        title.SetDisplayPosition(int(12 * font), h - int(10 * font))
        self.title_actor = title
        self.clock = text(15, colour=[0.9, 0.9, 0.9])
        self.clock.SetDisplayPosition(int(12 * font), int(10 * font))

        # The grid: faces behind the formation, each axis labelled once.
        g = vtkGridAxes3DActor()
        g.SetGridBounds(*plan["grid_box"])
        g.SetFaceMask(plan["grid_faces"])
        g.SetLabelMask(plan["grid_labels"])
        g.SetLabelUniqueEdgesOnly(True)
        g.SetGenerateGrid(True)
        g.SetGenerateEdges(True)
        g.SetGenerateTicks(True)
        # A property of our own: setting the default one's colour reaches only some faces.
        gp = vtkProperty()
        gp.SetColor(*GRID_COLOUR)
        gp.SetLineWidth(1.0)
        g.SetProperty(gp)
        for k, t in enumerate(plan["axis_titles"]):
            g.SetTitle(k, t)
            tp = g.GetTitleTextProperty(k)
            tp.SetColor(0.92, 0.92, 0.92)
            tp.SetFontSize(max(8, int(round(14 * font))))
            tp.SetBold(True)
            lp = g.GetLabelTextProperty(k)
            lp.SetColor(0.75, 0.75, 0.78)
            lp.SetFontSize(max(8, int(round(12 * font))))
        ren.AddViewProp(g)
        self.grid = g
        self.grid_box = plan["grid_box"]

        # Capacity colour bar: its own title above it (the bar's title would sit on the top
        # label).
        bar = vtkScalarBarActor()
        bar.SetLookupTable(cap_lut)
        bar.SetTitle(" ")
        bar.SetNumberOfLabels(5)
        bar.SetLabelFormat(BAR_LABEL_FORMAT)
        bar.SetMaximumNumberOfColors(256)
        bar.GetPositionCoordinate().SetCoordinateSystemToNormalizedViewport()
        bar.GetPositionCoordinate().SetValue(0.86, 0.40)
        bar.SetWidth(0.12)
        bar.SetHeight(0.46)
        bar.SetBarRatio(0.25)
        bar.SetDrawTickLabels(True)
        bar.UnconstrainedFontSizeOn()
        lp = bar.GetLabelTextProperty()
        lp.SetColor(*TEXT_COLOUR)
        lp.SetFontSize(max(8, int(round(13 * font))))
        lp.SetItalic(False)
        lp.SetShadow(False)
        lp.SetBold(False)
        lp.SetFontFamilyToArial()
        bar.GetTitleTextProperty().SetFontSize(2)
        ren.AddActor2D(bar)
        heading = text(14, bold=True)
        heading.SetInput(link_title(plan, unit, unit_sep="\n"))
        heading.GetTextProperty().SetVerticalJustificationToTop()
        heading.SetDisplayPosition(int(0.86 * w), h - int(52 * font))

        # Status legend: a disk of each colour and its name.
        names = plan["status_names"]
        colours = status_colours(names)
        entries = [(s, colours[3 * k:3 * k + 3], "disk") for k, s in enumerate(names)]
        if plan.get("clusters"):
            entries = [("cluster centroid", colours[0:3], "disk"),
                       ("gateway links", VIRIDIS[-1][1:], "line")]
        if plan.get("any_down"):
            entries.append(("link down", LINK_DOWN_COLOUR, "line"))
        row = 22 * font
        y0 = 18 * font + row * len(entries)
        heading = text(14, bold=True)
        heading.SetInput(legend_title(plan))
        heading.SetDisplayPosition(int(0.86 * w), int(y0 + 6 * font))
        for k, (label, colour, shape) in enumerate(entries):
            y = y0 - (k + 1) * row
            cx, cy = 0.86 * w + 7 * font, y + 6 * font
            if shape == "disk":
                src = vtkRegularPolygonSource()
                src.SetNumberOfSides(24)
                src.SetRadius(6 * font)
                src.SetCenter(cx, cy, 0)
            else:
                src = vtkLineSource()
                src.SetPoint1(cx - 7 * font, cy, 0)
                src.SetPoint2(cx + 7 * font, cy, 0)
            m = vtkPolyDataMapper2D()
            m.SetInputConnection(src.GetOutputPort())
            a = vtkActor2D()
            a.SetMapper(m)
            a.GetProperty().SetColor(*colour)
            a.GetProperty().SetLineWidth(max(2.0, 3 * font))
            ren.AddActor2D(a)
            t = text(14)
            t.SetInput(label)
            t.SetDisplayPosition(int(cx + 14 * font), int(y))

    def _points(self, pts_vtk, ids, status_vtk):
        """A polydata of the points `ids` (all when None), one vertex each."""
        pd = self.PolyData()
        pd.SetPoints(pts_vtk)
        n = pts_vtk.GetNumberOfPoints() if ids is None else len(ids)
        conn = np.arange(n, dtype=np.int64) if ids is None else np.asarray(ids, np.int64)
        verts = self.CellArray()
        verts.SetData(numpy_to_vtk(np.arange(n + 1, dtype=np.int64), deep=1),
                      numpy_to_vtk(conn, deep=1))
        pd.SetVerts(verts)
        pd.GetPointData().SetScalars(status_vtk)
        return pd

    def render(self, index, t, path, png):
        plan = self.plan
        pd, pts, status, cap, down = read_frame(self.reader, path, plan.get("link_array", "capacity_bps"),
                                                plan.get("cluster"))
        n = len(pts)
        status_vtk = numpy_to_vtk(status.astype(np.int32), deep=1)
        status_vtk.SetName("status")
        self.sat_mapper.SetInputData(self._points(pd.GetPoints(), None, status_vtk)
                                     if n else self.PolyData())
        events = np.nonzero(np.isin(status, self.event_statuses))[0]
        ev = self._points(pd.GetPoints(), events, status_vtk) if len(events) else self.PolyData()
        self.event_mapper.SetInputData(ev)
        self.halo_mapper.SetInputData(ev)
        up, dn = self.PolyData(), self.PolyData()
        if n and pd.GetNumberOfLines():
            ca = pd.GetLines()
            offsets = vtk_to_numpy(ca.GetOffsetsArray())
            conn = vtk_to_numpy(ca.GetConnectivityArray())
            c = cap / self.cap_div
            for out, sel in ((up, ~down), (dn, down)):
                if not sel.any():
                    continue
                cells = np.nonzero(sel)[0]
                starts, ends = offsets[cells], offsets[cells + 1]
                lens = ends - starts
                idx = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(lens.sum())
                lines = self.CellArray()
                lines.SetData(numpy_to_vtk(np.r_[0, np.cumsum(lens)].astype(np.int64), deep=1),
                              numpy_to_vtk(conn[idx].astype(np.int64), deep=1))
                out.SetPoints(pd.GetPoints())
                out.SetLines(lines)
                arr = numpy_to_vtk(np.ascontiguousarray(c[cells]), deep=1)
                arr.SetName("capacity")
                out.GetCellData().SetScalars(arr)
        self.link_mapper.SetInputData(up)
        self.down_mapper.SetInputData(dn)

        if plan["origin"] == "centre":
            off = -pts.mean(axis=0) if n else np.zeros(3)
        elif plan["origin"] == "none":
            off = np.zeros(3)
        else:
            off = -np.asarray(plan["origin"])
        for a in self.actors:
            a.SetPosition(*off)

        if self.clock is not None:
            text = "t = %.1f s  (%.2f min)   step %d/%d   satellites %d   links %d" % (
                t, t / 60.0, index, plan["n_times"] - 1, n, pd.GetNumberOfLines())
            if plan.get("clusters"):
                gw = pd.GetCellData().GetArray("gateway_links")
                gw = vtk_to_numpy(gw)[pd.GetNumberOfVerts():] if gw is not None else np.zeros(0)
                sats = pd.GetPointData().GetArray("satellites")
                text = ("t = %.1f s  (%.2f min)   step %d/%d   clusters %d (%d satellites)   "
                        "cluster pairs joined %d   gateway links %d" % (
                            t, t / 60.0, index, plan["n_times"] - 1, n,
                            int(vtk_to_numpy(sats).sum()) if sats is not None else 0,
                            pd.GetNumberOfLines(), int(gw.sum())))
                distances = cluster_distances_text(pd, pts)
                if distances:
                    text += "\n" + distances
            counts = [(int((status == k).sum()), plan["status_names"][k]) for k in self.event_statuses]
            extra = ["%d %s" % c for c in counts if c[0]]
            if down.any():
                extra.append("%d link%s down" % (int(down.sum()), "" if down.sum() == 1 else "s"))
            if extra:
                first, _, rest = text.partition("\n")
                text = first + "   (" + ", ".join(extra) + ")" + ("\n" + rest if rest else "")
            self.clock.SetInput(text)

        self.rw.Render()
        px = self._grab()
        if self.bake_index is not None:
            flat = px.reshape(-1, 3)
            under = flat[self.bake_index]
            clear = (under == self.bake_bg).all(axis=1)
            flat[self.bake_index[clear]] = self.bake_rgb[clear]
        self._write_png(png)

    def _write_png(self, path):
        """Writes the grabbed image (with the baked pixels painted in: _grab's array is a view
        of it) to path, through a temporary name so a reader never sees half a PNG."""
        img = self.w2i.GetOutput()
        img.GetPointData().GetScalars().Modified()
        tmp = path + ".part"
        self.png.SetFileName(tmp)
        self.png.SetInputData(img)
        self.png.Write()
        if self.png.GetErrorCode():
            raise OSError("render_formation: cannot write %s (VTK error %d)"
                          % (tmp, self.png.GetErrorCode()))
        os.replace(tmp, path)
