// The map: a canvas on which a 2-D field is drawn pixel by pixel through the
// inverse of a d3-geo projection (equirectangular or orthographic globe),
// with Natural Earth coastlines (world-atlas) stroked on top. Every screen
// pixel shows the value of its nearest grid point, which is also what the
// cursor read-out reports, so what you see is what you read.

import { geoEquirectangular, geoGraticule10, geoOrthographic, geoPath, type GeoPermissibleObjects, type GeoProjection } from "d3-geo";
import { mesh } from "topojson-client";
import type { GeometryObject, Topology } from "topojson-specification";
import { colourIndex, type ColourScale } from "./colour.js";
import { columns, gridBounds, nearestIndex, pointOf, type Grid } from "./geo.js";

export type ProjectionKind = "flat" | "globe";

export interface Lookup {
  lat: number;
  lon: number;
  i: number;
  j: number;
  value: number;
}

let coastlines: Promise<GeoPermissibleObjects> | undefined;

/** Natural Earth 1:50m land outlines, loaded on first use (a separate chunk). */
function loadCoastlines(): Promise<GeoPermissibleObjects> {
  coastlines ??= import("world-atlas/land-50m.json").then((m) => {
    const topo = (m as { default: unknown }).default as Topology<{ land: GeometryObject }>;
    return mesh(topo, topo.objects.land) as GeoPermissibleObjects;
  });
  return coastlines;
}

const BACKGROUND: [number, number, number] = [24, 28, 36];

export class MapView {
  private values: Float32Array | undefined;
  private grid: Grid | undefined;
  private scale: ColourScale | undefined;
  private kind: ProjectionKind = "flat";
  private projection: GeoProjection = geoEquirectangular();
  private zoom = 1;
  private pan: [number, number] = [0, 0];
  private rotation: [number, number] = [0, -20];
  private land: GeoPermissibleObjects | undefined;
  /** The lines drawn over the field (the page's Display options). */
  private lines = { coastlines: true, graticule: true };
  private drag: { x: number; y: number; pan: [number, number]; rot: [number, number] } | undefined;
  /** Called after every draw (the page marks itself ready for tests). */
  onRender: (() => void) | undefined;

  constructor(private readonly canvas: HTMLCanvasElement) {
    void loadCoastlines().then((l) => {
      this.land = l;
      this.render();
    });
    canvas.addEventListener("pointerdown", (e) => {
      this.drag = { x: e.clientX, y: e.clientY, pan: [...this.pan], rot: [...this.rotation] };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointermove", (e) => {
      if (this.drag === undefined) return;
      const dx = e.clientX - this.drag.x;
      const dy = e.clientY - this.drag.y;
      if (this.kind === "flat") this.pan = [this.drag.pan[0] + dx * this.dpr(), this.drag.pan[1] + dy * this.dpr()];
      else {
        const k = 0.4 / this.zoom;
        this.rotation = [this.drag.rot[0] + dx * k, Math.max(-90, Math.min(90, this.drag.rot[1] - dy * k))];
      }
      this.renderSoon();
    });
    const end = () => (this.drag = undefined);
    canvas.addEventListener("pointerup", end);
    canvas.addEventListener("pointercancel", end);
    canvas.addEventListener(
      "wheel",
      (e) => {
        e.preventDefault();
        this.zoom = Math.max(0.5, Math.min(64, this.zoom * (e.deltaY < 0 ? 1.25 : 0.8)));
        this.renderSoon();
      },
      { passive: false },
    );
    new ResizeObserver(() => this.renderSoon()).observe(canvas);
  }

  private frameQueued = false;

  /** One redraw per animation frame however many pointer events arrive. */
  private renderSoon(): void {
    if (this.frameQueued) return;
    this.frameQueued = true;
    requestAnimationFrame(() => {
      this.frameQueued = false;
      this.render();
    });
  }

  private dpr(): number {
    return Math.min(window.devicePixelRatio || 1, 2);
  }

  setLines(lines: { coastlines: boolean; graticule: boolean }): void {
    this.lines = { ...lines };
    this.renderSoon();
  }

