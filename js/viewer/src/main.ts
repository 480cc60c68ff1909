// The page: opening files (picker, drop, ?url= / URL box), the field
// browser, the map with its colour scale and read-out, the animation bar and
// the keyboard shortcuts. All decoding happens in the worker (client.ts).

import { autoStyle, styledRange, type AutoStyle } from "./autostyle.js";
import { Decoder } from "./client.js";
import { COLOUR_MAPS, colourTable, finiteRange, formatValue, ticks, type ColourScale } from "./colour.js";
import { $ } from "./dom.js";
import { columns, gridFromCoords, gridFromMetadata, pointOf, type Grid } from "./geo.js";
import { groupFields, levelFrames, levelOf, paramOf, stepOf } from "./grouping.js";
import { bindLayout } from "./layout.js";
import { MapView, type ProjectionKind } from "./map.js";
import { MetatensorView, showArray } from "./mtview.js";
import { PaletteEditor, seedStops, stopsTable, type Stop } from "./palette.js";
import type { FieldData, FieldEntry, FileIndex, ReadStats, TgmIndex } from "./protocol.js";
import { LocalFileSource, urlSource, type ViewerSource } from "./source.js";

const decoder = new Decoder();
$("version").textContent = `v${__VIEWER_VERSION__}`;
$("version").title = `@tensogram/tensogram ${__TENSOGRAM_VERSION__} (our C++ core as WebAssembly)`;
const mapView = new MapView($<HTMLCanvasElement>("map"));
const body = document.body;

const ui = {
  status: $("status"),
  error: $("error"),
  browser: $("browser"),
  title: $("file-title"),
  filter: $<HTMLInputElement>("filter"),
  fields: $("fields"),
  metaPanel: $("metadata-panel"),
  meta: $("metadata"),
  toolbar: $("toolbar"),
  welcome: $("welcome"),
  readout: $("readout"),
  colourbar: $("colourbar"),
  barCanvas: $<HTMLCanvasElement>("colourbar-canvas"),
  ticks: $("ticks"),
  units: $("units"),
  anim: $("anim"),
  play: $<HTMLButtonElement>("play"),
  slider: $<HTMLInputElement>("slider"),
  frameLabel: $("frame-label"),
  fps: $<HTMLInputElement>("fps"),
  cmap: $<HTMLSelectElement>("cmap"),
  reverse: $<HTMLInputElement>("reverse"),
  vmin: $<HTMLInputElement>("vmin"),
  vmax: $<HTMLInputElement>("vmax"),
  tensorView: $("tensor-view"),
  map: $<HTMLCanvasElement>("map"),
};

const mtView = new MetatensorView(decoder, ui.fields, ui.tensorView, ui.meta, showError, (b) => setBusy(b));

interface State {
  index: TgmIndex | undefined;
  frames: FieldEntry[];
  frame: number;
  /** What the animation walks when a param has both several steps and several levels. */
  axis: "steps" | "levels";
  /** The frames are the levels of one step (else the steps of one level). */
  overLevels: boolean;
  field: FieldData | undefined;
  grid: Grid | undefined;
  param: string | undefined;
  /** A built-in colour map's name or "custom" (the palette editor's stops). */
  cmap: string;
  reverse: boolean;
  contour: boolean;
  /** The custom palette's stops. */
  stops: Stop[];
  /** The auto style of the param shown (spec 07 H.6); none when the user reset the range. */
  style: AutoStyle | undefined;
  min: number;
  max: number;
  locked: boolean;
  timer: ReturnType<typeof setInterval> | undefined;
  generation: number;
  /** Params whose group is open in the browser. */
  expanded: Set<string>;
  /** The level shown of a tensor with levels packed in its first dimension. */
  packedLevel: number;
  /** Where the drawn plane starts in the decoded tensor (elements). */
  planeOffset: number;
}

const state: State = {
  index: undefined, frames: [], frame: 0, axis: "steps", overLevels: false, field: undefined, grid: undefined, param: undefined,
  cmap: "viridis", reverse: false, contour: false, stops: [], style: undefined, min: 0, max: 1, locked: false, timer: undefined, generation: 0,
  expanded: new Set(),
  packedLevel: 0,
  planeOffset: 0,
};

const cache = new Map<string, FieldData>();
const CACHE_FRAMES = 16;
/** Frames decoded ahead of the animation: 8 from a local file, 3 over the network (spec 07 H.11). */
let framesAhead = 3;

