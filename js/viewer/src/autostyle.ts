// Styles chosen automatically when a param is first shown (spec 07 H.6 "Auto
// style"): a colour map, a fixed range in the param's native (GRIB) units and
// the units to show, for common surface and upper-air params. Our own table:
// ranges that cover the field almost everywhere on Earth, so that frames and
// files compare at a glance. Params not listed use the data's min/max, keep
// the colour map in use and show their native units.

export interface AutoStyle {
  cmap: string;
  /** The native units the range is in; the range is not applied to a field in other units. */
  units: string;
  /** Fixed range (native units), or none: the data's min/max. */
  range?: [number, number];
  /** Units shown instead of the native ones (the viewer's K → °C, Pa → hPa toggle). */
  display?: string;
}

const TEMPERATURE: AutoStyle = { cmap: "rdylbu", units: "K", range: [233.15, 313.15], display: "°C" };
const FRACTION = (cmap: string): AutoStyle => ({ cmap, units: "(0 - 1)", range: [0, 1] });

const STYLES: Record<string, AutoStyle> = {
  "2t": TEMPERATURE,
  t2m: TEMPERATURE,
  mn2t: TEMPERATURE,
  mx2t: TEMPERATURE,
  "2d": { cmap: "greens", units: "K", range: [233.15, 303.15], display: "°C" },
  sst: { cmap: "turbo", units: "K", range: [271.15, 305.15], display: "°C" },
  msl: { cmap: "viridis", units: "Pa", range: [96000, 104000], display: "hPa" },
  sp: { cmap: "viridis", units: "Pa", range: [50000, 105000], display: "hPa" },
  "10si": { cmap: "plasma", units: "m s**-1", range: [0, 30] },
  ws: { cmap: "plasma", units: "m s**-1", range: [0, 40] },
  cape: { cmap: "ylorrd", units: "J kg**-1", range: [0, 4000] },
  cin: { cmap: "blues", units: "J kg**-1", range: [0, 500] },
  tp: { cmap: "blues", units: "m", range: [0, 0.05] },
  cp: { cmap: "blues", units: "m", range: [0, 0.05] },
  sf: { cmap: "greys", units: "m", range: [0, 0.02] },
  tcc: FRACTION("greys"),
  lcc: FRACTION("greys"),
  mcc: FRACTION("greys"),
  hcc: FRACTION("greys"),
  lsm: FRACTION("greens"),
  ci: FRACTION("blues"),
  siconc: FRACTION("blues"),
  // Geopotential spans very different values from level to level: its range is the data's.
  z: { cmap: "spectral", units: "m**2 s**-2" },
};

export const STYLED_PARAMS = Object.keys(STYLES);

/** The style of a param (its MARS short name), if it has one. */
export function autoStyle(param: string): AutoStyle | undefined {
  return Object.prototype.hasOwnProperty.call(STYLES, param) ? STYLES[param] : undefined;
}

/**
 * The range a field is drawn with when nothing is locked: the style's fixed
 * range when the field is in the style's units (or states none) and its
 * values meet that range at all; else the data's min/max (`data`), so that a
 * field in unexpected units is never drawn in one saturated colour.
 */
export function styledRange(style: AutoStyle | undefined, fieldUnits: string | undefined, data: { min: number; max: number }): { min: number; max: number } {
  const r = style?.range;
  if (r === undefined) return data;
  if (fieldUnits !== undefined && fieldUnits !== style!.units) return data;
  if (data.max < r[0] || data.min > r[1]) return data;
  return { min: r[0], max: r[1] };
}
