"""A run's series and frames: finding RUN_DIR/vtk/*.pvd, listing a .pvd's time steps, the
scenario's name, and reading .vtp frames with plain VTK (cheap, no ParaView proxies)."""

import json
import math
import os
import sys
import xml.etree.ElementTree as ET

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy

from .style import STATUS_NAMES


def find_series(path):
    """Returns (run_dir, [pvd paths])."""
    path = os.path.abspath(path)
    if os.path.isfile(path) and path.endswith(".pvd"):
        vtk_dir = os.path.dirname(path)
        run_dir = os.path.dirname(vtk_dir) if os.path.basename(vtk_dir) == "vtk" else vtk_dir
        return run_dir, [path]
    if os.path.isdir(path):
        found = sorted(f for f in (os.path.join(d, n) for d in (os.path.join(path, "vtk"), path)
                                   if os.path.isdir(d) for n in os.listdir(d))
                       if f.endswith(".pvd"))
        vtk_found = [f for f in found if os.path.dirname(f) == os.path.join(path, "vtk")]
        found = vtk_found or found
        if found:
            return path, found
    sys.exit("render_formation: no .pvd found at %s (expected RUN_DIR/vtk/*.pvd or a .pvd file)"
             % path)


def read_pvd(pvd):
    """[(time, .vtp path)] in time order, as ParaView's PVD reader sees them."""
    root = ET.parse(pvd).getroot()
    out = []
    for ds in root.iter("DataSet"):
        f = ds.get("file")
        if not f:
            continue
        path = f if os.path.isabs(f) else os.path.join(os.path.dirname(pvd), f)
        out.append((float(ds.get("timestep", "0")), path))
    out.sort(key=lambda tf: tf[0])
    return out


def scenario_title(run_dir, pvd):
    """The scenario's name from RUN_DIR/summary.json ("scenario"), else the folder's name."""
    for d in (run_dir, os.path.dirname(os.path.dirname(pvd))):
        try:
            with open(os.path.join(d, "summary.json")) as f:
                name = json.load(f).get("scenario")
            if name:
                return str(name)
        except (OSError, ValueError, AttributeError):
            pass
    return os.path.basename(run_dir) or os.path.splitext(os.path.basename(pvd))[0]


def new_reader():
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
    return vtkXMLPolyDataReader()


def read_frame(reader, path, link_array="capacity_bps", cluster=None):
    """Reads one .vtp: (points N x 3, status N, line connectivity polydata, the links' coloured
    quantity (link_array), fault_down of the lines). Vertex cells come first in VTK's cell order.
    With `cluster`, only the satellites of that cluster (point data cluster_of) and the links
    between two of them, drawn in the cluster's own chief's LVLH frame (point data
    position_cluster_lvlh_m) when the frame has it: the frame's own points are cluster 0's LVLH
    (or ECI), where another cluster sits thousands of kilometres off, turned."""
    reader.SetFileName(path)
    reader.Update()
    pd = reader.GetOutput()
    n = pd.GetNumberOfPoints()
    pts = vtk_to_numpy(pd.GetPoints().GetData()) if n else np.zeros((0, 3))
    st = pd.GetPointData().GetArray("status")
    status = vtk_to_numpy(st).astype(np.int32) if st is not None else np.zeros(n, np.int32)
    nv, nl = pd.GetNumberOfVerts(), pd.GetNumberOfLines()
    cap = pd.GetCellData().GetArray(link_array)
    cap = vtk_to_numpy(cap)[nv:nv + nl].astype(float) if cap is not None else np.full(nl, np.nan)
    down = pd.GetCellData().GetArray("fault_down")
    down = vtk_to_numpy(down)[nv:nv + nl] != 0 if down is not None else np.zeros(nl, bool)
    if cluster is None:
        return pd, pts, status, cap, down
    keep = vtk_to_numpy(pd.GetPointData().GetArray("cluster_of")) == cluster
    new_index = np.cumsum(keep) - 1
    own = pd.GetPointData().GetArray(CLUSTER_FRAME_ARRAY)
    if own is not None:
        pts = vtk_to_numpy(own).reshape(-1, 3)
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
    sub = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(pts[keep]), deep=1))
    sub.SetPoints(points)
    if nl:
        ca = pd.GetLines()
        conn = vtk_to_numpy(ca.GetConnectivityArray()).reshape(-1, 2)  # every link one 2-point line
        inside = keep[conn[:, 0]] & keep[conn[:, 1]]
        lines = vtkCellArray()
        lines.SetData(numpy_to_vtk(np.arange(0, 2 * inside.sum() + 1, 2, dtype=np.int64), deep=1),
                      numpy_to_vtk(new_index[conn[inside]].ravel().astype(np.int64), deep=1))
        sub.SetLines(lines)
        cap, down = cap[inside], down[inside]
    return sub, pts[keep], status[keep], cap, down