function setBusy(busy: boolean, text = "Decoding…"): void {
  ui.status.textContent = busy ? text : "";
  body.dataset["busy"] = busy ? "yes" : "no";
}

function showError(msg: string): void {
  ui.error.textContent = msg;
  ui.error.hidden = false;
  body.dataset["state"] = "error";
}

/** The open file's unreadable messages: shown until another file is opened, not cleared by a draw. */
let fileWarning = "";

function clearError(): void {
  ui.error.hidden = fileWarning === "";
  ui.error.textContent = fileWarning;
}

// ---------------------------------------------------------------------------
// Opening files.

async function openSource(src: ViewerSource): Promise<void> {
  const generation = ++state.generation;
  stop();
  fileWarning = "";
  clearError();
  body.dataset["state"] = "loading";
  setBusy(true, `Opening ${src.name}…`);
  try {
    const index = await decoder.open(src.input, src.name);
    if (generation !== state.generation) return;
    cache.clear();
    framesAhead = src instanceof LocalFileSource ? 8 : 3;
    countReads(index.format === "tgm" ? index.reads : undefined, true);
    showIndex(index, src.name);
    body.dataset["state"] = "ready";
    sheet.set("half");
  } catch (e) {
    if (generation !== state.generation) return;
    resetView();
    showError(`Cannot open ${src.name}: ${(e as Error).message}`);
  } finally {
    if (generation === state.generation) setBusy(false);
  }
}

function resetView(): void {
  state.index = undefined;
  state.frames = [];
  state.field = undefined;
  ui.browser.hidden = true;
  ui.metaPanel.hidden = true;
  ui.toolbar.hidden = true;
  ui.anim.hidden = true;
  ui.colourbar.hidden = true;
  ui.readout.hidden = true;
  ui.tensorView.hidden = true;
  inspector.box.hidden = true;
  ui.welcome.hidden = false;
  mapView.setField(undefined, undefined, undefined);
}

function showIndex(index: FileIndex, name: string): void {
  resetView();
  ui.welcome.hidden = true;
  ui.browser.hidden = false;
  ui.metaPanel.hidden = false;
  ui.title.textContent = name;
  body.dataset["format"] = index.format;
  if (index.format !== "tgm") {
    ui.filter.hidden = true;
    mtView.show(index);
    return;
  }
  ui.filter.hidden = false;
  ui.filter.value = "";
  state.index = index;
  state.expanded = new Set();
  state.packedLevel = 0;
  state.param = undefined;
  state.locked = false;
  renderBrowser();
  if (index.warnings.length > 0) {
    fileWarning = `Some messages could not be read:\n${index.warnings.join("\n")}`;
    clearError();
  }
  const groups = groupFields(index.fields);
  const first = groups[0]?.levels[0]?.frames[0];
  if (first !== undefined) void select(first);
}

$<HTMLInputElement>("file-input").addEventListener("change", (e) => {
  const f = (e.target as HTMLInputElement).files?.[0];
  if (f !== undefined) void openSource(new LocalFileSource(f));
});

$<HTMLFormElement>("url-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const url = $<HTMLInputElement>("url-input").value.trim();
  if (url !== "") void urlSource(url).then(openSource);
});

const overlay = $("drop-overlay");
let dragDepth = 0;
window.addEventListener("dragenter", (e) => {
  e.preventDefault();
  dragDepth++;
  overlay.hidden = false;
});
window.addEventListener("dragleave", () => {
  if (--dragDepth <= 0) {
    dragDepth = 0;
    overlay.hidden = true;
  }
});
window.addEventListener("dragover", (e) => e.preventDefault());
window.addEventListener("drop", (e) => {
  e.preventDefault();
  dragDepth = 0;
  overlay.hidden = true;
  const f = e.dataTransfer?.files[0];
  if (f !== undefined) void openSource(new LocalFileSource(f));
});

// ---------------------------------------------------------------------------
// Field browser.

function stepText(f: FieldEntry): string {
  const s = stepOf(f);
  return s === undefined ? "" : `T+${s}h`;
}

/** "500 hPa" on pressure levels, "L137" on model levels, else "level n". */
function levelText(f: FieldEntry): string {
  const level = levelOf(f);
  if (level === undefined) return "";
  const mars = f.meta["mars"];
  const levtype = typeof mars === "object" && mars !== null ? (mars as Record<string, unknown>)["levtype"] : undefined;
  return levtype === "pl" ? `${level} hPa` : levtype === "ml" ? `L${level}` : `level ${level}`;
}

