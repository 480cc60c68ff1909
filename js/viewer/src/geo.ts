// Where each value of a 2-D field lies on the Earth: a regular lat/lon grid
// from `mars.grid` + `mars.area`, or latitude/longitude arrays stored in the
// same message as 1-D axes or per-point values. Pure functions: the page
// uses them for drawing and for the cursor read-out, the tests to check it.

export interface RegularGrid {
  kind: "regular";
  nlat: number;
  nlon: number;
  /** Latitude of row 0 and the step between rows (negative: north to south). */
  lat0: number;
  dlat: number;
  /** Longitude of column 0 and the step between columns. */
  lon0: number;
  dlon: number;
  /** True when the columns go once round the Earth. */
  global: boolean;
  note?: string;
}

export interface AxesGrid {
  kind: "axes";
  lats: Float64Array;
  lons: Float64Array;
}

/**
 * Scattered points (per-point latitude/longitude arrays that are not a
 * rectilinear grid): the nearest point is found through a spatial hash of
 * square bins a little larger than the mean spacing.
 */
export interface PointsGrid {
  kind: "points";
  lat: Float64Array;
  lon: Float64Array;
  bin: number;
  nbx: number;
  nby: number;
  /** Points of bin b: order[start[b] … start[b + 1]). */
  start: Int32Array;
  order: Int32Array;
}

export type Grid = RegularGrid | AxesGrid | PointsGrid;

/** Values per grid row (the column count used to index values as i·columns + j). */
export function columns(g: Grid): number {
  return g.kind === "regular" ? g.nlon : g.kind === "axes" ? g.lons.length : 1;
}

function lon360(x: number): number {
  return ((x % 360) + 360) % 360;
}

export function pointsGrid(lat: Float64Array, lon: Float64Array): PointsGrid {
  const n = lat.length;
  const spacing = Math.sqrt((360 * 180) / Math.max(1, n));
  const bin = Math.max(0.05, 1.5 * spacing);
  const nbx = Math.ceil(360 / bin);
  const nby = Math.ceil(180 / bin);
  const binOf = (k: number) => {
    const bx = Math.min(nbx - 1, Math.floor(lon360(lon[k]!) / bin));
    const by = Math.min(nby - 1, Math.max(0, Math.floor((lat[k]! + 90) / bin)));
    return by * nbx + bx;
  };
  const start = new Int32Array(nbx * nby + 1);
  for (let k = 0; k < n; k++) if (Number.isFinite(lat[k]!) && Number.isFinite(lon[k]!)) start[binOf(k) + 1]!++;
  for (let b = 0; b < nbx * nby; b++) start[b + 1]! += start[b]!;
  const fill = start.slice(0, nbx * nby);
  const order = new Int32Array(start[nbx * nby]!);
  for (let k = 0; k < n; k++) if (Number.isFinite(lat[k]!) && Number.isFinite(lon[k]!)) order[fill[binOf(k)]!++] = k;
  return { kind: "points", lat, lon, bin, nbx, nby, start, order };
}

/** Nearest point by squared degree distance (longitude wrapped), searching rings of bins up to 3 away. */
function nearestPoint(g: PointsGrid, lat: number, lon: number): number | undefined {
  const bx0 = Math.floor(lon360(lon) / g.bin);
  const by0 = Math.floor((lat + 90) / g.bin);
  let best = -1;
  let bestD = Infinity;
  for (let r = 0; r <= 3; r++) {
    for (let by = by0 - r; by <= by0 + r; by++) {
      if (by < 0 || by >= g.nby) continue;
      for (let bx = bx0 - r; bx <= bx0 + r; bx++) {
        if (Math.max(Math.abs(bx - bx0), Math.abs(by - by0)) !== r) continue; // the ring only
        const b = by * g.nbx + (((bx % g.nbx) + g.nbx) % g.nbx);
        for (let q = g.start[b]!; q < g.start[b + 1]!; q++) {
          const k = g.order[q]!;
          const dlon = Math.abs(wrap180(g.lon[k]! - lon));
          const d = (g.lat[k]! - lat) ** 2 + dlon * dlon;
          if (d < bestD) {
            bestD = d;
            best = k;
          }
        }
      }
    }
    // Every point not yet seen is at least r bins away.
    if (best >= 0 && bestD <= (r * g.bin) ** 2) break;
  }
  return best >= 0 ? best : undefined;
}