  setProjection(kind: ProjectionKind): void {
    this.kind = kind;
    this.zoom = 1;
    this.pan = [0, 0];
    this.render();
  }

  resetView(): void {
    this.zoom = 1;
    this.pan = [0, 0];
    this.render();
  }

  setField(values: Float32Array | undefined, grid: Grid | undefined, scale: ColourScale | undefined, recentre = false): void {
    const gridChanged = recentre || grid !== this.grid;
    this.values = values;
    this.grid = grid;
    this.scale = scale;
    if (gridChanged && grid !== undefined && recentre) {
      const b = gridBounds(grid);
      this.rotation = [-(b.global ? 0 : (b.west + b.east) / 2), -(b.south + b.north) / 2];
      this.zoom = 1;
      this.pan = [0, 0];
    }
    this.render();
  }

  private fitted(w: number, h: number): GeoProjection {
    const m = 8 * this.dpr();
    let p: GeoProjection;
    if (this.kind === "globe") {
      p = geoOrthographic().rotate([this.rotation[0], this.rotation[1]]).clipAngle(90);
      p.fitExtent([[m, m], [w - m, h - m]], { type: "Sphere" });
    } else {
      p = geoEquirectangular();
      const b = this.grid !== undefined ? gridBounds(this.grid) : undefined;
      if (b === undefined || b.global) {
        p.fitExtent([[m, m], [w - m, h - m]], { type: "Sphere" });
      } else {
        const pts: [number, number][] = [];
        for (let k = 0; k <= 8; k++) {
          const lon = b.west + ((b.east - b.west) * k) / 8;
          const lat = b.south + ((b.north - b.south) * k) / 8;
          pts.push([lon, b.south], [lon, b.north], [b.west, lat], [b.east, lat]);
        }
        p.center([(b.west + b.east) / 2, 0]);
        p.fitExtent([[m, m], [w - m, h - m]], { type: "MultiPoint", coordinates: pts });
      }
    }
    const [tx, ty] = p.translate();
    p.scale(p.scale() * this.zoom).translate([
      w / 2 + (tx - w / 2) * this.zoom + this.pan[0],
      h / 2 + (ty - h / 2) * this.zoom + this.pan[1],
    ]);
    return p;
  }

  /** The grid point under a CSS-pixel position of the canvas, if any. */
  lookup(cssX: number, cssY: number): Lookup | undefined {
    if (this.grid === undefined || this.values === undefined) return undefined;
    // The centre of the device pixel under the cursor, as the raster samples it.
    const d = this.dpr();
    const x = Math.floor(cssX * d) + 0.5;
    const y = Math.floor(cssY * d) + 0.5;
    const ll = this.projection.invert?.([x, y]);
    if (ll === undefined || ll === null || !Number.isFinite(ll[0]) || !Number.isFinite(ll[1])) return undefined;
    if (this.kind === "globe" && !this.onGlobe(x, y)) return undefined;
    if (this.kind === "flat" && (Math.abs(ll[1]) > 90 || Math.abs(ll[0]) > 180)) return undefined;
    const idx = nearestIndex(this.grid, ll[1], ll[0]);
    if (idx === undefined) return undefined;
    const ncol = columns(this.grid);
    const p = pointOf(this.grid, idx.i, idx.j);
    return { ...p, i: idx.i, j: idx.j, value: this.values[idx.i * ncol + idx.j]! };
  }

  private onGlobe(x: number, y: number): boolean {
    const [tx, ty] = this.projection.translate();
    const r = this.projection.scale();
    return (x - tx) ** 2 + (y - ty) ** 2 <= r * r;
  }