/** A frame's label in the animation bar and the inspector: its step, or its level when animating over levels. */
function frameText(f: FieldEntry): string {
  return (state.overLevels ? levelText(f) : stepText(f)) || f.name;
}

function renderBrowser(): void {
  const index = state.index;
  if (index === undefined) return;
  const groups = groupFields(index.fields, ui.filter.value);
  ui.fields.replaceChildren();
  const selected = state.frames[state.frame];
  for (const g of groups) {
    const head = document.createElement("div");
    head.className = "group-head";
    const levels = g.levels.filter((l) => l.level !== undefined).length;
    const sub = [g.levtype, levels > 0 ? `${levels} levels` : "", g.units, g.steps > 1 ? `(${g.steps} steps)` : ""]
      .filter((x) => x !== undefined && x !== "").join(" / ");
    head.innerHTML = "";
    head.append(g.param, " ");
    const s = document.createElement("span");
    s.className = "sub";
    s.textContent = sub;
    head.append(s);
    head.dataset["param"] = g.param;
    const box = document.createElement("div");
    box.hidden = groups.length > 1 && !state.expanded.has(g.param);
    head.addEventListener("click", () => {
      box.hidden = !box.hidden;
      if (box.hidden) state.expanded.delete(g.param);
      else state.expanded.add(g.param);
    });
    for (const l of g.levels) {
      if (l.level !== undefined) {
        const lh = document.createElement("div");
        lh.className = "level-head";
        lh.textContent = g.levtype === "pl" ? `${l.level} hPa` : `level ${l.level}`;
        lh.addEventListener("click", () => void select(l.frames[0]!));
        box.append(lh);
      }
      for (const f of l.frames) {
        const row = document.createElement("div");
        row.className = "row" + (f === selected ? " selected" : "");
        row.dataset["msg"] = String(f.msg);
        row.dataset["obj"] = String(f.obj);
        const a = document.createElement("span");
        a.textContent = stepText(f) || f.name;
        const b = document.createElement("span");
        b.className = "sub";
        b.textContent = `msg ${f.msg} / obj ${f.obj} · ${f.shape.join("×")}`;
        row.append(a, b);
        row.addEventListener("click", () => void select(f));
        box.append(row);
      }
    }
    ui.fields.append(head, box);
  }
}

ui.filter.addEventListener("input", renderBrowser);

/** The frames the animation walks: same param and level, ordered by step. */
function framesOf(f: FieldEntry): FieldEntry[] {
  const index = state.index;
  if (index === undefined) return [f];
  for (const g of groupFields(index.fields)) {
    if (g.param !== paramOf(f)) continue;
    for (const l of g.levels) if (l.level === levelOf(f) && l.frames.includes(f)) return l.frames;
  }
  return [f];
}

const axisSelect = $<HTMLSelectElement>("anim-axis");
axisSelect.addEventListener("change", () => {
  state.axis = axisSelect.value === "levels" ? "levels" : "steps";
  const f = state.frames[state.frame];
  if (f !== undefined) void select(f);
});

async function select(f: FieldEntry): Promise<void> {
  // Steps at this level, or levels at this step (spec: animation over steps/levels).
  const steps = framesOf(f);
  const levels = state.index !== undefined ? levelFrames(state.index.fields, f) : [];
  const both = steps.length > 1 && levels.length > 1;
  const overLevels = levels.length > 1 && (state.axis === "levels" || steps.length <= 1);
  axisSelect.hidden = !both;
  axisSelect.value = overLevels ? "levels" : "steps";
  state.frames = overLevels ? levels : steps;
  state.overLevels = overLevels;
  state.frame = Math.max(0, state.frames.indexOf(f));
  const param = paramOf(f);
  if (param !== state.param) {
    state.param = param;
    state.locked = false;
    applyAutoStyle(param);
  }
  ui.slider.max = String(state.frames.length - 1);
  // Tick marks on the step slider, one per frame, up to 60 frames.
  const n = state.frames.length;
  $("slider-ticks").replaceChildren(...(n <= 60 ? state.frames.map((_, k) => new Option("", String(k))) : []));
  ui.anim.hidden = state.frames.length <= 1;
  if (!state.expanded.has(param)) {
    state.expanded.add(param);
    renderBrowser();
  }
  await showFrame();
}