function numbers(v: unknown, n: number): number[] | undefined {
  if (!Array.isArray(v) || v.length !== n) return undefined;
  const out = v.map((x) => (typeof x === "number" ? x : typeof x === "string" ? Number(x) : NaN));
  return out.every(Number.isFinite) ? out : undefined;
}

function regular(nlat: number, nlon: number, area: number[], note?: string): RegularGrid {
  const [n, w, s, e] = area as [number, number, number, number];
  const full = Math.abs(e - w - 360) < 1e-6;
  const dlon = full ? (e - w) / nlon : nlon > 1 ? (e - w) / (nlon - 1) : 0;
  const global = full || Math.abs(dlon * nlon - 360) < 1e-6;
  const g: RegularGrid = { kind: "regular", nlat, nlon, lat0: n, dlat: nlat > 1 ? (s - n) / (nlat - 1) : 0, lon0: w, dlon, global };
  if (note !== undefined) g.note = note;
  return g;
}

/**
 * The grid of a field of shape [nlat, nlon] from its MARS keys:
 * `grid: "regular_ll"` with `area: [N, W, S, E]` (default the whole globe
 * from -180), or `grid: "Δlon/Δlat"` (MARS increments; default area from 0°E),
 * or, without usable keys, a shape that is exactly a global grid
 * ((nlat-1)·2 = nlon), assumed to start at 90°N, 0°E.
 */
export function gridFromMetadata(meta: Record<string, unknown>, shape: readonly number[]): RegularGrid | undefined {
  if (shape.length !== 2) return undefined;
  const [nlat, nlon] = shape as [number, number];
  const m = (typeof meta["mars"] === "object" && meta["mars"] !== null ? meta["mars"] : {}) as Record<string, unknown>;
  const grid = typeof m["grid"] === "string" ? m["grid"].toLowerCase() : undefined;
  const area = numbers(m["area"], 4);
  if (grid === "regular_ll") return regular(nlat, nlon, area ?? [90, -180, -90, 180]);
  const inc = grid !== undefined ? grid.split("/").map(Number) : [];
  if (inc.length === 2 && inc.every((x) => Number.isFinite(x) && x > 0)) {
    const [dx] = inc as [number, number];
    return regular(nlat, nlon, area ?? [90, 0, -90, 360 - dx]);
  }
  if (area !== undefined) return regular(nlat, nlon, area);
  if (nlat > 2 && (nlat - 1) * 2 === nlon) {
    return regular(nlat, nlon, [90, 0, -90, 360 - 360 / nlon], "no grid keys: assumed a global grid from 90°N, 0°E");
  }
  return undefined;
}

/**
 * A grid from coordinate arrays: 1-D axes whose lengths match a 2-D field's
 * shape; per-point arrays of a rectilinear grid (reduced to axes); any other
 * per-point arrays as scattered points (a 1-D field of N points, or 2-D).
 */
