// The field browser's index: names, coordinate objects and groups keyed by
// MARS param / level / step, as the reference viewer groups them.

export interface GroupableField {
  msg: number;
  obj: number;
  name: string;
  meta: Record<string, unknown>;
  coordinate: boolean;
}

const COORDINATE_NAMES = new Set([
  "latitude", "lat", "grid_latitude", "longitude", "lon", "grid_longitude",
  "level", "levels", "pressure", "time", "step",
]);

export function isCoordinateName(name: string): boolean {
  return COORDINATE_NAMES.has(name.toLowerCase());
}

function mars(meta: Record<string, unknown>): Record<string, unknown> {
  const m = meta["mars"];
  return typeof m === "object" && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : {};
}

/** `name`, else a string `mars.param`, else `object_<i>`. */
export function objectName(meta: Record<string, unknown>, index: number): string {
  if (typeof meta["name"] === "string") return meta["name"];
  const p = mars(meta)["param"];
  if (typeof p === "string") return p;
  return `object_${index}`;
}

function scalarText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  return undefined;
}

export function paramOf(f: GroupableField): string {
  return scalarText(mars(f.meta)["param"]) ?? f.name;
}

/** The level of an object (`mars.levelist`, else `mars.level`), none for surface fields. */
export function levelOf(f: GroupableField): number | undefined {
  const m = mars(f.meta);
  if (m["levtype"] === "sfc") return undefined;
  const v = m["levelist"] ?? m["level"];
  const n = typeof v === "number" ? v : typeof v === "string" ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

export function stepOf(f: GroupableField): number | undefined {
  const v = mars(f.meta)["step"];
  const n = typeof v === "number" ? v : typeof v === "string" ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

export interface LevelGroup<F> {
  level: number | undefined;
  /** Fields of this level ordered by step (then by position in the file). */
  frames: F[];
}

export interface ParamGroup<F> {
  param: string;
  levtype: string | undefined;
  units: string | undefined;
  levels: LevelGroup<F>[];
  steps: number;
}

/** Groups the non-coordinate fields by param, then level, ordered by step. */
export function groupFields<F extends GroupableField>(fields: readonly F[], filter = ""): ParamGroup<F>[] {
  const needle = filter.trim().toLowerCase();
  const byParam = new Map<string, F[]>();
  for (const f of fields) {
    if (f.coordinate) continue;
    if (needle !== "" && !f.name.toLowerCase().includes(needle) && !JSON.stringify(f.meta).toLowerCase().includes(needle)) {
      continue;
    }
    const p = paramOf(f);
    const list = byParam.get(p) ?? [];
    list.push(f);
    byParam.set(p, list);
  }
  const order = (a: F, b: F) =>
    (stepOf(a) ?? 0) - (stepOf(b) ?? 0) || a.msg - b.msg || a.obj - b.obj;
  return [...byParam.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([param, list]) => {
      const byLevel = new Map<string, F[]>();
      for (const f of list) {
        const key = String(levelOf(f) ?? "");
        byLevel.set(key, [...(byLevel.get(key) ?? []), f]);
      }
      const levels = [...byLevel.entries()]
        .map(([k, fs]) => ({ level: k === "" ? undefined : Number(k), frames: fs.sort(order) }))
        .sort((a, b) => (a.level ?? -Infinity) - (b.level ?? -Infinity));
      const first = list[0]!;
      const m = mars(first.meta);
      const units = scalarText(first.meta["units"]);
      return {
        param,
        levtype: scalarText(m["levtype"]),
        units,
        levels,
        steps: new Set(list.map((f) => stepOf(f))).size,
      };
    });
}

/**
 * The frames of an animation over levels: the fields of `f`'s param at
 * `f`'s step, one per level (the first in step order), from the lowest level
 * value up. Fields without a level are left out.
 */
export function levelFrames<F extends GroupableField>(fields: readonly F[], f: F): F[] {
  const step = stepOf(f);
  const out: F[] = [];
  for (const g of groupFields(fields)) {
    if (g.param !== paramOf(f)) continue;
    for (const l of g.levels) {
      if (l.level === undefined) continue;
      const at = l.frames.find((x) => stepOf(x) === step);
      if (at !== undefined) out.push(at);
    }
  }
  return out;
}