/**
 * What the worker read from a .tgm file since it was opened (reads, bytes,
 * largest read), on <body data-reads="…">: for diagnostics and the tests.
 */
function countReads(r: ReadStats | undefined, reset: boolean): void {
  const prev = reset ? { reads: 0, bytes: 0, largest: 0 } : (JSON.parse(body.dataset["reads"] ?? "null") as ReadStats | null);
  if (r === undefined || prev === null) {
    if (reset) delete body.dataset["reads"];
    return;
  }
  body.dataset["reads"] = JSON.stringify({
    reads: prev.reads + r.reads,
    bytes: prev.bytes + r.bytes,
    largest: Math.max(prev.largest, r.largest),
  });
}

async function fieldData(f: FieldEntry): Promise<FieldData> {
  const key = `${f.msg}:${f.obj}`;
  const known = cache.get(key);
  if (known !== undefined) {
    cache.delete(key);
    cache.set(key, known);
    return known;
  }
  let p = inflight.get(key);
  if (p === undefined) {
    p = decoder.field(f.msg, f.obj);
    inflight.set(key, p);
  }
  try {
    const d = await p;
    countReads(d.reads, false);
    cache.set(key, d);
    while (cache.size > CACHE_FRAMES) cache.delete(cache.keys().next().value!);
    return d;
  } finally {
    inflight.delete(key);
  }
}

const inflight = new Map<string, Promise<FieldData>>();

let frameRequest = 0;

async function showFrame(): Promise<void> {
  const f = state.frames[state.frame];
  if (f === undefined) return;
  const request = ++frameRequest;
  ui.slider.value = String(state.frame);
  ui.frameLabel.textContent = `${frameText(f)}  ${state.frame + 1} / ${state.frames.length}`;
  body.dataset["frame"] = String(state.frame);
  ui.meta.textContent = JSON.stringify(f.meta, null, 2);
  for (const r of ui.fields.querySelectorAll<HTMLElement>(".row")) {
    r.classList.toggle("selected", r.dataset["msg"] === String(f.msg) && r.dataset["obj"] === String(f.obj));
  }
  body.dataset["rendered"] = "";
  setBusy(true);
  let d: FieldData;
  try {
    d = await fieldData(f);
  } catch (e) {
    if (request !== frameRequest) return;
    setBusy(false);
    stop();
    showError(`Cannot decode ${f.name} (message ${f.msg}, object ${f.obj}): ${(e as Error).message}`);
    return;
  }
  if (request !== frameRequest) return;
  setBusy(false);
  clearError();
  // Levels packed in one tensor [levels, rows, columns]: one level is drawn.
  const packed = d.shape.length === 3 && d.shape[0]! > 1;
  const plane = packed ? d.shape.slice(1) : d.shape;
  const grid = (d.coords !== undefined ? gridFromCoords(d.coords.lat, d.coords.lon, plane) : undefined) ?? gridFromMetadata(f.meta, plane);
  levelSelect.hidden = !(packed && grid !== undefined);
  state.planeOffset = 0;
  if (packed && grid !== undefined) {
    const n = d.shape[0]!;
    const an = f.meta["anemoi"];
    const named = typeof an === "object" && an !== null && Array.isArray((an as Record<string, unknown>)["levels"]) ? ((an as Record<string, unknown>)["levels"] as unknown[]) : undefined;
    const labels = Array.from({ length: n }, (_, k) => (named !== undefined && named.length === n ? String(named[k]) : String(k)));
    if (levelSelect.options.length !== n || [...levelSelect.options].some((o, k) => o.textContent !== `level ${labels[k]}`)) {
      levelSelect.replaceChildren(...labels.map((l, k) => new Option(`level ${l}`, String(k))));
      state.packedLevel = Math.min(state.packedLevel, n - 1);
    }
    levelSelect.value = String(state.packedLevel);
    const size = plane[0]! * plane[1]!;
    state.planeOffset = state.packedLevel * size;
    d = { ...d, shape: plane, values: d.values.subarray(state.packedLevel * size, (state.packedLevel + 1) * size) };
  }
  if (grid === undefined) {
    // Not on a lat/lon grid: shown as a plot, an image or values instead of the map.
    state.field = undefined;
    state.grid = undefined;
    mapView.setField(undefined, undefined, undefined);
    ui.toolbar.hidden = true;
    ui.colourbar.hidden = true;
    showArray(ui.tensorView, `${f.name}: ${f.dtype} [${d.shape.join(" × ")}] (no lat/lon grid: not on the map)`, d.shape, d.values);
    body.dataset["rendered"] = `${f.msg}:${f.obj}`;
    return;
  }
  ui.tensorView.hidden = true;
  const recentre = state.grid === undefined || JSON.stringify(gridKey(state.grid)) !== JSON.stringify(gridKey(grid));
  state.field = d;
  state.grid = grid;
  if (!state.locked) {
    const r = styledRange(state.style, nativeUnits(f), finiteRange(d.values));
    state.min = r.min;
    state.max = r.max;
  }
  ui.toolbar.hidden = false;
  ui.colourbar.hidden = false;
  updateColourControls(f);
  mapView.setField(d.values, grid, scale(), recentre);
  body.dataset["rendered"] = `${f.msg}:${f.obj}`;
  prefetch();
}