  render(): void {
    const d = this.dpr();
    const w = Math.max(1, Math.round(this.canvas.clientWidth * d));
    const h = Math.max(1, Math.round(this.canvas.clientHeight * d));
    if (this.canvas.width !== w) this.canvas.width = w;
    if (this.canvas.height !== h) this.canvas.height = h;
    const ctx = this.canvas.getContext("2d");
    if (ctx === null) return;
    this.projection = this.fitted(w, h);
    const img = ctx.createImageData(w, h);
    this.raster(img, w, h);
    ctx.putImageData(img, 0, 0);
    const path = geoPath(this.projection, ctx);
    ctx.lineWidth = d;
    if (this.lines.graticule) {
      ctx.strokeStyle = "rgba(255,255,255,0.18)";
      ctx.beginPath();
      path(geoGraticule10());
      ctx.stroke();
    }
    if (this.land !== undefined && this.lines.coastlines) {
      ctx.strokeStyle = "rgba(20,20,20,0.9)";
      ctx.lineWidth = 1.2 * d;
      ctx.beginPath();
      path(this.land);
      ctx.stroke();
    }
    ctx.strokeStyle = "rgba(255,255,255,0.5)";
    ctx.lineWidth = d;
    ctx.beginPath();
    path({ type: "Sphere" });
    ctx.stroke();
    this.canvas.dataset["coastlines"] = !this.lines.coastlines ? "off" : this.land !== undefined ? "yes" : "no";
    this.onRender?.();
  }

  private raster(img: ImageData, w: number, h: number): void {
    const px = img.data;
    for (let k = 0; k < w * h; k++) {
      px[4 * k] = BACKGROUND[0];
      px[4 * k + 1] = BACKGROUND[1];
      px[4 * k + 2] = BACKGROUND[2];
      px[4 * k + 3] = 255;
    }
    const grid = this.grid;
    const values = this.values;
    const scale = this.scale;
    const inv = this.projection.invert;
    if (grid === undefined || values === undefined || scale === undefined || inv === undefined) return;
    const ncol = columns(grid);
    const table = scale.table;
    const paint = (k: number, idx: { i: number; j: number } | undefined) => {
      if (idx === undefined) return;
      const c = colourIndex(scale, values[idx.i * ncol + idx.j]!);
      if (c < 0) return;
      px[4 * k] = table[3 * c]!;
      px[4 * k + 1] = table[3 * c + 1]!;
      px[4 * k + 2] = table[3 * c + 2]!;
    };
    if (this.kind === "flat" && grid.kind !== "points") {
      // Equirectangular: latitude depends on y only and longitude on x only.
      const rows: (number | undefined)[] = [];
      const cols: (number | undefined)[] = [];
      for (let y = 0; y < h; y++) {
        const ll = inv([w / 2, y + 0.5]);
        rows.push(ll && Math.abs(ll[1]) <= 90 ? ll[1] : undefined);
      }
      for (let x = 0; x < w; x++) {
        const ll = inv([x + 0.5, h / 2]);
        cols.push(ll && Math.abs(ll[0]) <= 180 ? ll[0] : undefined);
      }
      const probeLat = grid.kind === "regular" ? grid.lat0 : grid.lats[0]!;
      const probeLon = grid.kind === "regular" ? grid.lon0 : grid.lons[0]!;
      const ci = cols.map((lon) => (lon === undefined ? undefined : nearestIndex(grid, probeLat, lon)?.j));
      for (let y = 0; y < h; y++) {
        const lat = rows[y];
        if (lat === undefined) continue;
        const i = nearestIndex(grid, lat, probeLon)?.i;
        if (i === undefined) continue;
        for (let x = 0; x < w; x++) {
          const j = ci[x];
          if (j !== undefined) paint(y * w + x, { i, j });
        }
      }
      return;
    }
    const [tx, ty] = this.projection.translate();
    const r2 = this.kind === "globe" ? this.projection.scale() ** 2 : Infinity;
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if ((x + 0.5 - tx) ** 2 + (y + 0.5 - ty) ** 2 > r2) continue;
        const ll = inv([x + 0.5, y + 0.5]);
        if (ll === null || !Number.isFinite(ll[0]) || !Number.isFinite(ll[1]) || Math.abs(ll[1]) > 90 || Math.abs(ll[0]) > 180) continue;
        paint(y * w + x, nearestIndex(grid, ll[1], ll[0]));
      }
    }
  }
}