CLUSTER_FRAME_ARRAY = "position_cluster_lvlh_m"


def has_cluster_frame(path):
    """Whether a constellation's formation frame carries each satellite in its own cluster
    chief's LVLH frame (point data position_cluster_lvlh_m; frames written before it did not)."""
    reader = new_reader()
    reader.SetFileName(path)
    reader.Update()
    return reader.GetOutput().GetPointData().GetArray(CLUSTER_FRAME_ARRAY) is not None


def _cluster_of(path):
    """A frame's per-satellite cluster (point data cluster_of) as numbers, or None."""
    reader = new_reader()
    reader.SetFileName(path)
    reader.Update()
    arr = reader.GetOutput().GetPointData().GetArray("cluster_of")
    return vtk_to_numpy(arr) if arr is not None else None


def has_clusters_of(path):
    """Whether a frame carries each satellite's cluster (a constellation's formation frames)."""
    return _cluster_of(path) is not None


def cluster_count(path):
    """How many clusters a constellation's formation frame has (cluster_of 0..count - 1)."""
    return int(_cluster_of(path).max()) + 1


def status_names(reader, path):
    """The names of the status values as the frame at `path` carries them (field data
    status_names), or STATUS_NAMES for frames written before they did."""
    reader.SetFileName(path)
    reader.Update()
    names = reader.GetOutput().GetFieldData().GetAbstractArray("status_names")
    if names is None:
        return list(STATUS_NAMES)
    return [names.GetValue(i) for i in range(names.GetNumberOfValues())]


def scan_series(frames, link_array="capacity_bps", cluster=None):
    """One pass over the selected frames: union bounds, the largest extent about each
    frame's centre, the capacity range, and whether any link is down / satellite not ok."""
    reader = new_reader()
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    rlo, rhi = np.full(3, np.inf), np.full(3, -np.inf)
    cap_lo, cap_hi = math.inf, -math.inf
    any_down, statuses, clusters = False, set(), False
    first_centre, first_span = None, 0.0
    for _, _, path in frames:
        pd, pts, status, cap, down = read_frame(reader, path, link_array, cluster)
        clusters = clusters or pd.GetPointData().GetArray("cluster") is not None
        if len(pts):
            c = pts.mean(axis=0)
            plo, phi = pts.min(axis=0), pts.max(axis=0)
            lo, hi = np.minimum(lo, plo), np.maximum(hi, phi)
            rlo, rhi = np.minimum(rlo, plo - c), np.maximum(rhi, phi - c)
            if first_centre is None:
                first_centre, first_span = c, float((phi - plo).max())
        statuses.update(int(s) for s in np.unique(status))
        good = cap[np.isfinite(cap) & ~down]
        if len(good):
            cap_lo, cap_hi = min(cap_lo, float(good.min())), max(cap_hi, float(good.max()))
        any_down = any_down or bool(down.any())
    if cap_lo > cap_hi:
        cap_range = None
    else:
        if cap_lo == cap_hi:
            cap_lo = 0.0 if cap_hi > 0 else cap_lo - 1.0
        cap_range = [cap_lo, cap_hi]
    ok = bool(np.all(np.isfinite(lo)))
    return {
        "bounds": [float(v) for v in np.ravel(np.column_stack([lo, hi]))] if ok else None,
        "extent": [float(v) for v in np.ravel(np.column_stack([rlo, rhi]))] if ok else None,
        "first_centre": [float(v) for v in first_centre] if first_centre is not None else None,
        "first_span": first_span,
        "capacity_range": cap_range,
        "any_down": any_down,
        "statuses": sorted(statuses),
        "status_names": status_names(reader, frames[0][2]) if frames else list(STATUS_NAMES),
        "clusters": clusters,
    }