/** Decodes the next frames ahead of the animation (kept in the cache). */
function prefetch(): void {
  const ahead = Math.min(framesAhead, state.frames.length - 1, CACHE_FRAMES / 2);
  for (let k = 1; k <= ahead; k++) {
    const f = state.frames[(state.frame + k) % state.frames.length]!;
    if (!cache.has(`${f.msg}:${f.obj}`)) void fieldData(f).catch(() => undefined);
  }
}

function gridKey(g: Grid): unknown {
  if (g.kind === "regular") return g;
  if (g.kind === "points") return { kind: g.kind, n: g.lat.length, a: g.lat[0], b: g.lon[0] };
  return { kind: g.kind, n: g.lats.length, m: g.lons.length, a: g.lats[0], b: g.lons[0] };
}

// ---------------------------------------------------------------------------
// Colour scale.

for (const name of COLOUR_MAPS) {
  const o = document.createElement("option");
  o.value = name;
  o.textContent = name;
  ui.cmap.append(o);
}

{
  const o = document.createElement("option");
  o.value = "custom";
  o.textContent = "custom…";
  ui.cmap.append(o);
}

/** Contour mode's bands (spec 07 H.5): 20, or one per stop of the custom palette. */
const CONTOUR_BANDS = 20;

function scale(): ColourScale {
  if (state.cmap === "custom") {
    const stops = state.reverse ? state.stops.map((s) => ({ t: 1 - s.t, rgb: s.rgb })) : state.stops;
    return { table: stopsTable(stops, state.contour), min: state.min, max: state.max, bands: state.contour ? stops.length : 0 };
  }
  return { table: colourTable(state.cmap, state.reverse), min: state.min, max: state.max, bands: state.contour ? CONTOUR_BANDS : 0 };
}

const palette = new PaletteEditor($("palette-editor"), () => {
  state.stops = palette.stops;
  redraw();
});

function setColourMap(name: string): void {
  if (name === "custom" && state.cmap !== "custom") {
    // Seeded with five colours of the palette in use, as it looks now.
    const seeded = seedStops(colourTable(state.cmap, state.reverse));
    state.reverse = false;
    ui.reverse.checked = false;
    palette.set(seeded);
    state.stops = palette.stops;
  }
  state.cmap = name;
  $("palette-editor").hidden = name !== "custom";
}

/**
 * A new param: its auto style (colour map, fixed range, shown units), or for
 * a param without one the data's range and its native units.
 */
function applyAutoStyle(param: string): void {
  const style = autoStyle(param);
  state.style = style;
  if (style !== undefined && state.cmap !== "custom") setColourMap(style.cmap);
  altUnits.checked = style?.display !== undefined;
  body.dataset["autoStyle"] = style !== undefined ? param : "";
}

// Display units: K ↔ °C and Pa ↔ hPa, for the colour bar, the range boxes,
// the read-out and the inspector (the data keep their native units).
interface UnitView {
  label: string;
  show(v: number): number;
  back(v: number): number;
}
const ALTERNATIVES: Record<string, UnitView> = {
  K: { label: "°C", show: (v) => v - 273.15, back: (v) => v + 273.15 },
  Pa: { label: "hPa", show: (v) => v / 100, back: (v) => v * 100 },
};
const altUnits = $<HTMLInputElement>("alt-units");

function nativeUnits(f: FieldEntry | undefined): string | undefined {
  const u = f?.meta["units"];
  return typeof u === "string" ? u : undefined;
}