export function gridFromCoords(lat: Float64Array, lon: Float64Array, shape: readonly number[]): Grid | undefined {
  const count = shape.reduce((a, b) => a * b, 1);
  if (shape.length === 2) {
    const [nlat, nlon] = shape as [number, number];
    if (lat.length === nlat && lon.length === nlon) return { kind: "axes", lats: lat, lons: lon };
    if (lat.length === count && lon.length === count) {
      let rectilinear = true;
      for (let i = 0; i < nlat && rectilinear; i++) {
        for (let j = 0; j < nlon; j++) {
          if (lat[i * nlon + j] !== lat[i * nlon] || lon[i * nlon + j] !== lon[j]) {
            rectilinear = false;
            break;
          }
        }
      }
      if (rectilinear) {
        const lats = new Float64Array(nlat);
        const lons = new Float64Array(nlon);
        for (let i = 0; i < nlat; i++) lats[i] = lat[i * nlon]!;
        for (let j = 0; j < nlon; j++) lons[j] = lon[j]!;
        return { kind: "axes", lats, lons };
      }
    }
  }
  if ((shape.length === 1 || shape.length === 2) && count > 0 && lat.length === count && lon.length === count) return pointsGrid(lat, lon);
  return undefined;
}

function wrap180(x: number): number {
  return ((((x + 180) % 360) + 360) % 360) - 180;
}

function nearestOnAxis(axis: Float64Array, x: number, circular: boolean): number {
  let best = -1;
  let bestD = Infinity;
  for (let i = 0; i < axis.length; i++) {
    const d = circular ? Math.abs(wrap180(axis[i]! - x)) : Math.abs(axis[i]! - x);
    if (d < bestD) {
      bestD = d;
      best = i;
    }
  }
  return best;
}

/** Row and column of the grid point nearest (lat, lon), or undefined outside the grid. */
export function nearestIndex(g: Grid, lat: number, lon: number): { i: number; j: number } | undefined {
  if (g.kind === "regular") {
    const i = g.dlat === 0 ? 0 : Math.round((lat - g.lat0) / g.dlat);
    if (i < 0 || i >= g.nlat) return undefined;
    let j: number;
    if (g.dlon === 0) j = 0;
    else if (g.global) j = ((Math.round((lon - g.lon0) / g.dlon) % g.nlon) + g.nlon) % g.nlon;
    else {
      let d = (((lon - g.lon0) % 360) + 360) % 360;
      if (d > 360 - Math.abs(g.dlon) / 2) d -= 360;
      j = Math.round(d / g.dlon);
    }
    if (j < 0 || j >= g.nlon) return undefined;
    return { i: i + 0, j: j + 0 }; // no -0
  }
  if (g.kind === "points") {
    const k = nearestPoint(g, lat, lon);
    return k === undefined ? undefined : { i: k, j: 0 };
  }
  const i = nearestOnAxis(g.lats, lat, false);
  const j = nearestOnAxis(g.lons, lon, true);
  return i < 0 || j < 0 ? undefined : { i, j };
}

/** Latitude and longitude of grid point (i, j), longitude in [-180, 180). */
export function pointOf(g: Grid, i: number, j: number): { lat: number; lon: number } {
  if (g.kind === "regular") return { lat: g.lat0 + i * g.dlat, lon: wrap180(g.lon0 + j * g.dlon) };
  if (g.kind === "points") return { lat: g.lat[i]!, lon: wrap180(g.lon[i]!) };
  return { lat: g.lats[i]!, lon: wrap180(g.lons[j]!) };
}

/** Approximate lat/lon bounds [[west, south], [east, north]] (for the map's fit). */
export function gridBounds(g: Grid): { south: number; north: number; west: number; east: number; global: boolean } {
  if (g.kind === "regular") {
    const a = g.lat0;
    const b = g.lat0 + (g.nlat - 1) * g.dlat;
    const west = g.lon0;
    const east = g.lon0 + (g.nlon - 1) * g.dlon;
    return { south: Math.min(a, b), north: Math.max(a, b), west, east, global: g.global };
  }
  let s = Infinity, n = -Infinity, w = Infinity, e = -Infinity;
  for (const x of g.kind === "points" ? g.lat : g.lats) { s = Math.min(s, x); n = Math.max(n, x); }
  for (const x of g.kind === "points" ? g.lon : g.lons) { w = Math.min(w, x); e = Math.max(e, x); }
  return { south: s, north: n, west: w, east: e, global: e - w > 350 };
}
