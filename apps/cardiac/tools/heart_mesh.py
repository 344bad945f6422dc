#!/usr/bin/env python3
"""Generate a bi-ventricular heart mesh with rule-based fibres and cell types for `cardiac`.

The geometry is the bi-ventricular ellipsoid of the open `cardiac-geometries` package (the
one `apps/cardiac/tests/data/biv_0.3.msh` was made from), built here with the gmsh Python API
directly: units cm, long axis x, base plane x = 0, apex at x = +4 (RV epicardium) and +3 (LV).

    python3 apps/cardiac/tools/heart_mesh.py --preset heart04 -o heart04.msh

writes a Gmsh MSH 4.1 file (binary) with
  * the tetrahedra (physical volume MYOCARDIUM) and the triangles of the surfaces BASE,
    ENDO_LV, ENDO_RV and EPI (for `cardiac run --stim-surface ENDO_LV`),
  * `$ElementData` per tetrahedron: `fibres` (3 components, unit), `sheets` (3 components,
    unit, the transmural direction) and `cell_type` (0 endo, 1 mid, 2 epi).

Rule (LDRB-like, distances instead of Laplace solves), per tetrahedron:
  d_endo, d_epi  distances of each node to the endocardium (ENDO_LV and ENDO_RV together) and
                 to the epicardium (EPI); e = d_endo / (d_endo + d_epi) at the nodes, linear in
                 the tetrahedron (0 on the endocardium, 1 on the epicardium);
  t  = grad e / |grad e|                     the transmural direction (endo -> epi);
  l  = (a - (a.t) t) / |...|, a = -x         the longitudinal direction (apex -> base);
  c  = l x t                                 the circumferential direction ((c, l, t) right-handed);
  alpha = alpha_endo + (alpha_epi - alpha_endo) * e_c, e_c = e at the centroid;
  fibre = cos(alpha) c + sin(alpha) l;  sheet = t.
So the fibre lies in the plane of the wall (perpendicular to t) and turns from +60 deg at the
endocardium to -60 deg at the epicardium (defaults). Cell types: the tetrahedra are ordered by
e_c and the first `--endo` fraction of the myocardial volume is endo, the last `--epi` fraction
epi, the rest mid (defaults 0.3 / 0.4 / 0.3).

Exit status: 0 done, 2 bad arguments, 3 a Python package missing, 1 anything else.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

# Characteristic lengths (cm) of the presets, measured with gmsh 4.15.2 (requirements.txt):
# see README.md beside this script for the cell counts they give.
PRESETS = {
    "small": 0.3,
    "heart04": 0.0332,
    "heart05": 0.0248,
}

# The bi-ventricular ellipsoid of cardiac-geometries (semi-axes along x, y, z; cm).
LV_ENDO = ((0.0, 0.0, 0.0), (2.5, 1.0, 1.0))
LV_EPI = ((0.0, 0.0, 0.0), (3.0, 1.5, 1.5))
# cardiac-geometries dilates the RV cavity's sphere (made at (0, 0.5, 0)) about the origin and
# then moves it by (0, 0.5, 0): its centre ends at y = 1.25 (biv_0.3.msh has it there too).
RV_ENDO = ((0.0, 1.25, 0.0), (3.0, 1.5, 1.5))
RV_EPI = ((0.0, 0.5, 0.0), (4.0, 2.5, 2.0))
BASE_X = 0.0

INSTALL_HINT = "pip install -r apps/cardiac/tools/requirements.txt"


class UsageError(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Generate a bi-ventricular ellipsoid heart mesh (Gmsh MSH 4.1, cm) with "
        "rule-based fibres, sheets and endo/mid/epi cell types for `cardiac run --mesh`.",
        epilog="Presets (characteristic length, cm): "
        + ", ".join(f"{k} = {v}" for k, v in PRESETS.items()),
    )
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--char-length", type=float, help="gmsh characteristic length in cm")
    size.add_argument("--preset", choices=sorted(PRESETS), help="a named size")
    p.add_argument("-o", "--out", required=True, help="output file (.msh)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.add_argument("--endo", type=float, default=0.3, help="endo volume fraction (0.3)")
    p.add_argument("--epi", type=float, default=0.3, help="epi volume fraction (0.3)")
    p.add_argument("--alpha-endo", type=float, default=60.0, help="fibre angle at endo (deg)")
    p.add_argument("--alpha-epi", type=float, default=-60.0, help="fibre angle at epi (deg)")
    p.add_argument("--no-sheets", action="store_true", help="write no sheets field")
    p.add_argument("--threads", type=int, default=1,
                   help="gmsh threads (1, the default, gives the same mesh on every run)")
    p.add_argument("--sphere-poles", choices=("apex", "base"), default="apex",
                   help="where the parametric poles of the ellipsoids' surfaces lie: at the apex "
                   "(the default) or on the base plane, as before version 0.5, whose meshes "
                   "docs/cardiac.md's heart04 and heart05 figures were measured on (a pole on "
                   "the base's cut leaves slivers that bound the diffusion step)")
    p.add_argument("--optimize", choices=("gmsh", "netgen"), default="gmsh",
                   help="tetrahedron optimiser after meshing: gmsh's (the default, the presets' "
                   "published sizes) or gmsh's then Netgen's, which also removes slivers that "
                   "bound the diffusion step")
    p.add_argument("--quiet", action="store_true", help="print only errors")
    a = p.parse_args(argv)

    cl = PRESETS[a.preset] if a.preset else a.char_length
    if not (math.isfinite(cl) and 0.005 <= cl <= 1.0):
        raise UsageError(f"--char-length {cl}: give a length in cm between 0.005 and 1.0")
    a.cl = cl
    for name in ("endo", "epi"):
        v = getattr(a, name)
        if not (math.isfinite(v) and 0.0 <= v <= 1.0):
            raise UsageError(f"--{name} {v}: give a fraction between 0 and 1")
    if a.endo + a.epi > 1.0 + 1e-12:
        raise UsageError(f"--endo {a.endo} + --epi {a.epi} exceed 1 (mid would be negative)")
    for name in ("alpha_endo", "alpha_epi"):
        v = getattr(a, name)
        if not (math.isfinite(v) and -90.0 <= v <= 90.0):
            raise UsageError(f"--{name.replace('_', '-')} {v}: give an angle in [-90, 90] deg")
    if a.threads < 1:
        raise UsageError(f"--threads {a.threads}: give at least 1")
    if not a.out.lower().endswith(".msh"):
        raise UsageError(f"--out {a.out}: the output must be a .msh file (Gmsh MSH 4.1)")
    out_dir = os.path.dirname(os.path.abspath(a.out))
    if not os.path.isdir(out_dir):
        raise UsageError(f"--out {a.out}: the folder {out_dir} does not exist")
    if os.path.exists(a.out) and not a.force:
        raise UsageError(f"{a.out} exists: pass --force to overwrite it")
    if os.path.isdir(a.out):
        raise UsageError(f"{a.out} is a folder")
    return a


def log(args, msg):
    if not args.quiet:
        print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# Geometry and mesh (gmsh)
# ---------------------------------------------------------------------------------------------

def ellipsoid_level(pts, ell):
    (cx, cy, cz), (a, b, c) = ell
    return ((pts[:, 0] - cx) / a) ** 2 + ((pts[:, 1] - cy) / b) ** 2 + ((pts[:, 2] - cz) / c) ** 2


def build_and_mesh(gmsh, np, args):
    """The geometry (as in cardiac-geometries' biv_ellipsoid), its surfaces named, meshed."""
    occ = gmsh.model.occ
    gmsh.model.add("biv")

    def ellipsoid(ell):
        (cx, cy, cz), (a, b, c) = ell
        s = occ.addSphere(0, 0, 0, 1)
        if args.sphere_poles == "apex":
            # OCC's sphere has its parametric poles on the z axis, which the base plane x = 0
            # would cut through: the cut curve then runs into a pole and gmsh leaves slivers
            # there. Turned onto the x axis (the same sphere), one pole is cut away with the
            # base and the other is the apex, where the surface is whole.
            occ.rotate([(3, s)], 0, 0, 0, 0, 1, 0, math.pi / 2)
        occ.dilate([(3, s)], 0, 0, 0, a, b, c)
        occ.translate([(3, s)], cx, cy, cz)
        return [(3, s)]

    lv_epi = ellipsoid(LV_EPI)
    lv_endo = ellipsoid(LV_ENDO)
    rv_epi = ellipsoid(RV_EPI)
    rv_endo = ellipsoid(RV_ENDO)
    big = 5 * max(LV_EPI[1][0], RV_EPI[1][0])
    box = [(3, occ.addBox(BASE_X, big, big, -big, -2 * big, -2 * big))]
    rv_cavity, _ = occ.cut(rv_endo, lv_epi, removeTool=False)
    cavity, _ = occ.fuse(rv_cavity, lv_endo)
    outer, _ = occ.fuse(lv_epi, rv_epi)
    wall, _ = occ.cut(outer, cavity)
    wall, _ = occ.cut(wall, box)
    occ.synchronize()
    if len(wall) != 1:
        raise RuntimeError(f"expected one myocardial volume, gmsh made {len(wall)}")

    gmsh.option.setNumber("General.NumThreads", args.threads)
    gmsh.option.setNumber("Mesh.CharacteristicLengthMin", args.cl)
    gmsh.option.setNumber("Mesh.CharacteristicLengthMax", args.cl)
    gmsh.option.setNumber("Mesh.CharacteristicLengthFromCurvature", 0)
    gmsh.option.setNumber("Mesh.CharacteristicLengthExtendFromBoundary", 1)
    gmsh.option.setNumber("Mesh.Algorithm", 6)  # Frontal-Delaunay surfaces
    gmsh.option.setNumber("Mesh.Algorithm3D", 10)  # HXT volume (one thread: the same mesh every run)
    gmsh.option.setNumber("Mesh.Optimize", 1)
    gmsh.option.setNumber("Mesh.RandomSeed", 1)
    t0 = time.time()
    gmsh.model.mesh.generate(2)
    log(args, f"surfaces meshed in {time.time() - t0:.1f} s")

    # Name each surface by the ellipsoid its mesh nodes lie on (robust to OCC's numbering).
    groups = {"BASE": [], "ENDO_LV": [], "ENDO_RV": [], "EPI": []}
    for dim, tag in gmsh.model.getBoundary(wall, oriented=False):
        _, xyz, _ = gmsh.model.mesh.getNodes(dim, tag, includeBoundary=True)
        pts = xyz.reshape(-1, 3)
        if np.all(np.abs(pts[:, 0] - BASE_X) < 1e-6):
            groups["BASE"].append(tag)
            continue
        res = {k: np.max(np.abs(ellipsoid_level(pts, e) - 1.0))
               for k, e in (("lv_endo", LV_ENDO), ("lv_epi", LV_EPI),
                            ("rv_endo", RV_ENDO), ("rv_epi", RV_EPI))}
        on = min(res, key=res.get)
        if res[on] > 1e-3:
            raise RuntimeError(f"surface {tag} lies on no ellipsoid (residuals {res})")
        if on == "lv_endo":
            groups["ENDO_LV"].append(tag)
        elif on == "rv_endo":
            groups["ENDO_RV"].append(tag)
        elif on == "rv_epi":
            groups["EPI"].append(tag)
        else:  # the LV epicardium: inside the RV cavity it is the septum's RV side
            inside_rv = np.mean(ellipsoid_level(pts, RV_ENDO) < 1.0) > 0.5
            groups["ENDO_RV" if inside_rv else "EPI"].append(tag)
    for k, v in groups.items():
        if not v:
            raise RuntimeError(f"no surface classified as {k}: the geometry is not as expected")
    for i, name in enumerate(("BASE", "ENDO_LV", "ENDO_RV", "EPI"), start=1):
        gmsh.model.addPhysicalGroup(2, groups[name], tag=i, name=name)
    gmsh.model.addPhysicalGroup(3, [wall[0][1]], tag=1, name="MYOCARDIUM")

    t0 = time.time()
    gmsh.model.mesh.generate(3)
    log(args, f"volume meshed in {time.time() - t0:.1f} s")
    if args.optimize == "netgen":
        t0 = time.time()
        gmsh.model.mesh.optimize("Netgen")
        log(args, f"Netgen optimisation in {time.time() - t0:.1f} s")
    return groups


# ---------------------------------------------------------------------------------------------
# Distances, fibres and cell types (numpy, scipy)
# ---------------------------------------------------------------------------------------------

def point_triangle_distance(np, p, a, b, c):
    """Distance of points p (n,3) to triangles (a, b, c) (n,3 each), row by row (Ericson's
    closest-point-on-triangle by Voronoi regions, vectorised)."""
    ab, ac, ap = b - a, c - a, p - a
    d1 = np.einsum("ij,ij->i", ab, ap)
    d2 = np.einsum("ij,ij->i", ac, ap)
    bp = p - b
    d3 = np.einsum("ij,ij->i", ab, bp)
    d4 = np.einsum("ij,ij->i", ac, bp)
    cp = p - c
    d5 = np.einsum("ij,ij->i", ab, cp)
    d6 = np.einsum("ij,ij->i", ac, cp)
    va = d3 * d6 - d5 * d4
    vb = d5 * d2 - d1 * d6
    vc = d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = va + vb + vc
        v = vb / denom
        w = vc / denom
        q = a + ab * v[:, None] + ac * w[:, None]  # interior
        # edge ab
        m = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
        t = d1 / (d1 - d3)
        q = np.where(m[:, None], a + ab * t[:, None], q)
        # edge ac
        m2 = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
        t = d2 / (d2 - d6)
        q = np.where(m2[:, None], a + ac * t[:, None], q)
        # edge bc
        m3 = (va <= 0) & ((d4 - d3) >= 0) & ((d5 - d6) >= 0)
        t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        q = np.where(m3[:, None], b + (c - b) * t[:, None], q)
    # vertices (checked last: they win)
    q = np.where(((d1 <= 0) & (d2 <= 0))[:, None], a, q)
    q = np.where(((d3 >= 0) & (d4 <= d3))[:, None], b, q)
    q = np.where(((d6 >= 0) & (d5 <= d6))[:, None], c, q)
    return np.linalg.norm(p - q, axis=1)


def surface_distance(np, cKDTree, pts, tri_xyz, k=12, chunk=200_000):
    """Distance of each point to a triangulated surface: exact to the nearest of the k
    triangles whose centroids are nearest (the surface mesh is quasi-uniform)."""
    cen = tri_xyz.mean(axis=1)
    tree = cKDTree(cen)
    k = min(k, len(cen))
    out = np.empty(len(pts))
    for s in range(0, len(pts), chunk):
        p = pts[s:s + chunk]
        _, idx = tree.query(p, k=k)
        idx = idx.reshape(len(p), k)
        best = np.full(len(p), np.inf)
        for j in range(k):
            tri = tri_xyz[idx[:, j]]
            best = np.minimum(best, point_triangle_distance(np, p, tri[:, 0], tri[:, 1], tri[:, 2]))
        out[s:s + chunk] = best
    return out


def face_normals(np, xyz, tet, surface_faces):
    """The mean transmural direction (endo -> epi) given by the faces of `tet` that are
    endo or epi triangles: their normals into the cell, flipped on the epicardium; None if it
    has no such face."""
    total = np.zeros(3)
    for k in range(4):
        face = [int(v) for j, v in enumerate(tet) if j != k]
        side = surface_faces.get(tuple(sorted(face)))
        if side is None:
            continue
        a, b, c = xyz[face]
        n = np.cross(b - a, c - a)
        n /= np.linalg.norm(n)
        if np.dot(n, xyz[tet[k]] - a) < 0:
            n = -n
        total += side * n
    norm = np.linalg.norm(total)
    return total / norm if norm > 1e-12 else None


def microstructure(np, cKDTree, xyz, tets, tris_by_group, args):
    """Transmural depth, fibres, sheets and cell types per tetrahedron."""
    endo = np.concatenate([tris_by_group["ENDO_LV"], tris_by_group["ENDO_RV"]])
    d_endo = surface_distance(np, cKDTree, xyz, xyz[endo])
    d_epi = surface_distance(np, cKDTree, xyz, xyz[tris_by_group["EPI"]])
    e = d_endo / np.maximum(d_endo + d_epi, 1e-300)

    n = len(tets)
    fibres = np.empty((n, 3))
    sheets = np.empty((n, 3))
    depth = np.empty(n)
    volume = np.empty(n)
    fallback = 0
    flat_n = [0]
    surface_faces = {}
    for side, names in ((1.0, ("ENDO_LV", "ENDO_RV")), (-1.0, ("EPI",))):
        for name in names:
            for tri in tris_by_group[name]:
                surface_faces[tuple(sorted(tri.tolist()))] = side
    phi = d_endo - d_epi
    a_axis = np.array([-1.0, 0.0, 0.0])  # apex (x > 0) -> base (x = 0)
    ae, aw = math.radians(args.alpha_endo), math.radians(args.alpha_epi)
    chunk = 500_000
    for s in range(0, n, chunk):
        tt = tets[s:s + chunk]
        p = xyz[tt]  # (m,4,3)
        dmat = p[:, 1:, :] - p[:, :1, :]  # rows: edges
        de = e[tt[:, 1:]] - e[tt[:, :1]]  # (m,3)
        det = np.linalg.det(dmat)
        volume[s:s + chunk] = det / 6.0
        g = np.linalg.solve(dmat, de[:, :, None])[:, :, 0]  # dmat g = de
        gn = np.linalg.norm(g, axis=1)
        # e is constant on a cell whose four nodes all lie on one surface (thin walls, coarse
        # meshes): there the direction is the normal of its faces on that surface, else the
        # gradient of d_endo - d_epi, which still varies.
        flat = ~(gn > 1e-9)
        if flat.any():
            dd = phi[tt[flat][:, 1:]] - phi[tt[flat][:, :1]]
            g[flat] = np.linalg.solve(dmat[flat], dd[:, :, None])[:, :, 0]
            for i in np.flatnonzero(flat):
                normal = face_normals(np, xyz, tt[i], surface_faces)
                if normal is not None:
                    g[i] = normal
            gn = np.linalg.norm(g, axis=1)
            flat_n[0] += int(flat.sum())
        bad = ~(gn > 1e-12)
        fallback += int(bad.sum())
        t = np.where(bad[:, None], np.array([0.0, 1.0, 0.0]), g / np.where(bad, 1.0, gn)[:, None])
        l = a_axis[None, :] - (t @ a_axis)[:, None] * t
        ln = np.linalg.norm(l, axis=1)
        near_axis = ln < 1e-6  # t along the long axis (apex): any tangent will do
        fallback += int(near_axis.sum())
        alt = np.cross(t, np.array([0.0, 0.0, 1.0]))
        l = np.where(near_axis[:, None], alt, l)
        l /= np.linalg.norm(l, axis=1)[:, None]
        c = np.cross(l, t)
        ec = e[tt].mean(axis=1)
        alpha = ae + (aw - ae) * ec
        f = np.cos(alpha)[:, None] * c + np.sin(alpha)[:, None] * l
        fibres[s:s + chunk] = f / np.linalg.norm(f, axis=1)[:, None]
        sheets[s:s + chunk] = t
        depth[s:s + chunk] = ec

    # Cell types: ordered by depth, the configured fractions of the volume.
    vol = np.abs(volume)
    order = np.argsort(depth, kind="stable")
    cum = np.cumsum(vol[order]) / vol.sum()
    ctype = np.ones(n)
    mid_pos = cum - 0.5 * vol[order] / vol.sum()  # each cell's volume midpoint
    ctype[order[mid_pos < args.endo]] = 0
    ctype[order[mid_pos > 1.0 - args.epi]] = 2
    if not args.quiet:
        print(f"{flat_n[0]} cells with e constant (transmural direction from their wall faces)")
    return fibres, sheets, ctype, depth, volume, fallback


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

def append_element_data(f, np, name, tags, values):
    """One binary MSH 4.1 `$ElementData` block (ASCII header, then int tag + doubles)."""
    values = np.asarray(values, dtype="<f8").reshape(len(tags), -1)
    ncomp = values.shape[1]
    head = f'$ElementData\n1\n"{name}"\n1\n0\n3\n0\n{ncomp}\n{len(tags)}\n'
    f.write(head.encode("ascii"))
    rec = np.empty(len(tags), dtype=[("tag", "<i4"), ("v", "<f8", (ncomp,))])
    if np.max(tags) >= 2**31:
        raise RuntimeError("element tags beyond 2^31 do not fit MSH 4.1 element data")
    rec["tag"] = tags
    rec["v"] = values
    f.write(rec.tobytes())
    f.write(b"\n$EndElementData\n")


def main(argv=None):
    try:
        args = parse_args(argv)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        import gmsh
        import numpy as np
        from scipy.spatial import cKDTree
    except ImportError as err:
        print(f"error: {err}: install the generator's packages with `{INSTALL_HINT}`",
              file=sys.stderr)
        return 3

    t_start = time.time()
    out = os.path.abspath(args.out)
    tmp = os.path.join(os.path.dirname(out), f".{os.path.basename(out)}.{os.getpid()}.tmp.msh")
    gmsh.initialize(["heart_mesh"], readConfigFiles=False)
    try:
        gmsh.option.setNumber("General.Terminal", 0 if args.quiet else 1)
        gmsh.option.setNumber("General.Verbosity", 1)
        log(args, f"bi-ventricular ellipsoid, characteristic length {args.cl} cm")
        build_and_mesh(gmsh, np, args)

        node_tags, xyz, _ = gmsh.model.mesh.getNodes()
        xyz = xyz.reshape(-1, 3)
        index = np.full(int(node_tags.max()) + 1, -1, dtype=np.int64)
        index[node_tags.astype(np.int64)] = np.arange(len(node_tags))
        etags, enodes = gmsh.model.mesh.getElementsByType(4)
        tets = index[enodes.astype(np.int64)].reshape(-1, 4)
        tris = {}
        for name, ptag in (("BASE", 1), ("ENDO_LV", 2), ("ENDO_RV", 3), ("EPI", 4)):
            tt = []
            for ent in gmsh.model.getEntitiesForPhysicalGroup(2, ptag):
                _, tn = gmsh.model.mesh.getElementsByType(2, int(ent))
                tt.append(index[tn.astype(np.int64)].reshape(-1, 3))
            tris[name] = np.concatenate(tt)
        log(args, f"{len(tets):,} tetrahedra, {len(xyz):,} nodes "
                  f"({time.time() - t_start:.1f} s)")

        t0 = time.time()
        fibres, sheets, ctype, depth, volume, fallback = microstructure(
            np, cKDTree, xyz, tets, tris, args)
        if np.any(volume <= 0):
            # gmsh orients its tetrahedra positively; refuse rather than write a bad mesh.
            raise RuntimeError(f"{int(np.sum(volume <= 0))} tetrahedra with volume <= 0")
        vol = volume.sum()
        frac = [volume[ctype == k].sum() / vol for k in range(3)]
        log(args, f"fibres and cell types in {time.time() - t0:.1f} s: volume {vol:.2f} cm^3, "
                  f"endo/mid/epi {frac[0]:.3f}/{frac[1]:.3f}/{frac[2]:.3f} of it, "
                  f"{fallback} cells with a fallback direction")

        t0 = time.time()
        gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
        gmsh.option.setNumber("Mesh.Binary", 1)
        gmsh.option.setNumber("Mesh.SaveAll", 0)
        gmsh.write(tmp)
        with open(tmp, "ab") as f:
            append_element_data(f, np, "fibres", etags, fibres)
            if not args.no_sheets:
                append_element_data(f, np, "sheets", etags, sheets)
            append_element_data(f, np, "cell_type", etags, ctype)
            f.flush()
            os.fsync(f.fileno())
        if os.path.exists(out) and not args.force:
            raise RuntimeError(f"{args.out} appeared while generating: pass --force")
        os.replace(tmp, out)
        log(args, f"wrote {args.out} ({os.path.getsize(out) / 1e6:.1f} MB) in "
                  f"{time.time() - t0:.1f} s; total {time.time() - t_start:.1f} s")
        return 0
    except Exception as err:  # noqa: BLE001 - one clear line, not a traceback
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        gmsh.finalize()
        if os.path.exists(tmp):
            os.remove(tmp)


if __name__ == "__main__":
    sys.exit(main())