/** The units shown and the conversion from the native ones. */
function display(f: FieldEntry | undefined): { units: string | undefined; show(v: number): number; back(v: number): number } {
  const native = nativeUnits(f);
  const alt = native !== undefined ? ALTERNATIVES[native] : undefined;
  if (alt !== undefined && altUnits.checked) return { units: alt.label, show: alt.show, back: alt.back };
  return { units: native, show: (v) => v, back: (v) => v };
}

function updateColourControls(f?: FieldEntry): void {
  const cur0 = f ?? state.frames[state.frame];
  const native = nativeUnits(cur0);
  const alt = native !== undefined ? ALTERNATIVES[native] : undefined;
  $("units-toggle").hidden = alt === undefined;
  $("alt-units-label").textContent = alt?.label ?? "";
  const dsp = display(cur0);
  ui.cmap.value = state.cmap;
  ui.vmin.value = formatValue(dsp.show(state.min));
  ui.vmax.value = formatValue(dsp.show(state.max));
  const s = scale();
  const ctx = ui.barCanvas.getContext("2d")!;
  const img = ctx.createImageData(256, 1);
  const steps = 256;
  for (let x = 0; x < steps; x++) {
    const v = s.min + ((s.max - s.min) * (x + 0.5)) / steps;
    let t = s.max > s.min ? (v - s.min) / (s.max - s.min) : 0.5;
    if (s.bands > 0) t = (Math.min(Math.floor(t * s.bands), s.bands - 1) + 0.5) / s.bands;
    const c = Math.round(t * 255);
    img.data.set([s.table[3 * c]!, s.table[3 * c + 1]!, s.table[3 * c + 2]!, 255], 4 * x);
  }
  ui.barCanvas.width = 256;
  ui.barCanvas.height = 1;
  ctx.putImageData(img, 0, 0);
  ui.ticks.replaceChildren(...ticks(s.min, s.max).map((v) => {
    const e = document.createElement("span");
    e.textContent = formatValue(dsp.show(v));
    return e;
  }));
  if (cur0 !== undefined) ui.units.textContent = dsp.units !== undefined ? `${paramOf(cur0)} (${dsp.units})` : paramOf(cur0);
}

function redraw(): void {
  updateColourControls();
  if (state.field !== undefined && state.grid !== undefined) mapView.setField(state.field.values, state.grid, scale());
}

const levelSelect = $<HTMLSelectElement>("packed-level");
levelSelect.addEventListener("change", () => {
  state.packedLevel = Number(levelSelect.value);
  state.locked = false;
  void showFrame();
});

ui.cmap.addEventListener("change", () => {
  setColourMap(ui.cmap.value);
  redraw();
});
altUnits.addEventListener("change", () => {
  redraw();
  ui.readout.hidden = true;
  const i = inspector.box.dataset["i"];
  const j = inspector.box.dataset["j"];
  if (!inspector.box.hidden && i !== undefined && j !== undefined) {
    const g = state.grid;
    if (g !== undefined) {
      const ll = pointOf(g, Number(i), Number(j));
      void inspect(Number(i), Number(j), ll.lat, ll.lon);
    }
  }
});
ui.reverse.addEventListener("change", () => {
  state.reverse = ui.reverse.checked;
  redraw();
});
for (const input of [ui.vmin, ui.vmax]) {
  input.addEventListener("change", () => {
    const dsp = display(state.frames[state.frame]);
    const a = dsp.back(Number(ui.vmin.value));
    const b = dsp.back(Number(ui.vmax.value));
    if (!Number.isFinite(a) || !Number.isFinite(b)) return;
    state.min = a;
    state.max = b;
    state.locked = true;
    redraw();
  });
}
$("reset-range").addEventListener("click", () => {
  if (state.field === undefined) return;
  const r = finiteRange(state.field.values);
  state.min = r.min;
  state.max = r.max;
  // The data's own range from now on for this param (its auto style's fixed range is dropped).
  state.style = undefined;
  state.locked = false;
  redraw();
});
for (const b of document.querySelectorAll<HTMLButtonElement>("[data-mode]")) {
  b.addEventListener("click", () => {
    state.contour = b.dataset["mode"] === "contour";
    for (const x of document.querySelectorAll("[data-mode]")) x.classList.toggle("active", x === b);
    redraw();
  });
}
for (const b of document.querySelectorAll<HTMLButtonElement>("[data-proj]")) {
  b.addEventListener("click", () => {
    for (const x of document.querySelectorAll("[data-proj]")) x.classList.toggle("active", x === b);
    mapView.setProjection(b.dataset["proj"] as ProjectionKind);
  });
}

// ---------------------------------------------------------------------------
// Cursor read-out.

ui.map.addEventListener("mousemove", (e) => {
  const r = ui.map.getBoundingClientRect();
  const x = e.clientX - r.left;
  const y = e.clientY - r.top;
  ui.readout.dataset["x"] = String(Math.floor(x));
  ui.readout.dataset["y"] = String(Math.floor(y));
  const hit = mapView.lookup(x, y);
  if (hit === undefined) {
    ui.readout.hidden = true;
    return;
  }
  const f = state.frames[state.frame];
  const dsp = display(f);
  const u = dsp.units !== undefined ? ` ${dsp.units}` : "";
  const lat = `${Math.abs(hit.lat).toFixed(2)}°${hit.lat >= 0 ? "N" : "S"}`;
  const lon = `${Math.abs(hit.lon).toFixed(2)}°${hit.lon >= 0 ? "E" : "W"}`;
  ui.readout.textContent = `${lat} ${lon}  ${formatValue(dsp.show(hit.value))}${u}`;
  ui.readout.dataset["value"] = String(hit.value);
  ui.readout.dataset["lat"] = String(hit.lat);
  ui.readout.dataset["lon"] = String(hit.lon);
  ui.readout.dataset["i"] = String(hit.i);
  ui.readout.dataset["j"] = String(hit.j);
  ui.readout.hidden = false;
});
ui.map.addEventListener("mouseleave", () => (ui.readout.hidden = true));

// ---------------------------------------------------------------------------
// Point inspector: a click shows the grid point's value in every frame.

const inspector = { box: $("inspector"), title: $("inspector-title"), chart: $<HTMLCanvasElement>("inspector-chart"), values: $("inspector-values") };
let clickStart: [number, number] | undefined;
let inspectRequest = 0;
ui.map.addEventListener("pointerdown", (e) => (clickStart = [e.clientX, e.clientY]));
ui.map.addEventListener("pointerup", (e) => {
  // A drag (pan, turn) is not a click.
  if (clickStart === undefined || Math.hypot(e.clientX - clickStart[0], e.clientY - clickStart[1]) > 4) return;
  const r = ui.map.getBoundingClientRect();
  const hit = mapView.lookup(e.clientX - r.left, e.clientY - r.top);
  if (hit === undefined || state.grid === undefined) return;
  void inspect(hit.i, hit.j, hit.lat, hit.lon);
});
$("inspector-close").addEventListener("click", () => (inspector.box.hidden = true));

/** The level in the inspector's title, or the number of levels when the animation walks them. */
function levelLabel(f: FieldEntry): string {
  if (state.overLevels) return ` on ${state.frames.length} levels`;
  const t = levelText(f);
  return t === "" ? "" : ` at ${t}`;
}

// A press anywhere outside the inspector closes it (a click on the map then inspects the new point).
window.addEventListener("mousedown", (e) => {
  if (!inspector.box.hidden && !inspector.box.contains(e.target as Node)) inspector.box.hidden = true;
});

async function inspect(i: number, j: number, lat: number, lon: number): Promise<void> {
  const grid = state.grid;
  const f = state.frames[state.frame];
  if (grid === undefined || f === undefined) return;
  const request = ++inspectRequest;
  const ncol = columns(grid);
  const frames = state.frames;
  const where = `${Math.abs(lat).toFixed(2)}°${lat >= 0 ? "N" : "S"} ${Math.abs(lon).toFixed(2)}°${lon >= 0 ? "E" : "W"}`;
  inspector.title.textContent = `${paramOf(f)}${levelLabel(f)}, ${where}`;
  inspector.values.textContent = "decoding…";
  inspector.box.hidden = false;
  inspector.box.dataset["i"] = String(i);
  inspector.box.dataset["j"] = String(j);
  let values: Float64Array;
  try {
    values = await decoder.point(frames.map((x) => ({ msg: x.msg, obj: x.obj })), state.planeOffset + i * ncol + j);
  } catch (e) {
    if (request === inspectRequest) inspector.values.textContent = (e as Error).message;
    return;
  }
  if (request !== inspectRequest) return;
  inspector.box.dataset["values"] = Array.from(values).join(",");
  const dsp = display(f);
  const u = dsp.units !== undefined ? ` ${dsp.units}` : "";
  const shown = values.map((v) => dsp.show(v));
  drawSeries(inspector.chart, shown, state.frame);
  if (shown.length <= 8) {
    inspector.values.textContent = frames.map((x, k) => `${frameText(x) || k}: ${formatValue(shown[k]!)}${u}`).join("  ·  ");
  } else {
    const r = finiteRange(shown);
    let sum = 0;
    let n = 0;
    for (const v of shown) if (!Number.isNaN(v)) (sum += v), n++;
    const mean = sum / Math.max(1, n);
    let sq = 0;
    for (const v of shown) if (!Number.isNaN(v)) sq += (v - mean) ** 2;
    const std = Math.sqrt(sq / Math.max(1, n));
    const first = frameText(frames[0]!);
    const last = frameText(frames[frames.length - 1]!);
    inspector.values.textContent = `${shown.length} frames ${first}…${last}: min ${formatValue(r.min)}, max ${formatValue(r.max)}, mean ${formatValue(mean)}, std ${formatValue(std)}${u}`;
  }
}

function drawSeries(c: HTMLCanvasElement, v: Float64Array, current: number): void {
  const ctx = c.getContext("2d");
  if (ctx === null) return;
  const w = c.width;
  const h = c.height;
  ctx.clearRect(0, 0, w, h);
  const r = finiteRange(v);
  const span = r.max > r.min ? r.max - r.min : 1;
  const x = (k: number) => (v.length > 1 ? 8 + ((w - 16) * k) / (v.length - 1) : w / 2);
  const y = (val: number) => h - 8 - ((h - 16) * (val - r.min)) / span;
  ctx.strokeStyle = "#5aa9ff";
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  v.forEach((val, k) => (k === 0 ? ctx.moveTo(x(k), y(val)) : ctx.lineTo(x(k), y(val))));
  ctx.stroke();
  ctx.fillStyle = "#fff";
  v.forEach((val, k) => {
    ctx.beginPath();
    ctx.arc(x(k), y(val), k === current ? 4 : 2, 0, 2 * Math.PI);
    ctx.fill();
  });
}

// ---------------------------------------------------------------------------
// Animation and keys.

function goTo(k: number): void {
  const n = state.frames.length;
  if (n === 0) return;
  state.frame = Math.max(0, Math.min(n - 1, k));
  void showFrame();
}

function stop(): void {
  if (state.timer !== undefined) clearInterval(state.timer);
  state.timer = undefined;
  ui.play.textContent = "▶";
  ui.play.setAttribute("aria-label", "Play");
  body.dataset["playing"] = "no";
}

function play(): void {
  if (state.frames.length <= 1) return;
  stop();
  ui.play.textContent = "⏸";
  ui.play.setAttribute("aria-label", "Pause");
  body.dataset["playing"] = "yes";
  state.timer = setInterval(() => goTo((state.frame + 1) % state.frames.length), 1000 / Number(ui.fps.value));
}

ui.play.addEventListener("click", () => (state.timer === undefined ? play() : stop()));
ui.fps.addEventListener("input", () => {
  $("fps-label").textContent = ui.fps.value;
  if (state.timer !== undefined) play();
});
ui.slider.addEventListener("input", () => {
  stop();
  goTo(Number(ui.slider.value));
});

window.addEventListener("keydown", (e) => {
  const t = e.target as HTMLElement | null;
  if (t !== null && ["INPUT", "SELECT", "TEXTAREA"].includes(t.tagName)) return;
  if (state.frames.length <= 1) return;
  if (e.key === " ") {
    e.preventDefault();
    if (state.timer === undefined) play();
    else stop();
  } else if (e.key === "ArrowLeft") {
    e.preventDefault();
    stop();
    goTo(state.frame - 1);
  } else if (e.key === "ArrowRight") {
    e.preventDefault();
    stop();
    goTo(state.frame + 1);
  }
});

// ---------------------------------------------------------------------------
// The page's frame: sidebar width, the phone's bottom sheet, colour controls, display options.

const { sheet } = bindLayout(mapView);

// ---------------------------------------------------------------------------
// ?url= opens a file on load (how `make viewer FILE=…` hands a file over).

body.dataset["state"] = "empty";
const initial = new URLSearchParams(location.search).get("url");
if (initial !== null && initial !== "") {
  $<HTMLInputElement>("url-input").value = initial;
  void urlSource(initial).then(openSource);
}
